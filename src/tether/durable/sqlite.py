"""`SQLiteStore`: the default RunStore, an embedded SQLite file (stdlib ``sqlite3``, WAL).

Tables: ``meta`` (schema version), ``runs`` (one head row per run, replaced at each step),
``messages`` and ``results`` (append-only JSON rows). Every statement is parameterized. The
lease is a ``flock`` on ``<db>.locks/<hash>.lock``, released by the kernel when the owner dies.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..errors import RunNotFoundError, StoreError
from ..types import Message, ToolResult
from .crypto import RowCipher
from .history import RunSummary, Step, missing_step
from .lock import file_lease
from .redaction import RedactionPolicy, redaction_policy
from .rows import assemble_run, decode_head, decode_messages, decode_results, decode_step, encode_write, stored_at, summarize_row
from .store import SCHEMA_VERSION, StoredRun, validate_run_id

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
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
"""


class SQLiteStore:
    """Runs in a SQLite database file; safe to share between processes.

    ``cipher`` (e.g. :class:`~tether.durable.crypto.AESGCMCipher`) encrypts every row at rest;
    ``redact_state_keys`` keeps those agent-state keys out of the file (see
    :mod:`tether.durable.redaction`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.cipher = cipher
        self.redaction = redaction_policy(redact_state_keys)
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
        return None if row is None else decode_head(run_id, row[0], self.cipher)

    def load(self, run_id: str) -> StoredRun | None:
        validate_run_id(run_id)
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            row = conn.execute("SELECT head FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                return None
            head = decode_head(run_id, row[0], self.cipher)
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
        return assemble_run(run_id, head, rows, results, self.cipher, self.redaction)

    def write(
        self, run_id: str, head: dict[str, Any], messages: list[Message], results: dict[str, ToolResult], step: dict[str, Any] | None = None
    ) -> None:
        validate_run_id(run_id)
        rows = encode_write(head, messages, results, step, self.cipher, self.redaction, run_id=run_id)
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if rows.messages:
                conn.executemany("INSERT INTO messages (run_id, seq, body) VALUES (?, ?, ?)", [(run_id, *row) for row in rows.messages])
            if rows.results:
                conn.executemany(
                    "INSERT OR REPLACE INTO results (run_id, cycle, tool_use_id, body) VALUES (?, ?, ?, ?)",
                    [(run_id, *row) for row in rows.results],
                )
            conn.execute(
                "INSERT INTO runs (run_id, head) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET head = excluded.head",
                (run_id, rows.head),
            )
            if step is not None:
                conn.execute("INSERT INTO steps (run_id, step, body) VALUES (?, ?, ?)", (run_id, int(step["step"]), rows.step))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        self.bytes_written += rows.size

    def history(self, run_id: str) -> list[Step]:
        validate_run_id(run_id)
        conn = self._connect()
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}")
        rows = conn.execute("SELECT step, body FROM steps WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
        return [decode_step(run_id, int(number), body, self.cipher) for number, body in rows]

    def load_at(self, run_id: str, step: int) -> StoredRun:
        validate_run_id(run_id)
        conn = self._connect()
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}")
        row = conn.execute("SELECT body FROM steps WHERE run_id = ? AND step = ?", (run_id, step)).fetchone()
        if row is None:
            count = conn.execute("SELECT COUNT(*) FROM steps WHERE run_id = ?", (run_id,)).fetchone()[0]
            raise missing_step(run_id, step, int(count))
        found = decode_step(run_id, step, row[0], self.cipher)
        head = found.head if self.redaction is None else self.redaction.fill(run_id, found.head)
        start, stop = int(head["start_seq"]), int(head["next_seq"])
        rows = conn.execute(
            "SELECT seq, body FROM messages WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq", (run_id, start, stop)
        ).fetchall()
        if len(rows) != stop - start:
            raise StoreError(f"run {run_id!r}: {stop - start - len(rows)} message rows of step {step} are missing; the store is damaged")
        results = conn.execute(
            "SELECT tool_use_id, body FROM results WHERE run_id = ? AND cycle = ?", (run_id, int(head["cursor"]["cycle_index"]))
        ).fetchall()
        messages = decode_messages(run_id, iter(rows), self.cipher)
        cycle = int(head["cursor"]["cycle_index"])
        return stored_at(run_id, found, messages, decode_results(run_id, iter(results), self.cipher, cycle=cycle))

    def list_runs(self) -> list[RunSummary]:
        rows = self._connect().execute("SELECT run_id, head FROM runs").fetchall()
        runs = [summarize_row(run_id, text, self.cipher) for run_id, text in rows]
        return sorted(runs, key=lambda run: (run.created_at or "", run.run_id))

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        return file_lease(self.lock_dir, validate_run_id(run_id))

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
