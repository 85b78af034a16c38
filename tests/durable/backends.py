"""Raw access to each store's storage, for the encryption and redaction tests.

A :class:`Backend` makes stores of one kind over the same storage (a memory dict, a SQLite
file, a PostgreSQL database), and reads what is really stored: the raw row texts of a run and
every byte of the storage (the SQLite file and its WAL; the PostgreSQL cluster's data files
and WAL after a CHECKPOINT).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.codec import is_zipped, unzip_step
from tether.durable.sqlite import SPAN

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
        """Every stored row text of ``run_id``: head, messages, results, steps, blobs (compressed
        step rows inflated, so that a test can look for plaintext in them)."""
        return [_plain(row) for row in self._rows(run_id)]

    def _rows(self, run_id: str) -> list[Any]:
        if self.kind == "memory":
            held = self.made[0]._runs[run_id]  # type: ignore[attr-defined]
            return [held.head, *held.messages, *held.results.values(), *held.steps.values(), *held.blobs.values()]
        queries = [
            "SELECT head FROM {p}runs",
            "SELECT body FROM {p}messages",
            "SELECT body FROM {p}results",
            "SELECT body FROM {p}steps",
            "SELECT body FROM {p}blobs",
        ]
        if self.kind == "sqlite":
            with contextlib.closing(sqlite3.connect(self.path)) as conn:
                out = []
                for q in queries:
                    keyed = "messages" in q or "steps" in q
                    where = f" WHERE {_KEY_RANGE}" if keyed else " WHERE run_id = ?"
                    out += [row[0] for row in conn.execute(q.format(p="") + where, (run_id, run_id) if keyed else (run_id,))]
                return out
        import psycopg

        with psycopg.connect(self.conninfo) as pg:
            return [row[0] for q in queries for row in pg.execute(q.format(p="tether_") + " WHERE run_id = %s", (run_id,))]

    def raw_get(self, table: str, run_id: str, key: Any = None) -> str:
        """One stored row text: ``table`` is ``head`` (no key), ``messages`` (seq), ``results``
        (``(cycle, toolUseId)``) or ``steps`` (number)."""
        if self.kind == "memory":
            held = self.made[0]._runs[run_id]  # type: ignore[attr-defined]
            return _plain(held.head if table == "head" else getattr(held, table)[key])
        if table == "head" and self.kind == "postgres":  # the head as the store reads it: its base and delta merged
            from tether.durable.codec import merge_head_delta

            head, delta = self._sql("SELECT head, delta FROM {p}runs WHERE run_id = ?", (run_id,), fetch=True)[0]
            return _plain(merge_head_delta(run_id, head, delta))
        sql, params = _select(table, run_id, key, self.kind)
        return _plain(self._sql(sql, params, fetch=True)[0][0])

    def raw_set(self, table: str, run_id: str, key: Any, text: str) -> None:
        """Write one row text behind the store's back (inserting it if it is not there)."""
        if self.kind == "memory":
            runs = self.made[0]._runs  # type: ignore[attr-defined]
            if run_id not in runs:
                runs[run_id] = type(next(iter(runs.values())))()
            held = runs[run_id]
            if table == "head":
                held.head = text
            elif table == "messages":
                held.messages.extend([""] * (key + 1 - len(held.messages)))
                held.messages[key] = text
            else:
                getattr(held, table)[key] = text
            return
        if self.kind == "sqlite" and table != "results":
            if table == "head":
                sql = (
                    "INSERT INTO runs (run_id, head, num) VALUES (?, ?, (SELECT coalesce(max(num), 0) + 1 FROM runs))"
                    " ON CONFLICT (run_id) DO UPDATE SET head = excluded.head"
                )
                self._sql(sql, (run_id, text))
            else:
                sql = f"INSERT INTO {table} (k, body) VALUES ({_RUN_BASE} + ?, ?) ON CONFLICT (k) DO UPDATE SET body = excluded.body"
                self._sql(sql, (run_id, key, text))
            return
        columns = {"head": ("runs", ("run_id",), "head"), "messages": ("messages", ("run_id", "seq"), "body")}
        columns["results"] = ("results", ("run_id", "cycle", "tool_use_id"), "body")
        columns["steps"] = ("steps", ("run_id", "step"), "body")
        name, keys, body = columns[table]
        values = (run_id, *(() if key is None else key if isinstance(key, tuple) else (key,)), text)
        sql = (
            f"INSERT INTO {{p}}{name} ({', '.join(keys)}, {body}) VALUES ({', '.join('?' * len(values))})"
            f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {body} = excluded.{body}"
        )
        self._sql(sql, values)
        if table == "head" and self.kind == "postgres":  # the text is the whole head: no delta applies to it
            self._sql("UPDATE {p}runs SET delta = NULL WHERE run_id = ?", (run_id,))

    def clone(self, run_id: str, new_id: str) -> None:
        """Copy every row of ``run_id`` under ``new_id``, byte for byte (as raw SQL would)."""
        if self.kind == "memory":
            import copy

            runs = self.made[0]._runs  # type: ignore[attr-defined]
            runs[new_id] = copy.deepcopy(runs[run_id])
            return
        if self.kind == "sqlite":
            self._sql(
                "INSERT INTO runs (run_id, head, num) SELECT ?, head, (SELECT max(num) + 1 FROM runs) FROM runs WHERE run_id = ?",
                (new_id, run_id),
            )
            for name in ("messages", "steps"):
                shift = f"{_RUN_BASE.replace('?', ':new')} - {_RUN_BASE.replace('?', ':old')}"
                sql = f"INSERT INTO {name} (k, body) SELECT k + {shift}, body FROM {name} WHERE {_KEY_RANGE.replace('?', ':old')}"
                with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
                    conn.execute(sql, {"new": new_id, "old": run_id})
            tables = {"results": "cycle, tool_use_id, body", "blobs": "id, body"}
        else:
            tables = {
                "runs": "head, delta",  # a PostgreSQL head is its base and the delta from it
                "messages": "seq, body",
                "results": "cycle, tool_use_id, body",
                "steps": "step, body",
                "blobs": "id, body",
            }
        for name, columns in tables.items():
            sql = f"INSERT INTO {{p}}{name} (run_id, {columns}) SELECT ?, {columns} FROM {{p}}{name} WHERE run_id = ?"
            self._sql(sql, (new_id, run_id))

    def _sql(self, sql: str, params: tuple[Any, ...], fetch: bool = False) -> list[Any]:
        if self.kind == "sqlite":
            with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
                return conn.execute(sql.format(p=""), params).fetchall() if fetch else [conn.execute(sql.format(p=""), params)]
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as pg:
            cursor = pg.execute(sql.format(p="tether_").replace("?", "%s"), params)
            return cursor.fetchall() if fetch else []

    def raw_bytes(self) -> bytes:
        """All bytes the storage holds (not through the store's decoding)."""
        if self.kind == "memory":
            return "".join(text for run_id in self.made[0]._runs for text in self.rows(run_id)).encode()  # type: ignore[attr-defined]
        if self.kind == "sqlite":
            files = b"".join(p.read_bytes() for p in sorted(self.path.parent.glob(f"{self.path.name}*")) if p.is_file())
            return files + self._inflated()
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as pg:
            pg.execute("CHECKPOINT")
        assert self.data_dir is not None
        return b"".join(p.read_bytes() for p in _files(self.data_dir)) + self._inflated()

    def _inflated(self) -> bytes:
        """The compressed step rows of every run, inflated: the file bytes hold them deflated,
        where a plaintext search would not see what they hold."""
        rows = self._sql("SELECT body FROM {p}steps", (), fetch=True)
        return "".join(unzip_step(row[0]) for row in rows if is_zipped(row[0])).encode()

    def close(self) -> None:
        for store in self.made:
            store.close()


_RUN_BASE = f"(SELECT num FROM runs WHERE run_id = ?) * {SPAN}"
_KEY_RANGE = f"k >= {_RUN_BASE} AND k < {_RUN_BASE} + {SPAN}"
"""SQLite keys messages and steps by ``num * 2**32 + seq`` (see tether.durable.sqlite)."""


def _select(table: str, run_id: str, key: Any, kind: str = "postgres") -> tuple[str, tuple[Any, ...]]:
    if kind == "sqlite" and table in ("messages", "steps"):
        return f"SELECT body FROM {table} WHERE k = {_RUN_BASE} + ?", (run_id, key)
    if table == "head":
        return "SELECT head FROM {p}runs WHERE run_id = ?", (run_id,)
    if table == "messages":
        return "SELECT body FROM {p}messages WHERE run_id = ? AND seq = ?", (run_id, key)
    if table == "results":
        return "SELECT body FROM {p}results WHERE run_id = ? AND cycle = ? AND tool_use_id = ?", (run_id, *key)
    return "SELECT body FROM {p}steps WHERE run_id = ? AND step = ?", (run_id, key)


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


def _plain(row: Any) -> str:
    """A row's text; a compressed step row inflated to its JSON text."""
    return unzip_step(row) if is_zipped(row) else str(row)
