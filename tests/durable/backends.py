"""Raw access to each store's storage, for the encryption and redaction tests.

A :class:`Backend` makes stores of one kind over the same storage (a memory dict, a SQLite
file, a PostgreSQL database), and reads what is really stored: the raw row texts of a run and
every byte of the storage (the SQLite file and its WAL; the PostgreSQL cluster's data files
and WAL after a CHECKPOINT).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import MemoryStore, RunStore, SQLiteStore

KINDS = ["memory", "sqlite", "postgres"]


class Backend:
    """Stores of one kind sharing one storage."""

    def __init__(self, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.path = tmp_path / "runs.db"
        self.made: list[RunStore] = []
        self.conninfo = ""
        self.data_dir: Path | None = None
        if kind == "postgres":
            self.conninfo = request.getfixturevalue("pg_conninfo")
            self.data_dir = request.getfixturevalue("pg_server").data

    def make(self, **options: Any) -> RunStore:
        """A new store instance over this backend's storage."""
        store: RunStore
        if self.kind == "memory":
            store = MemoryStore(**options)
            if self.made:
                store._runs = self.made[0]._runs  # type: ignore[attr-defined]
        elif self.kind == "sqlite":
            store = SQLiteStore(self.path, **options)
        else:
            from tether.durable.postgres import PostgresStore

            store = PostgresStore(self.conninfo, **options)
        self.made.append(store)
        return store

    def rows(self, run_id: str) -> list[str]:
        """Every stored row text of ``run_id``: head, messages, results, steps."""
        if self.kind == "memory":
            held = self.made[0]._runs[run_id]  # type: ignore[attr-defined]
            return [held.head, *held.messages, *held.results.values(), *held.steps.values()]
        queries = ["SELECT head FROM {p}runs", "SELECT body FROM {p}messages", "SELECT body FROM {p}results", "SELECT body FROM {p}steps"]
        if self.kind == "sqlite":
            with sqlite3.connect(self.path) as conn:
                return [row[0] for q in queries for row in conn.execute(q.format(p="") + " WHERE run_id = ?", (run_id,))]
        import psycopg

        with psycopg.connect(self.conninfo) as pg:
            return [row[0] for q in queries for row in pg.execute(q.format(p="tether_") + " WHERE run_id = %s", (run_id,))]

    def raw_bytes(self) -> bytes:
        """All bytes the storage holds (not through the store's decoding)."""
        if self.kind == "memory":
            return "".join(text for run_id in self.made[0]._runs for text in self.rows(run_id)).encode()  # type: ignore[attr-defined]
        if self.kind == "sqlite":
            return b"".join(p.read_bytes() for p in sorted(self.path.parent.glob(f"{self.path.name}*")) if p.is_file())
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as pg:
            pg.execute("CHECKPOINT")
        assert self.data_dir is not None
        return b"".join(p.read_bytes() for p in _files(self.data_dir))

    def close(self) -> None:
        for store in self.made:
            store.close()


def _files(root: Path) -> Iterator[Path]:
    for sub in ("base", "global", "pg_wal"):
        for path in (root / sub).rglob("*"):
            if path.is_file():
                yield path


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each store kind, with raw access to what it stores."""
    made = Backend(request.param, tmp_path, request)
    yield made
    made.close()
