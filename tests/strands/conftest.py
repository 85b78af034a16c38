"""Fixtures of the Strands provider tests: the PostgreSQL server of the durable tests, and how a
Strands program is run in a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.durable.store import RunStore

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


def url_of(conninfo: str) -> str:
    """The ``postgresql://`` URL of a libpq conninfo string (``host=... dbname=...``, what
    ``pg_conninfo`` gives): the form ``--store`` and ``TetherSessionManager(store=...)`` read as
    PostgreSQL (a conninfo string is a file name to them)."""
    from urllib.parse import quote, urlencode

    from psycopg.conninfo import conninfo_to_dict

    parts = {key: str(value) for key, value in conninfo_to_dict(conninfo).items()}
    user, dbname = parts.pop("user", ""), parts.pop("dbname", "")
    return f"postgresql://{quote(user)}@/{quote(dbname)}?{urlencode(parts)}"


@pytest.fixture
def pg_url(pg_conninfo: str) -> str:
    """The test's PostgreSQL database as the ``postgresql://`` URL a program's ``store=`` takes."""
    return url_of(pg_conninfo)


def open_store(spec: str) -> RunStore:
    assert "=" not in spec or spec.startswith("postgresql://"), f"{spec!r} is a conninfo string: pass pg_url(...)"
    if spec.startswith("postgresql://"):
        from tether.durable.postgres import PostgresStore

        return PostgresStore(spec)
    return SQLiteStore(spec)


def kill_at(point: str, argv: list[str], env: dict[str, str], ready: Path) -> None:
    """Start ``programs/argv[0] argv[1:]``, wait until it reaches ``point``, SIGKILL it."""
    proc = subprocess.Popen(
        [sys.executable, str(PROGRAMS / argv[0]), *argv[1:]],
        env={**env, "TRIP_PAUSE_AT": point, "TRIP_READY": str(ready)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the program ended before {point}: {proc.stderr.read().decode()[-3000:] if proc.stderr else ''}")
        assert time.monotonic() < deadline, f"the program never reached {point}"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    if proc.stderr is not None:
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL


def answered(messages: list[Any]) -> set[str]:
    """The tool calls whose results are in the stored conversation."""
    return {block["toolResult"]["toolUseId"] for message in messages for block in message["content"] if "toolResult" in block}


def log_of(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


__all__ = ["PROGRAMS", "answered", "kill_at", "log_of", "open_store", "pg_conninfo", "pg_server", "pg_url", "program_env", "run_program"]
