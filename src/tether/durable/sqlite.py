"""`SQLiteStore`: the default RunStore, an embedded SQLite file (stdlib ``sqlite3``, WAL).

Tables: ``meta`` (schema version), ``runs`` (one head row per run, replaced at each step),
``messages`` and ``results`` (append-only JSON rows). Every statement is parameterized. The
lease is a ``flock`` on ``<db>.locks/<hash>.lock``, released by the kernel when the owner dies.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..types import Message, ToolResult
from .lock import file_lease
from .store import SCHEMA_VERSION, StoredRun, decode_head, decode_messages, decode_results, encode_row, validate_run_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL, cycle INTEGER NOT NULL, tool_use_id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (run_id, cycle, tool_use_id)
) WITHOUT ROWID;
"""


class SQLiteStore:
    """Runs in a SQLite database file; safe to share between processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_dir = Path(f"{self.path}.locks")
        self.bytes_written = 0
        self._local = threading.local()
        self._connect()  # fail early on a bad file or a newer schema

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite run store ({exc})") from None
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite run store ({exc})") from None
        try:
            version = int(row[0])
        except (TypeError, ValueError):
            raise StoreError(f"{self.path}: meta.schema_version is corrupt ({row!r})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{self.path} was written by a newer Tether (store schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade Tether to open it"
            )
        self._local.conn = conn
        return conn

    def head(self, run_id: str) -> dict[str, Any] | None:
        validate_run_id(run_id)
        row = self._connect().execute("SELECT head FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else decode_head(run_id, row[0])

    def load(self, run_id: str) -> StoredRun | None:
        validate_run_id(run_id)
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            row = conn.execute("SELECT head FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                return None
            head = decode_head(run_id, row[0])
            rows = conn.execute(
                "SELECT seq, body FROM messages WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
                (run_id, int(head["start_seq"]), int(head["next_seq"])),
            ).fetchall()
            results = conn.execute(
                "SELECT tool_use_id, body FROM results WHERE run_id = ? AND cycle = ?",
                (run_id, int(head["cursor"]["cycle_index"])),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        expected = int(head["next_seq"]) - int(head["start_seq"])
        if len(rows) != expected:
            raise StoreError(f"run {run_id!r}: {expected - len(rows)} message rows are missing; the store is damaged")
        return StoredRun(run_id, head, decode_messages(run_id, iter(rows)), decode_results(run_id, iter(results)))

    def write(self, run_id: str, head: dict[str, Any], messages: list[Message], results: dict[str, ToolResult]) -> None:
        validate_run_id(run_id)
        first = int(head["next_seq"]) - len(messages)
        cycle = int(head["cursor"]["cycle_index"])
        message_rows = [(run_id, first + i, encode_row(m)) for i, m in enumerate(messages)]
        result_rows = [(run_id, cycle, tid, encode_row(r)) for tid, r in results.items()]
        head_text = encode_row(head)
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if message_rows:
                conn.executemany("INSERT INTO messages (run_id, seq, body) VALUES (?, ?, ?)", message_rows)
            if result_rows:
                conn.executemany("INSERT OR REPLACE INTO results (run_id, cycle, tool_use_id, body) VALUES (?, ?, ?, ?)", result_rows)
            conn.execute(
                "INSERT INTO runs (run_id, head) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET head = excluded.head",
                (run_id, head_text),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        self.bytes_written += sum(len(r[2]) for r in message_rows) + sum(len(r[3]) for r in result_rows) + len(head_text)

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        return file_lease(self.lock_dir, validate_run_id(run_id))

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
