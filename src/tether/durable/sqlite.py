"""`SQLiteStore`: the default RunStore, an embedded SQLite file (stdlib ``sqlite3``, WAL).

Tables: ``meta`` (schema version), ``runs`` (one head row per run, replaced at each step, with
its revision in clear for the compare-and-swap), ``leases`` (each run's lease epoch),
``messages``, ``results`` and ``steps`` (append-only JSON rows). Every statement is
parameterized; every driver error becomes a :class:`~tether.errors.StoreError` naming the
file. The lease is a ``flock`` on a lock file keyed on the database's identity (see
:mod:`tether.durable.lock`), released by the kernel when the owner dies, plus an epoch bump
that fences off any earlier owner. The database file is created readable by its owner only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..errors import LeaseLostError, RunNotFoundError, StoreError
from .crypto import RowCipher
from .history import RunSummary, Step, missing_step
from .lock import break_file_lease, file_identity, file_lease, is_held, lock_dir_of, lock_path
from .redaction import RedactionPolicy, redaction_policy
from .rows import RowWrites, assemble_run, decode_head, decode_messages, decode_results, decode_step, stored_at, summarize_row
from .store import SCHEMA_VERSION, Lease, PreparedWrite, StoredRun, check_fence, validate_run_id, with_liveness

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, rev INTEGER);
CREATE TABLE IF NOT EXISTS leases (run_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL) WITHOUT ROWID;
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


_FENCE = (
    "SELECT (SELECT rev FROM runs WHERE run_id = ?), EXISTS (SELECT 1 FROM runs WHERE run_id = ?),"
    " (SELECT epoch FROM leases WHERE run_id = ?)"
)
"""What the compare-and-swap of a write reads, in one statement: revision, existence, epoch."""

_INLINE_CHECKPOINT_EVERY = 200
"""One in this many non-blocking commits is declined, so the writer thread checkpoints the WAL."""


class SQLiteStore(RowWrites):
    """Runs in a SQLite database file; safe to share between processes.

    Args:
        path: The database file (created, readable by its owner only, when missing).
        cipher: Encrypts every row at rest (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys: Agent-state keys kept out of the file (see :mod:`tether.durable.redaction`).
        max_row_bytes: Refuse (with :class:`~tether.errors.RowTooLargeError`, naming the tool) a
            message or tool-result row larger than this; None: no limit.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_row_bytes = max_row_bytes
        self.cipher = cipher
        self.redaction = redaction_policy(redact_state_keys)
        self.bytes_written = 0
        self._inline_commits = 0
        self._local = threading.local()
        self._create_private()
        self.lock_dir = lock_dir_of(self.path)
        self._identity = file_identity(self.path)
        self._connect()  # fail early on a bad file or a newer schema

    def _create_private(self) -> None:
        """Create a missing database file with mode 0600 (SQLite gives its -wal/-shm files the same).

        Only a file this call creates is opened: closing a descriptor of a database that this
        process has connections to would drop their POSIX locks and can corrupt it.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            return
        except OSError as exc:
            raise StoreError(f"cannot create the run store {self.path} ({exc.strerror or exc})") from None

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = self._init_schema(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path} is not a usable SQLite run store ({exc})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{self.path} was written by a newer Tether (store schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade Tether to open it"
            )
        self._local.conn = conn
        return conn

    def _inline(self) -> sqlite3.Connection:
        """This thread's connection for commits that must not block: no busy wait, no checkpoints."""
        conn: sqlite3.Connection | None = getattr(self._local, "inline", None)
        if conn is None:
            self._connect()  # the schema exists
            conn = sqlite3.connect(self.path, timeout=0.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            self._local.inline = conn
        return conn

    def _init_schema(self, conn: sqlite3.Connection) -> int:
        """Create the tables (or upgrade a schema-1 store in place); returns the stored version."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            try:
                version = int(row[0])
            except (TypeError, ValueError):
                raise StoreError(f"{self.path}: meta.schema_version is corrupt ({row!r})") from None
            if version < SCHEMA_VERSION:
                columns = {info[1] for info in conn.execute("PRAGMA table_info(runs)")}
                if "rev" not in columns:
                    conn.execute("ALTER TABLE runs ADD COLUMN rev INTEGER")  # NULL: the revision is learned at the next write
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                version = SCHEMA_VERSION
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return version

    @contextmanager
    def _errors(self, run_id: str | None, *, inline: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection (``inline``: the one for non-blocking commits); any driver error (a
        full disk, a damaged file) becomes a StoreError."""
        try:
            yield self._inline() if inline else self._connect()
        except sqlite3.Error as exc:
            what = f"run {run_id!r}" if run_id is not None else "listing runs"
            raise StoreError(f"{what}: {self.path} failed ({type(exc).__name__}: {exc})") from None

    def head(self, run_id: str) -> dict[str, Any] | None:
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
            row = conn.execute("SELECT head, rev FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else decode_head(run_id, row[0], self.cipher, rev=row[1])

    def load(self, run_id: str) -> StoredRun | None:
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
            conn.execute("BEGIN")
            try:
                row = conn.execute("SELECT head, rev FROM runs WHERE run_id = ?", (run_id,)).fetchone()
                if row is None:
                    return None
                head = decode_head(run_id, row[0], self.cipher, rev=row[1])  # a replayed older head is refused
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

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write in one transaction (a compare-and-swap on revision and epoch).

        With ``wait=False`` (a caller on an event loop) the commit is made only if it cannot
        block: on a connection that never waits for another writer's lock and never runs a WAL
        checkpoint (an fsync); every :data:`_INLINE_CHECKPOINT_EVERY`-th such commit is declined
        too, so that the caller's writer thread commits it and checkpoints the WAL off the loop.
        Returns False when it declined (nothing written).
        """
        if not wait:
            self._inline_commits += 1
            if self._inline_commits % _INLINE_CHECKPOINT_EVERY == 0:
                return False
        rows, rev = prepared.rows, prepared.rev
        with self._errors(run_id, inline=not wait) as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if not wait and "locked" in str(exc):
                    return False  # another writer holds the database: wait on a thread, not on the loop
                raise
            try:
                if not self._swap_head(conn, run_id, rows.head, rev, lease):
                    stored_rev, exists, epoch = conn.execute(_FENCE, (run_id, run_id, run_id)).fetchone()
                    check_fence(run_id, rev, stored_rev, bool(exists), lease, epoch)  # says why
                    raise LeaseLostError(f"run {run_id!r} was changed by another writer; nothing was written")
                if rows.messages:
                    conn.executemany("INSERT INTO messages (run_id, seq, body) VALUES (?, ?, ?)", [(run_id, *row) for row in rows.messages])
                if rows.results:
                    conn.executemany(
                        "INSERT OR REPLACE INTO results (run_id, cycle, tool_use_id, body) VALUES (?, ?, ?, ?)",
                        [(run_id, *row) for row in rows.results],
                    )
                if prepared.step is not None:
                    conn.execute("INSERT INTO steps (run_id, step, body) VALUES (?, ?, ?)", (run_id, prepared.step, rows.step))
            except BaseException:
                if conn.in_transaction:  # SQLite already rolled back after e.g. SQLITE_FULL
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        self.bytes_written += rows.size
        return True

    @staticmethod
    def _swap_head(conn: sqlite3.Connection, run_id: str, head: str, rev: int | None, lease: Lease | None) -> bool:
        """Replace the head if the run is at ``rev - 1`` and, with ``lease``, still at its epoch:
        the compare-and-swap of :func:`~tether.durable.store.check_fence` in one statement.
        False when the run is not there (nothing changed)."""
        if rev is None:  # an unversioned head (not a durable session's): the checks read first
            stored_rev, exists, epoch = conn.execute(_FENCE, (run_id, run_id, run_id)).fetchone()
            check_fence(run_id, None, stored_rev, bool(exists), lease, epoch)
            conn.execute(
                "INSERT INTO runs (run_id, head, rev) VALUES (?, ?, NULL) ON CONFLICT (run_id) DO UPDATE SET head = excluded.head",
                (run_id, head),
            )
            return True
        fenced = "" if lease is None else " AND (SELECT epoch FROM leases WHERE run_id = ?) IS ?"
        fence_args: tuple[Any, ...] = () if lease is None else (run_id, lease.epoch)
        if rev == 1:
            cursor = conn.execute(
                "INSERT INTO runs (run_id, head, rev) SELECT ?, ?, 1 WHERE NOT EXISTS (SELECT 1 FROM runs WHERE run_id = ?)" + fenced,
                (run_id, head, run_id, *fence_args),
            )
        else:
            cursor = conn.execute(
                "UPDATE runs SET head = ?, rev = ? WHERE run_id = ? AND (rev = ? OR rev IS NULL)" + fenced,
                (head, rev, run_id, rev - 1, *fence_args),
            )
        return cursor.rowcount == 1

    def history(self, run_id: str) -> list[Step]:
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise RunNotFoundError(f"no run {run_id!r} in {self.path}")
            rows = conn.execute("SELECT step, body FROM steps WHERE run_id = ? ORDER BY step", (run_id,)).fetchall()
        return [decode_step(run_id, int(number), body, self.cipher) for number, body in rows]

    def load_at(self, run_id: str, step: int) -> StoredRun:
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
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
                missing = stop - start - len(rows)
                raise StoreError(f"run {run_id!r}: {missing} message rows of step {step} are missing; the store is damaged")
            results = conn.execute(
                "SELECT tool_use_id, body FROM results WHERE run_id = ? AND cycle = ?", (run_id, int(head["cursor"]["cycle_index"]))
            ).fetchall()
        messages = decode_messages(run_id, iter(rows), self.cipher)
        cycle = int(head["cursor"]["cycle_index"])
        return stored_at(run_id, found, messages, decode_results(run_id, iter(results), self.cipher, cycle=cycle))

    def list_runs(self) -> list[RunSummary]:
        with self._errors(None) as conn:
            rows = conn.execute("SELECT run_id, head, rev FROM runs").fetchall()
        runs = [summarize_row(run_id, text, self.cipher, rev=rev) for run_id, text, rev in rows]
        return with_liveness(runs, self.owner_alive)

    # -- leases -------------------------------------------------------------------------------

    def _lock_path(self, run_id: str) -> Path:
        return lock_path(self.lock_dir, self._identity, run_id)

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[Lease]:
        with file_lease(self._lock_path(run_id), run_id):
            yield Lease(run_id, self._bump_epoch(run_id))

    def lease(self, run_id: str) -> AbstractContextManager[Lease]:
        """Exclusive ownership of the run while the context is open (a flock plus a new epoch)."""
        return self._lease(validate_run_id(run_id))

    def _bump_epoch(self, run_id: str) -> int:
        with self._errors(run_id) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT INTO leases (run_id, epoch) VALUES (?, 1) ON CONFLICT (run_id) DO UPDATE SET epoch = epoch + 1", (run_id,)
                )
                epoch = int(conn.execute("SELECT epoch FROM leases WHERE run_id = ?", (run_id,)).fetchone()[0])
            except BaseException:
                if conn.in_transaction:  # SQLite already rolled back after e.g. SQLITE_FULL
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return epoch

    def break_lease(self, run_id: str) -> int:
        """Fence off the run's owner (its next write raises LeaseLostError) and free the lock;
        RunNotFoundError for a run the store does not have."""
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
            exists = conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None
        if not exists:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}; nothing to unlock")
        epoch = self._bump_epoch(run_id)
        break_file_lease(self._lock_path(run_id))
        return epoch

    def owner_alive(self, run_id: str) -> bool:
        """True when a live process holds the run's lease."""
        return is_held(self._lock_path(validate_run_id(run_id)))

    def delete_run(self, run_id: str) -> None:
        """Delete the run's rows in one transaction under its lease, then its lock file (see :meth:`RunStore.delete_run`)."""
        validate_run_id(run_id)
        with self._errors(run_id) as conn:
            exists = conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None
        if not exists:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}; nothing to delete")
        with self.lease(run_id), self._errors(run_id) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in ("runs", "messages", "results", "steps"):
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            break_file_lease(self._lock_path(run_id))  # while locked: a waiting locker sees the file replaced and retries

    def close(self) -> None:
        for name in ("conn", "inline"):
            conn: sqlite3.Connection | None = getattr(self._local, name, None)
            if conn is not None:
                conn.close()
                setattr(self._local, name, None)
