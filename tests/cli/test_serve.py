"""``tether serve``: bad flags are one clear error before anything binds or is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.cli import main


def test_a_non_loopback_host_needs_a_token(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_SERVE_TOKEN", raising=False)
    store = tmp_path / "runs.db"
    assert main(["--store", str(store), "serve", "x:Y", "--host", "0.0.0.0"]) == 1
    assert "--host '0.0.0.0' is not a loopback address: pass --token" in capsys.readouterr().err
    assert not store.exists()


def test_bad_flags_and_registries_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = str(tmp_path / "runs.db")
    assert main(["--store", store, "serve", "x:Y", "--port", "99999"]) == 2
    assert "--port 99999 is not a port number" in capsys.readouterr().err
    assert main(["--store", store, "serve", "nocolon"]) == 1
    assert "'nocolon' is not MODULE:ATTR" in capsys.readouterr().err
    assert main(["--store", store, "serve", "no_such_module_here:AGENTS"]) == 1
    assert "cannot import 'no_such_module_here'" in capsys.readouterr().err
    (tmp_path / "regmod.py").write_text("AGENTS = {'bad name': print}\nEMPTY = {}\nLIST = [1]\n")
    assert main(["--store", store, "serve", "regmod:AGENTS"]) == 1
    assert "agent name 'bad name' is invalid" in capsys.readouterr().err
    assert main(["--store", store, "serve", "regmod:EMPTY"]) == 1
    assert "is empty" in capsys.readouterr().err
    assert main(["--store", store, "serve", "regmod:LIST"]) == 1
    assert "must be a dict of agent names" in capsys.readouterr().err
    assert main(["--store", store, "serve", "regmod:MISSING"]) == 1
    assert "has no attribute 'MISSING'" in capsys.readouterr().err


def test_the_hosts_a_server_answers_to_by_default() -> None:
    from tether.cli.serve import default_hosts

    assert "localhost" in default_hosts("127.0.0.1") and "*" not in default_hosts("127.0.0.1")
    assert default_hosts("0.0.0.0") == ["*"]  # a token is required there
    assert default_hosts("10.0.0.5") == ["10.0.0.5"]
