"""Shared pieces of the CLI tests: a temporary TETHER_HOME, JSON scripts, in-process runs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tether.cli import main
from tether.cli.app import build_parser
from tether.durable import SQLiteStore


@dataclass
class Outcome:
    """What one ``tether`` invocation produced."""

    code: int
    out: str
    err: str


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh TETHER_HOME (the default store is ``home/runs.db``)."""
    path = tmp_path / "home"
    monkeypatch.setenv("TETHER_HOME", str(path))
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run ``main(args)`` in-process and capture what it printed."""

    def run(*args: str) -> Outcome:
        code = main(list(args))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a ScriptFileModel script; returns the ``scripted:PATH`` model spec."""
    counter = iter(range(1000))

    def write(*replies: Any) -> str:
        path = tmp_path / f"script-{next(counter)}.json"
        path.write_text(json.dumps(list(replies)), encoding="utf-8")
        return f"scripted:{path}"

    return write


def calc_call(expression: str = "12 * 34 + 5", tool_use_id: str = "c1") -> dict[str, Any]:
    """An assistant message calling the demo calculator."""
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": tool_use_id, "name": "calculator", "input": {"expression": expression}}}],
    }


def json_fields(command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The field names ``tether COMMAND --help`` says its ``--json`` prints (after "with", before "(")."""
    monkeypatch.setenv("COLUMNS", "80")  # the help is wrapped: the list may span lines
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    flat = " ".join(capsys.readouterr().out.split())
    match = re.search(r"--json print one JSON (?:object|array)(?:, each run an object)? with ([a-z_, ]+?) \(", flat)
    assert match is not None, flat
    return [name.strip() for name in match.group(1).split(",")]


def store_of(home: Path) -> SQLiteStore:
    return SQLiteStore(home / "runs.db")


def one_line_error(outcome: Outcome, *needles: str) -> None:
    """The command failed with exactly one readable line on stderr naming ``needles``."""
    assert outcome.code != 0
    lines = outcome.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), outcome.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert "Traceback" not in outcome.err


def tether_process(
    *args: str, home: Path, module: bool = True, extra_env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.Popen[str]:
    """Start ``python -m tether ARGS`` (or the ``tether`` console script) with TETHER_HOME=home.

    ``extra_env`` is added to the environment; a ``HOME`` in it also drops TETHER_HOME (the
    default store is then the user data directory) and COLUMNS (no terminal width).
    """
    env = {**os.environ, "TETHER_HOME": str(home), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    env.pop("TETHER_MODEL", None)
    if extra_env and "HOME" in extra_env:
        env.pop("TETHER_HOME")
        env.pop("COLUMNS")
    env.update(extra_env or {})
    command = [sys.executable, "-m", "tether"] if module else [str(Path(sys.executable).with_name("tether"))]
    return subprocess.Popen(
        [*command, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_default_sigint,  # a shell's background job would otherwise ignore Ctrl-C
        **kwargs,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
