"""``tether.home``: where runs go without a store, for the SDK and the CLI alike."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tether import Agent, ScriptedModel
from tether.home import default_store_path, tether_home


def test_tether_home_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "h"))
    assert tether_home() == tmp_path / "h" and default_store_path() == (tmp_path / "h" / "runs.db").resolve()
    monkeypatch.setenv("TETHER_HOME", "~/somewhere")
    assert tether_home() == Path.home() / "somewhere"


def test_without_tether_home_the_user_data_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    from platformdirs import user_data_path

    monkeypatch.delenv("TETHER_HOME")
    assert tether_home() == user_data_path("tether", appauthor=False)
    assert default_store_path().is_absolute() and default_store_path().name == "runs.db"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME names the data directory on Linux only")
def test_the_sdk_default_store_is_the_user_data_directory_not_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    Agent(model=ScriptedModel(["hello"]))("hi", run_id="sdk")
    assert (tmp_path / "data" / "tether" / "runs.db").exists()
    assert not any((tmp_path / "cwd").iterdir())  # no ./.tether
