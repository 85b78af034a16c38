"""The commands the CLI prints start ``tether`` the way the user's shell can: ``tether`` when
``PATH`` finds this very command, else its path (``.venv/bin/tether``) or ``PYTHON -m tether``."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import tether
from tether.cli.program import how_to_run

from .conftest import Outcome, calc_call

MAIN = str(Path(tether.__file__).with_name("__main__.py"))
VENV_SCRIPT = Path(sys.executable).with_name("tether")  # the console script of the environment running the tests


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_console_script_that_path_finds_is_printed_as_tether(tmp_path: Path) -> None:
    script = executable(tmp_path / "bin" / "tether")
    assert how_to_run(str(script), sys.executable, str(script.parent)) == ["tether"]


def test_a_console_script_off_path_is_printed_by_its_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = executable(tmp_path / ".venv" / "bin" / "tether")
    monkeypatch.chdir(tmp_path)
    assert how_to_run(".venv/bin/tether", sys.executable, "/usr/bin:/bin") == [str(script)]
    other = executable(tmp_path / "elsewhere" / "tether")  # another installation on PATH is not this one
    assert how_to_run(".venv/bin/tether", sys.executable, str(other.parent)) == [str(script)]


def test_python_dash_m_is_printed_with_its_interpreter(tmp_path: Path) -> None:
    python = tmp_path / "env" / "bin" / "python"
    assert how_to_run(MAIN, str(python), "/usr/bin:/bin") == [str(python), "-m", "tether"]
    ours = executable(python.with_name("tether"))  # this environment's console script is on PATH: plain tether works
    assert how_to_run(MAIN, str(python), str(ours.parent)) == ["tether"]
    other = executable(tmp_path / "other" / "tether")
    assert how_to_run(MAIN, str(python), str(other.parent)) == [str(python), "-m", "tether"]


def test_called_from_python_it_is_tether(tmp_path: Path) -> None:
    assert how_to_run("/usr/lib/python3/site-packages/pytest/__main__.py", sys.executable, "/usr/bin") == ["tether"]
    assert how_to_run("", sys.executable, None) == ["tether"]


@pytest.mark.parametrize("on_path", [False, True])
def test_the_printed_command_runs_as_printed(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], on_path: bool
) -> None:
    """``.venv/bin/tether fork`` prints a resume command; pasted as it is into a shell (whose PATH
    holds the venv or not), it resumes the fork."""
    assert cli("run", "What is 12 * 34 + 5?", "--model", script(calc_call(), "It is 413."), "--run-id", "r").code == 0
    path = f"{VENV_SCRIPT.parent}:/usr/bin:/bin" if on_path else "/usr/bin:/bin"
    env = {**os.environ, "TETHER_HOME": str(home), "PATH": path, "COLUMNS": "500"}
    forked = subprocess.run([str(VENV_SCRIPT), "fork", "r", "--at", "3"], capture_output=True, text=True, env=env, timeout=60)
    assert forked.returncode == 0, forked.stderr
    (line,) = [line for line in forked.stdout.splitlines() if line.startswith("continue it with: ")]
    command = shlex.split(line.removeprefix("continue it with: "))
    assert command[:3] == (["tether"] if on_path else [str(VENV_SCRIPT)]) + ["resume", "r.fork-1"]
    resumed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=Path.cwd())
    assert resumed.returncode == 0, resumed.stderr
    assert "It is 413." in resumed.stdout
