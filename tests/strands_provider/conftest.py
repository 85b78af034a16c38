"""Fixtures of the Strands provider tests: the PostgreSQL server of the durable tests, and how a
Strands program is run in a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..durable.conftest import pg_conninfo, pg_server

PROGRAMS = Path(__file__).resolve().parent / "programs"
SRC = Path(__file__).resolve().parents[2] / "src"


def program_env(**extra: str) -> dict[str, str]:
    """The environment of a program run: this checkout's source first, no stray Tether home."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(PROGRAMS), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def run_program(name: str, *args: str, env: dict[str, str], timeout: float = 120) -> str:
    """Run ``programs/NAME`` to completion; its stdout (a failure shows its stderr)."""
    done = subprocess.run([sys.executable, str(PROGRAMS / name), *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{name} {args} failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return done.stdout


__all__ = ["PROGRAMS", "pg_conninfo", "pg_server", "program_env", "run_program"]
