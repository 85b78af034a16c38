"""Fixtures of the durable tests: every RunStore implementation, and the --kills option."""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.sqlite import SPAN

from .pg import PgServer, PgUnavailable


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--kills", type=int, default=None, help="SIGKILLs in the crash-torture test (default 50)")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throwaway PostgreSQL cluster for the session (skipped locally when PostgreSQL or
    psycopg is missing; under CI=true that fails instead)."""
    try:
        import psycopg  # noqa: F401

        server = PgServer().start()
    except (ImportError, PgUnavailable) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required under CI (apt-get install -y postgresql; pip install 'tether[postgres]'): {exc}")
        pytest.skip(f"no PostgreSQL here: {exc}")
    yield server
    server.stop()


_databases = itertools.count()


@pytest.fixture
def pg_conninfo(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database on the session's server, dropped after the test."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(pg_server.conninfo(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield pg_server.conninfo(name)
    with psycopg.connect(pg_server.conninfo(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """Each store implementation."""
    made: RunStore
    if request.param == "postgres":
        from tether.durable.postgres import PostgresStore

        made = PostgresStore(request.getfixturevalue("pg_conninfo"))
    else:
        made = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "runs.db")
    yield made
    made.close()


def corrupt_message(store: RunStore, run_id: str, seq: int, text: str) -> None:
    """Overwrite one stored message row with ``text`` (behind the store's back)."""
    if isinstance(store, MemoryStore):
        store.corrupt_for_test(run_id, seq, text)
    elif type(store).__name__ == "PostgresStore":
        import psycopg

        with psycopg.connect(store.conninfo, autocommit=True) as conn:  # type: ignore[attr-defined]
            conn.execute("UPDATE tether_messages SET body = %s WHERE run_id = %s AND seq = %s", (text, run_id, seq))
    else:
        assert isinstance(store, SQLiteStore)
        with sqlite3.connect(store.path) as conn:
            key = f"(SELECT num FROM runs WHERE run_id = ?) * {SPAN} + ?"  # messages are keyed by run number and seq
            conn.execute(f"UPDATE messages SET body = ? WHERE k = {key}", (text, run_id, seq))


Corrupt = Callable[[RunStore, str, int, str], None]
