"""``tether crashtest``: JSON report, exit codes, plain progress lines in a pipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.cli import main


def test_json_report_of_a_sound_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crashtest", "tests.testing.agents:sound", "go", "--points", "6", "--races", "1", "--json", "--workdir", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["ok"] is True and data["points"] == 6 and data["races"] == 1 and data["writes"] >= 9
    assert data["failures"] == [] and data["store"] == "sqlite"


def test_failures_exit_1_with_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["crashtest", "tests.testing.agents:charging", "go", "--points", "12", "--races", "0", "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "[12/12]" in out  # plain progress lines: stdout is not a terminal
    assert "FAIL" in out and "charge_card" in out and "crash points tested" in out
    assert f"files kept in {tmp_path.resolve()}" in out  # where the stores and exports of the failures are


def test_json_failures_name_the_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["crashtest", "tests.testing.agents:charging", "go", "--points", "12", "--races", "0", "--json", "--workdir", str(tmp_path)]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["ok"] is False
    assert all("charge_card" in f["reason"] for f in data["failures"]) and data["failures"]


def test_bad_factory_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crashtest", "nowhere_module:make", "go", "--workdir", str(tmp_path)]) == 1
    assert "reference run" in capsys.readouterr().err
