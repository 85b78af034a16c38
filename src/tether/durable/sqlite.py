"""`SQLiteStore`: the default RunStore, an embedded SQLite file (stdlib ``sqlite3``, WAL).

Tables: ``meta`` (schema version), ``runs`` (one head row per run, replaced at each step, with
its revision in clear for the compare-and-swap and its number), ``leases`` (each run's lease
epoch), ``messages``, ``results`` and ``steps`` (append-only rows) and ``blobs`` (a run's large
values, content-addressed; see :mod:`tether.durable.packing`). Every statement is
parameterized; every driver error becomes a :class:`~tether.errors.StoreError` naming the
file. The lease is a ``flock`` on a lock file keyed on the database's identity (see
:mod:`tether.durable.lock`), released by the kernel when the owner dies, plus an epoch bump
that fences off any earlier owner. The database file is created readable by its owner only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, StoreError
from .codec import BlobFetch
from .crypto import RowCipher
from .lock import break_file_lease, file_identity, file_lease, is_held, lock_dir_of, lock_path
from .redaction import RedactionPolicy
from .rowstore import Fence, HeadRow, RowStore, WouldBlock
from .store import SCHEMA_VERSION, Lease, PreparedWrite, RunSize, largest_first, validate_run_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, rev INTEGER, num INTEGER, inc TEXT);
CREATE TABLE IF NOT EXISTS leases (run_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (k INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL, cycle INTEGER NOT NULL, tool_use_id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (run_id, cycle, tool_use_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS steps (k INTEGER PRIMARY KEY, body NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (run_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, id));
"""
"""The layout of schema 3. ``messages`` and ``steps`` are keyed by one integer, ``k = num * 2**32 +
seq`` (or step number), where ``num`` is the run's number (``runs.num``, given when the run is
created): a run's rows are one key range, and appending to a rowid table is a cheap B-tree
operation (a new rightmost page, never a redistribution among siblings), which halves the pages
each save point writes. Step bodies may be compressed bytes (see ``tether.durable.codec.zip_step``).
``runs.inc`` is the run's incarnation in clear, for the compare-and-swap (NULL: a legacy run; see
:mod:`tether.durable.incarnation`); a store without the column gets it when opened."""

_RUN_NUMBERS = "CREATE UNIQUE INDEX IF NOT EXISTS runs_num ON runs (num)"

SPAN = 2**32
"""Keys per run in ``messages`` and ``steps``: a run holds fewer than 2**32 messages and steps."""

_MIGRATE_2 = (
    "ALTER TABLE messages RENAME TO messages_v2",
    "ALTER TABLE steps RENAME TO steps_v2",
    "CREATE TABLE messages (k INTEGER PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE steps (k INTEGER PRIMARY KEY, body NOT NULL)",
    f"INSERT INTO messages (k, body) SELECT r.num * {SPAN} + m.seq, m.body FROM messages_v2 m JOIN runs r USING (run_id) ORDER BY 1",
    f"INSERT INTO steps (k, body) SELECT r.num * {SPAN} + s.step, s.body FROM steps_v2 s JOIN runs r USING (run_id) ORDER BY 1",
    "DROP TABLE messages_v2",
    "DROP TABLE steps_v2",
)
"""Moves a schema-2 store's messages and steps to the layout of schema 3 (in the open transaction)."""

_NEW_NUM = "(SELECT coalesce(max(num), 0) + 1 FROM runs)"
"""The number a new run gets."""

_FENCE = (
    "SELECT (SELECT rev FROM runs WHERE run_id = ?), EXISTS (SELECT 1 FROM runs WHERE run_id = ?),"
    " (SELECT epoch FROM leases WHERE run_id = ?), (SELECT inc FROM runs WHERE run_id = ?)"
)
"""What the compare-and-swap of a write reads, in one statement: revision, existence, epoch, incarnation."""

PAGE_SIZE = 1024
"""The page size of a new store file."""
_SYNCHRONOUS = {"normal": "NORMAL", "full": "FULL"}
"""``SQLiteStore(durability=...)`` → SQLite's ``synchronous`` setting."""

_INLINE_CHECKPOINT_EVERY = 200
"""One in this many non-blocking commits is declined, so the writer thread checkpoints the WAL."""

_MAX_IDLE = 8
"""The most idle connections of each kind a store keeps (more, opened while threads used it at once, are closed)."""


class SQLiteStore(RowStore[sqlite3.Connection, int]):
    """Runs in a SQLite database file; safe to share between processes.

    Args:
        path: The database file (created, readable by its owner only, when missing); not
            ``":memory:"`` (a :class:`ConfigurationError`: use :class:`~tether.durable.MemoryStore`).
        cipher: Encrypts every row at rest (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys: Agent-state keys kept out of the file (see :mod:`tether.durable.redaction`).
        max_row_bytes: Refuse (with :class:`~tether.errors.RowTooLargeError`, naming the tool) a
            message or tool-result row larger than this; None: no limit.
        durability: ``"normal"`` (the default): WAL with ``synchronous=NORMAL``. Every save point
            is committed before the effect it guards, and a commit survives the process being
            killed at any instant (it is in the WAL file, which the OS holds). A *power loss or
            OS crash* can lose the commits made since the WAL was last synced (at a checkpoint):
            the database is not corrupted, it comes back at an earlier save point; but a lost
            tool-start marker means a tool that had started is, on resume, not known to be in
            doubt and runs again like a new call. ``"full"``: ``synchronous=FULL``, an fsync at
            every commit (on the writer thread, never on the event loop), so every save point
            survives a power loss too; each commit then costs a disk flush.

    New files use 1 KiB pages (measured with ``bench/durable.py``: a save point writes a few
    pages, and smaller pages write fewer bytes per message than 2 or 4 KiB); an existing file
    keeps its page size.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
        durability: str = "normal",
    ) -> None:
        if durability not in _SYNCHRONOUS:
            raise ConfigurationError(f"SQLiteStore durability={durability!r} is not one of {', '.join(map(repr, _SYNCHRONOUS))}")
        if str(path) == ":memory:":  # sqlite3 would open a private database per connection and leases are files
            raise ConfigurationError(
                "SQLiteStore(':memory:') is not supported: a SQLite run store is a file (connections opened as needed, lock "
                "files beside it); for runs kept in memory use tether.durable.MemoryStore()"
            )
        super().__init__(cipher=cipher, redact_state_keys=redact_state_keys, max_row_bytes=max_row_bytes)
        self.durability = durability
        self.path = Path(path)
        self._inline_commits = 0
        self._pool_lock = threading.Lock()
        self._idle: dict[bool, list[sqlite3.Connection]] = {False: [], True: []}  # by inline: connections no thread uses
        self._busy: set[sqlite3.Connection] = set()  # connections a thread is using
        self._create_private()
        self.lock_dir = lock_dir_of(self.path)
        self._identity = file_identity(self.path)
        self._idle[False].append(self._open())  # fail early on a bad file or a newer schema

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

    @contextmanager
    def _connection(self, *, inline: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection for this thread alone until the context ends (``inline``: one for commits
        that must not block: no busy wait, no checkpoints).

        Connections are the store's, not a thread's: an idle one is handed to whichever thread
        asks (``check_same_thread=False``; one thread at a time uses it) and opened only when
        every one is busy, so a caller whose every call runs on a new thread (Strands' event
        loop) opens none per call, and :meth:`close` reaches them all. A connection returned
        inside a transaction (a failed ``COMMIT`` or ``ROLLBACK``) is closed, never reused.
        """
        conn = self._take(inline)
        try:
            yield conn
        finally:
            self._give(conn, inline)

    def _take(self, inline: bool) -> sqlite3.Connection:
        """An idle connection of the kind asked for, marked busy (a new one when none is idle)."""
        with self._pool_lock:
            idle = self._idle[inline]
            if idle:
                conn = idle.pop()
                self._busy.add(conn)
                return conn
        conn = self._open_inline() if inline else self._open()
        with self._pool_lock:
            self._busy.add(conn)
        return conn

    def _give(self, conn: sqlite3.Connection, inline: bool) -> None:
        """Return a connection taken with :meth:`_take` (closed instead when :meth:`close` ran
        meanwhile, when it is left inside a transaction, or when enough are idle)."""
        with self._pool_lock:
            kept = conn in self._busy and not conn.in_transaction and len(self._idle[inline]) < _MAX_IDLE
            self._busy.discard(conn)
            if kept:
                self._idle[inline].append(conn)
        if not kept:
            conn.close()

    def _open(self) -> sqlite3.Connection:
        """A new connection, the file's settings applied and its schema created or upgraded."""
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only in a new, empty file
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={_SYNCHRONOUS[self.durability]}")
            version = self._init_schema(conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # damaged schema text is not UTF-8
            if conn is not None:
                conn.close()
            raise StoreError(f"{self.path} is not a usable SQLite run store ({type(exc).__name__}: {exc})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{self.path} was written by a newer Tether (store schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade Tether to open it"
            )
        return conn

    def _open_inline(self) -> sqlite3.Connection:
        """A new connection for commits that must not block (the schema exists: the store opened it)."""
        conn = sqlite3.connect(self.path, timeout=0.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA synchronous={_SYNCHRONOUS[self.durability]}")
            conn.execute("PRAGMA wal_autocheckpoint=0")
        except BaseException:
            conn.close()
            raise
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
                if "num" not in columns:
                    conn.execute("ALTER TABLE runs ADD COLUMN num INTEGER")
                conn.execute("UPDATE runs SET num = rowid WHERE num IS NULL")  # every run gets a number
                if "run_id" in {info[1] for info in conn.execute("PRAGMA table_info(messages)")}:
                    for statement in _MIGRATE_2:
                        conn.execute(statement)
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                version = SCHEMA_VERSION
            if version == SCHEMA_VERSION:
                conn.execute(_RUN_NUMBERS)
                if "inc" not in {info[1] for info in conn.execute("PRAGMA table_info(runs)")}:
                    conn.execute("ALTER TABLE runs ADD COLUMN inc TEXT")  # NULL: runs stored before incarnations
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return version

    @property
    def where(self) -> str:
        return str(self.path)

    def _reading(self, run_id: str | None) -> AbstractContextManager[sqlite3.Connection]:
        return _Transaction(self, run_id, "BEGIN", False)

    def _writing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``).

        With ``wait=False`` (a commit from an event loop) it begins only if the commit cannot
        block: on a connection that never waits for another writer's lock and never runs a WAL
        checkpoint (an fsync); every :data:`_INLINE_CHECKPOINT_EVERY`-th such commit is declined
        too, so that the caller's writer thread commits it and checkpoints the WAL off the loop.
        Declining raises :class:`~tether.durable.rowstore.WouldBlock` (nothing written).
        """
        if not wait:
            if self.durability == "full":
                raise WouldBlock  # an fsync per commit: never on the caller's event loop
            self._inline_commits += 1
            if self._inline_commits % _INLINE_CHECKPOINT_EVERY == 0:
                raise WouldBlock
        return _Transaction(self, run_id, "BEGIN IMMEDIATE", not wait)

    def _transaction(self, run_id: str | None, begin: str, *, inline: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        """A transaction on a connection of the pool (``inline``: one for non-blocking commits),
        committed at the end and rolled back on an error; driver errors become StoreError."""
        return _Transaction(self, run_id, begin, inline)

    def _head_row(self, conn: sqlite3.Connection, run_id: str) -> HeadRow[int] | None:
        row = conn.execute("SELECT head, rev, inc, num FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else HeadRow(row[0], row[1], row[2], row[3])

    def _locate(self, conn: sqlite3.Connection, run_id: str) -> int | None:
        row = conn.execute("SELECT num FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else _number(row)

    def _blob_reader(self, conn: sqlite3.Connection, run_id: str, key: int) -> BlobFetch:
        def fetch(ids: Collection[str]) -> list[tuple[Any, Any]]:
            wanted = list(ids)
            found: list[tuple[Any, Any]] = []
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                marks = ",".join("?" * len(chunk))
                found += conn.execute(f"SELECT id, body FROM blobs WHERE run_id = ? AND id IN ({marks})", (run_id, *chunk)).fetchall()
            return found

        return fetch

    def _message_rows(self, conn: sqlite3.Connection, run_id: str, key: int, start: int, stop: int) -> list[tuple[int, Any]]:
        return _ranged(conn, "messages", key, start, stop)

    def _result_rows(self, conn: sqlite3.Connection, run_id: str, key: int, cycle: int) -> list[tuple[str, Any]]:
        return conn.execute("SELECT tool_use_id, body FROM results WHERE run_id = ? AND cycle = ?", (run_id, cycle)).fetchall()

    def _step_rows(self, conn: sqlite3.Connection, run_id: str, key: int, first: int, stop: int | None) -> list[tuple[int, Any]]:
        return _ranged(conn, "steps", key, first, SPAN if stop is None else stop)

    def _count_steps(self, conn: sqlite3.Connection, run_id: str, key: int) -> int:
        base = key * SPAN
        return int(conn.execute("SELECT COUNT(*) FROM steps WHERE k >= ? AND k < ?", (base, base + SPAN)).fetchone()[0])

    def _head_rows(self, conn: sqlite3.Connection) -> list[tuple[str, Any, int | None]]:
        return conn.execute("SELECT run_id, head, rev FROM runs").fetchall()

    def _table_sizes(self, conn: sqlite3.Connection, run_id: str, key: int) -> dict[str, tuple[int, int]]:
        base = key * SPAN
        tables = {"head": _sum(conn, "SELECT 1, length(CAST(head AS BLOB)) FROM runs WHERE run_id = ?", (run_id,))}
        for table in ("messages", "steps"):
            tables[table] = _sum(
                conn, f"SELECT COUNT(*), SUM(length(CAST(body AS BLOB))) FROM {table} WHERE k >= ? AND k < ?", (base, base + SPAN)
            )
        for table in ("results", "blobs"):
            tables[table] = _sum(conn, f"SELECT COUNT(*), SUM(length(CAST(body AS BLOB))) FROM {table} WHERE run_id = ?", (run_id,))
        return tables

    def _fence(self, conn: sqlite3.Connection, run_id: str) -> Fence:
        stored_rev, exists, epoch, inc = conn.execute(_FENCE, (run_id,) * 4).fetchone()
        return Fence(bool(exists), stored_rev, epoch, inc)

    def _swap_head(self, conn: sqlite3.Connection, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> int:
        """Replace the head if the run is at ``rev - 1``, of the write's incarnation and, with
        ``lease``, still at its epoch: the compare-and-swap of :func:`~tether.durable.store.check_fence`
        in one statement. Returns the run's number (a new run gets the next one)."""
        rev, head, incarnation = prepared.rev, prepared.rows.head, prepared.incarnation
        if rev is None:  # an unversioned head (not a durable session's): the checks read first
            return super()._swap_head(conn, run_id, prepared, lease)
        fenced = "" if lease is None else " AND (SELECT epoch FROM leases WHERE run_id = ?) IS ?"
        fence_args: tuple[Any, ...] = () if lease is None else (run_id, lease.epoch)
        if rev == 1:
            row = conn.execute(
                f"INSERT INTO runs (run_id, head, rev, num, inc) SELECT ?, ?, 1, {_NEW_NUM}, ?"
                " WHERE NOT EXISTS (SELECT 1 FROM runs WHERE run_id = ?)" + fenced + " RETURNING num",
                (run_id, head, incarnation, run_id, *fence_args),
            ).fetchall()
        else:
            row = conn.execute(
                "UPDATE runs SET head = ?, rev = ? WHERE run_id = ? AND (rev = ? OR rev IS NULL) AND inc IS ?" + fenced + " RETURNING num",
                (head, rev, run_id, rev - 1, incarnation, *fence_args),
            ).fetchall()
        if not row:  # nothing changed: say why
            raise self._refused(conn, run_id, prepared, lease)
        return _number(row[0])

    def _put_head(self, conn: sqlite3.Connection, run_id: str, prepared: PreparedWrite) -> int:
        """Insert or replace an unversioned head (its revision column left as it is)."""
        row = conn.execute(
            f"INSERT INTO runs (run_id, head, rev, num, inc) VALUES (?, ?, NULL, {_NEW_NUM}, ?)"
            " ON CONFLICT (run_id) DO UPDATE SET head = excluded.head RETURNING num",
            (run_id, prepared.rows.head, prepared.incarnation),
        ).fetchall()  # a RETURNING statement is run to its end before the commit
        return _number(row[0] if row else None)

    def _append(self, conn: sqlite3.Connection, run_id: str, key: int, prepared: PreparedWrite) -> None:
        rows, base = prepared.rows, key * SPAN
        if len(rows.messages) == 1:  # a save point's usual one message: execute is cheaper than executemany
            seq, body = rows.messages[0]
            conn.execute("INSERT INTO messages (k, body) VALUES (?, ?)", (base + seq, body))
        elif rows.messages:
            conn.executemany("INSERT INTO messages (k, body) VALUES (?, ?)", [(base + seq, body) for seq, body in rows.messages])
        if rows.results:
            conn.executemany(
                "INSERT OR REPLACE INTO results (run_id, cycle, tool_use_id, body) VALUES (?, ?, ?, ?)",
                [(run_id, *row) for row in rows.results],
            )
        if prepared.step is not None:
            conn.execute("INSERT INTO steps (k, body) VALUES (?, ?)", (base + prepared.step, rows.step))
        if rows.blobs:  # content-addressed: a blob the run has already is left as it is
            conn.executemany("INSERT OR IGNORE INTO blobs (run_id, id, body) VALUES (?, ?, ?)", [(run_id, *blob) for blob in rows.blobs])

    def _delete_rows(self, conn: sqlite3.Connection, run_id: str) -> None:
        num = self._locate(conn, run_id)
        if num is None:
            return
        base = num * SPAN
        for table in ("messages", "steps"):
            conn.execute(f"DELETE FROM {table} WHERE k >= ? AND k < ?", (base, base + SPAN))
        for table in ("results", "blobs", "runs"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))  # the lease epoch stays: it fences

    def _delete_leased(self, run_id: str, leases: list[Lease]) -> None:
        super()._delete_leased(run_id, leases)
        for lease in leases:
            break_file_lease(self._lock_path(lease.run_id))  # while locked: a waiting locker sees the file replaced and retries

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first (one query per kind of row)."""
        per_run: dict[str, dict[str, tuple[int, int]]] = {}
        with self._reading(None) as conn:
            names = dict(conn.execute("SELECT num, run_id FROM runs").fetchall())
            for run_id, rows, size in conn.execute("SELECT run_id, 1, length(CAST(head AS BLOB)) FROM runs"):
                per_run.setdefault(run_id, {})["head"] = (rows, size or 0)
            for table in ("messages", "steps"):
                query = f"SELECT k / {SPAN}, COUNT(*), SUM(length(CAST(body AS BLOB))) FROM {table} GROUP BY k / {SPAN}"
                for num, rows, size in conn.execute(query):
                    if num in names:
                        per_run[names[num]][table] = (rows, size or 0)
            for table in ("results", "blobs"):
                query = f"SELECT run_id, COUNT(*), SUM(length(CAST(body AS BLOB))) FROM {table} GROUP BY run_id"
                for run_id, rows, size in conn.execute(query):
                    if run_id in per_run:
                        per_run[run_id][table] = (rows, size or 0)
        return largest_first(per_run)

    # -- leases -------------------------------------------------------------------------------

    def _lock_path(self, run_id: str) -> Path:
        return lock_path(self.lock_dir, self._identity, run_id)

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[Lease]:
        """A flock on the run's lock file, plus a new epoch."""
        with file_lease(self._lock_path(run_id), run_id):
            yield Lease(run_id, self._bump_epoch(run_id))

    def _bump_epoch(self, run_id: str) -> int:
        with self._writing(run_id) as conn:
            conn.execute("INSERT INTO leases (run_id, epoch) VALUES (?, 1) ON CONFLICT (run_id) DO UPDATE SET epoch = epoch + 1", (run_id,))
            return int(conn.execute("SELECT epoch FROM leases WHERE run_id = ?", (run_id,)).fetchone()[0])

    def _break_lease(self, run_id: str) -> int:
        epoch = self._bump_epoch(run_id)
        break_file_lease(self._lock_path(run_id))
        return epoch

    def owner_alive(self, run_id: str) -> bool:
        """True when a live process holds the run's lease."""
        return is_held(self._lock_path(validate_run_id(run_id)))

    def close(self) -> None:
        """Close every connection of the store, on whichever thread opened it (one in use is
        closed when its thread is done with it); the store opens new ones if used again."""
        with self._pool_lock:
            idle = self._idle[False] + self._idle[True]
            self._idle = {False: [], True: []}
            self._busy.clear()  # each is closed when returned
        for conn in idle:
            conn.close()


class _Transaction:
    """One transaction of a :class:`SQLiteStore` (a context manager giving its connection).

    It takes a connection from the store's pool (:meth:`SQLiteStore._take`), begins with
    ``begin``, commits when the context ends (rolls back on an error) and gives the connection
    back; any driver error (a full disk, a damaged file, a damaged text value that is not UTF-8)
    becomes a StoreError naming ``run_id`` (None: listing runs). With ``inline`` (a commit that
    must not block), a database locked by another writer raises
    :class:`~tether.durable.rowstore.WouldBlock` instead (nothing written).

    One object, not five nested ``@contextmanager`` layers (commit, transaction, errors,
    connection): every save point of every run goes through it, and the layers cost about 3 µs
    of a save point's ~45 µs commit (measured on a warm cache; a cold one pays more per layer).
    """

    __slots__ = ("begin", "conn", "inline", "run_id", "store")

    def __init__(self, store: SQLiteStore, run_id: str | None, begin: str, inline: bool) -> None:
        self.store = store
        self.run_id = run_id
        self.begin = begin
        self.inline = inline
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        store = self.store
        try:
            conn = self.conn = store._take(self.inline)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise self._error(exc) from None
        try:
            conn.execute(self.begin)
        except BaseException as exc:
            self.conn = None
            store._give(conn, self.inline)
            if isinstance(exc, sqlite3.OperationalError) and self.inline and "locked" in str(exc):
                raise WouldBlock from None  # another writer holds the database: wait on a thread, not on the loop
            if isinstance(exc, sqlite3.Error | UnicodeDecodeError):
                raise self._error(exc) from None
            raise
        return conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        conn = self.conn
        assert conn is not None
        self.conn = None
        try:
            if kind is None:
                conn.execute("COMMIT")
            elif conn.in_transaction:  # SQLite already rolled back after e.g. SQLITE_FULL
                conn.execute("ROLLBACK")
        except (sqlite3.Error, UnicodeDecodeError) as failed:
            raise self._error(failed) from None
        finally:
            self.store._give(conn, self.inline)
        if exc is not None and isinstance(exc, sqlite3.Error | UnicodeDecodeError):
            raise self._error(exc) from None

    def _error(self, exc: BaseException) -> StoreError:
        what = f"run {self.run_id!r}" if self.run_id is not None else "listing runs"
        return StoreError(f"{what}: {self.store.path} failed ({type(exc).__name__}: {exc})")


def _number(row: Any) -> int:
    """A run's number from a row holding it (a run without one is a damaged store)."""
    if row is None or type(row[0]) is not int:
        raise StoreError(f"a run's number is {None if row is None else row[0]!r}, not an integer; the store is damaged")
    return int(row[0])


def _ranged(conn: sqlite3.Connection, table: str, num: int, first: int, stop: int) -> list[tuple[int, Any]]:
    """The ``(seq or step, body)`` rows of ``messages`` or ``steps`` of run number ``num`` with
    ``first <= seq < stop``, the range kept inside the run's keys."""
    base, first, stop = num * SPAN, max(first, 0), min(stop, SPAN)
    if first >= stop:
        return []
    rows = conn.execute(f"SELECT k, body FROM {table} WHERE k >= ? AND k < ? ORDER BY k", (base + first, base + stop)).fetchall()
    return [(k - base, body) for k, body in rows]


def _sum(conn: sqlite3.Connection, query: str, params: tuple[Any, ...]) -> tuple[int, int]:
    """``(rows, bytes)`` from a query returning one such row (NULL sums are 0)."""
    row = conn.execute(query, params).fetchone()
    return (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))
