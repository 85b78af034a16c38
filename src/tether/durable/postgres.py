"""`PostgresStore`: durable runs in a PostgreSQL database (psycopg 3, ``tether[postgres]``).

Same layout as the SQLite store, with a ``tether_`` prefix so the tables can share a database
with the application: ``tether_meta`` (schema version), ``tether_runs`` (one head row per run,
replaced at each step), ``tether_messages``, ``tether_results`` and ``tether_steps`` (append-only
JSON text rows; steps are the time-travel history of :mod:`tether.durable.history`). Every
statement is parameterized.

The lease is a session-level advisory lock (``pg_try_advisory_lock`` on a 64-bit hash of the
run id) taken on a connection of its own that is held for the whole lease, plus an epoch bump
in ``tether_leases``: every write is a compare-and-swap on the run's revision
(``tether_runs.rev``) and that epoch, so an owner whose session was terminated (an idle timeout,
a pooler, a failover, ``tether unlock``) cannot overwrite the run after someone else took it. The server drops a
session's advisory locks when its connection ends, so an owner that is killed frees its runs
at once, with no expiry or heartbeat. (Across a network, a host that vanishes without closing
its TCP connection is noticed by the server's TCP keepalive: set ``tcp_keepalives_idle`` on
the server if that matters.)
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, LeaseLostError, RunLockedError, StoreError
from .codec import BlobFetch, zip_text
from .crypto import RowCipher
from .history import RunSummary
from .redaction import RedactionPolicy
from .rowstore import Fence, HeadRow, RowStore, WouldBlock
from .store import SCHEMA_VERSION, Lease, PreparedWrite, RunSize, largest_first, validate_run_id

if TYPE_CHECKING:
    import psycopg

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tether_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tether_runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, rev BIGINT)",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS rev BIGINT",  # schema 1 stores: learned at the next write
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS inc TEXT",  # the run's incarnation (NULL: stored before incarnations)
    "CREATE TABLE IF NOT EXISTS tether_leases (run_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tether_messages (run_id TEXT NOT NULL, seq BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))",
    "CREATE TABLE IF NOT EXISTS tether_results (run_id TEXT NOT NULL, cycle BIGINT NOT NULL, tool_use_id TEXT NOT NULL,"
    " body TEXT NOT NULL, PRIMARY KEY (run_id, cycle, tool_use_id))",
    "CREATE TABLE IF NOT EXISTS tether_steps (run_id TEXT NOT NULL, step BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, step))",
    "CREATE TABLE IF NOT EXISTS tether_blobs (run_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, id))",
    # A head is replaced at every save point: leave each page room, so PostgreSQL prunes the dead
    # versions of a head before its page is full and every update stays a HOT update in place
    # (with full pages a head of ~850 bytes can miss pruning and move to a new page each time).
    "ALTER TABLE tether_runs SET (fillfactor = 50)",
)
_SCHEMA_LOCK = 0x7465746865720001  # advisory key serializing concurrent schema creation ("tether" + 1)
_MAX_IDLE_LEASE_CONNECTIONS = 4


_SIZED = (
    ("head", "tether_runs", "head"),
    ("messages", "tether_messages", "body"),
    ("results", "tether_results", "body"),
    ("steps", "tether_steps", "body"),
    ("blobs", "tether_blobs", "body"),
)
"""Each kind of row a run is stored as: its table and column (for ``size``)."""


def advisory_key(run_id: str) -> int:
    """The signed 64-bit advisory-lock key of a run (a hash, stable across processes)."""
    digest = hashlib.sha256(b"tether-run:" + run_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lock_ids(key: int) -> tuple[int, int]:
    """How ``pg_locks`` shows a bigint advisory key: (classid, objid) = its high and low halves."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


_HELD = (
    "SELECT classid::bigint, objid::bigint, pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigurationError(
            "PostgresStore needs the 'psycopg' package (psycopg 3), which is not installed; install it with pip install 'tether[postgres]'"
        ) from exc
    return psycopg


class PostgresStore(RowStore["psycopg.Connection[Any]", str]):
    """Runs in a PostgreSQL database; safe to share between processes and hosts.

    Connect with a libpq conninfo string or URL (``"postgresql://user@host/db"``,
    ``"host=/run/postgresql dbname=app"``) and/or keyword arguments (``host=..., dbname=...``).
    ``cipher``, ``redact_state_keys`` and ``max_row_bytes`` work as for :class:`~tether.durable.SQLiteStore`.

    Args:
        conninfo: A libpq conninfo string or ``postgresql://`` URL (empty: libpq's defaults and
            environment, plus ``connect_kwargs``).
        cipher: Encrypts every row at rest (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys: Agent-state keys kept out of the database (see
            :mod:`tether.durable.redaction`).
        max_row_bytes: Refuse (with :class:`~tether.errors.RowTooLargeError`) a message or
            tool-result row larger than this; None: no limit.
        **connect_kwargs: Further connection parameters for ``psycopg.connect`` (``host=...``).
    """

    def __init__(
        self,
        conninfo: str = "",
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
        **connect_kwargs: Any,
    ) -> None:
        if not isinstance(conninfo, str):
            raise ConfigurationError(f"PostgresStore conninfo must be a string (a libpq conninfo or URL), not {type(conninfo).__name__}")
        self._psycopg = _import_psycopg()
        super().__init__(cipher=cipher, redact_state_keys=redact_state_keys, max_row_bytes=max_row_bytes)
        self.conninfo = conninfo
        self.connect_kwargs = dict(connect_kwargs)
        self._mutex = threading.RLock()
        self._idle: list[psycopg.Connection[Any]] = []
        self._conn: psycopg.Connection[Any] | None = None
        self._leased: dict[tuple[str, int], psycopg.Connection[Any]] = {}  # each open lease's session
        self._conn = self._open()
        self._init_schema(self._conn)

    # -- connections ------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """The server and database, for error messages (never the password)."""
        try:
            params = self._psycopg.conninfo.conninfo_to_dict(self.conninfo, **self.connect_kwargs)
        except Exception:
            return "PostgreSQL (unparseable conninfo)"
        host = params.get("host") or "localhost"
        return f"PostgreSQL {host}:{params.get('port') or 5432}/{params.get('dbname') or params.get('user') or '?'}"

    def _open(self) -> psycopg.Connection[Any]:
        try:
            conn: psycopg.Connection[Any] = self._psycopg.connect(self.conninfo, autocommit=True, **self.connect_kwargs)
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.where} ({str(exc).strip()}); check the conninfo and that the server is up") from None
        return conn

    def _main(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conn = self._conn = self._open()
        return conn

    def _init_schema(self, conn: psycopg.Connection[Any]) -> None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO tether_meta (key, value) VALUES ('schema_version', %s) ON CONFLICT (key) DO NOTHING",
                    (str(SCHEMA_VERSION),),
                )
                row = conn.execute("SELECT value FROM tether_meta WHERE key = 'schema_version'").fetchone()
                if row is not None and str(row[0]).isdigit() and int(row[0]) < SCHEMA_VERSION:
                    conn.execute("UPDATE tether_meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                    row = (str(SCHEMA_VERSION),)
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.where} is not a usable run store ({str(exc).strip()})") from None
        try:
            version = int(row[0])  # type: ignore[index]
        except (TypeError, ValueError):
            raise StoreError(f"{self.where}: tether_meta.schema_version is corrupt ({row!r})") from None
        if version > SCHEMA_VERSION:
            self.close()
            raise StoreError(
                f"{self.where} was written by a newer Tether (store schema {version}, this one knows {SCHEMA_VERSION}); "
                "upgrade Tether to open it"
            )

    # -- the dialect of RowStore --------------------------------------------------------------

    @contextmanager
    def _connection(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """The main connection (the caller holds the mutex); driver errors become StoreError."""
        try:
            yield self._main()
        except self._psycopg.Error as exc:
            what = f"run {run_id!r}" if run_id is not None else "listing runs"
            raise StoreError(f"{what}: {self.where} failed ({type(exc).__name__}: {str(exc).strip()})") from None

    @contextmanager
    def _reading(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """A read-only transaction on one snapshot (``REPEATABLE READ``)."""
        with self._mutex, self._connection(run_id) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    @contextmanager
    def _writing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A write transaction. A round trip to the server can always block: with ``wait=False``
        it declines (:class:`~tether.durable.rowstore.WouldBlock`), so a caller on an event loop
        commits on its writer thread. A driver error that is the end of ``lease``'s session is
        a :class:`~tether.errors.LeaseLostError`."""
        if not wait:
            raise WouldBlock
        with self._mutex:
            try:
                with self._connection(run_id) as conn, conn.transaction():
                    yield conn
            except StoreError as exc:
                lost = self._lease_session_lost(lease) if lease is not None and type(exc) is StoreError else None
                if lost is not None:  # the driver error is the lease's end: say so (the docs promise LeaseLostError)
                    raise LeaseLostError(
                        f"run {run_id!r}: this writer's lease session on {self.where} was terminated ({lost}), so it no longer "
                        "owns the run and its write was not confirmed; stop, and resume the run (the next owner reads what is stored)"
                    ) from None
                raise

    def _lease_session_lost(self, lease: Lease) -> str | None:
        """Why ``lease``'s database session has ended (it no longer holds the advisory lock), or
        None when it is alive or not this store's. Asked only after a write failed."""
        conn = self._leased.get((lease.run_id, lease.epoch))
        if conn is None:
            return None
        if conn.closed or conn.broken:
            return "its connection is closed"
        try:
            conn.execute("SELECT 1")
        except self._psycopg.Error as exc:
            return f"{type(exc).__name__}: {str(exc).strip()}"
        return None

    def _head_row(self, conn: psycopg.Connection[Any], run_id: str) -> HeadRow[str] | None:
        row = conn.execute("SELECT head, rev, inc FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone()
        return None if row is None else HeadRow(row[0], row[1], row[2], run_id)

    def _locate(self, conn: psycopg.Connection[Any], run_id: str) -> str | None:
        return None if conn.execute("SELECT 1 FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone() is None else run_id

    def _blob_reader(self, conn: psycopg.Connection[Any], run_id: str, key: str) -> BlobFetch:
        def fetch(ids: Collection[str]) -> list[tuple[Any, Any]]:
            query = "SELECT id, body FROM tether_blobs WHERE run_id = %s AND id = ANY(%s)"
            return [(ident, body) for ident, body in conn.execute(query, (run_id, list(ids))).fetchall()]

        return fetch

    def _message_rows(self, conn: psycopg.Connection[Any], run_id: str, key: str, start: int, stop: int) -> list[tuple[int, Any]]:
        query = "SELECT seq, body FROM tether_messages WHERE run_id = %s AND seq >= %s AND seq < %s ORDER BY seq"
        return [(int(seq), body) for seq, body in conn.execute(query, (run_id, start, stop)).fetchall()]

    def _result_rows(self, conn: psycopg.Connection[Any], run_id: str, key: str, cycle: int) -> list[tuple[str, Any]]:
        query = "SELECT tool_use_id, body FROM tether_results WHERE run_id = %s AND cycle = %s"
        return [(ident, body) for ident, body in conn.execute(query, (run_id, cycle)).fetchall()]

    def _step_rows(self, conn: psycopg.Connection[Any], run_id: str, key: str, first: int, stop: int | None) -> list[tuple[int, Any]]:
        bounded, params = ("", (run_id, first)) if stop is None else (" AND step < %s", (run_id, first, stop))
        query = f"SELECT step, body FROM tether_steps WHERE run_id = %s AND step >= %s{bounded} ORDER BY step"
        return [(int(number), body) for number, body in conn.execute(query, params).fetchall()]

    def _count_steps(self, conn: psycopg.Connection[Any], run_id: str, key: str) -> int:
        count = conn.execute("SELECT count(*) FROM tether_steps WHERE run_id = %s", (run_id,)).fetchone()
        return int(count[0]) if count else 0

    def _head_rows(self, conn: psycopg.Connection[Any]) -> list[tuple[str, Any, int | None]]:
        return [(run_id, head, rev) for run_id, head, rev in conn.execute("SELECT run_id, head, rev FROM tether_runs").fetchall()]

    def _table_sizes(self, conn: psycopg.Connection[Any], run_id: str, key: str) -> dict[str, tuple[int, int]]:
        tables = {}
        for table, name, column in _SIZED:
            row = conn.execute(f"SELECT COUNT(*), SUM(octet_length({column})) FROM {name} WHERE run_id = %s", (run_id,)).fetchone()
            tables[table] = (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))
        return tables

    def _fence(self, conn: psycopg.Connection[Any], run_id: str) -> Fence:
        """The run's revision and incarnation (its head row locked for the transaction) and epoch."""
        stored = conn.execute("SELECT rev, inc FROM tether_runs WHERE run_id = %s FOR UPDATE", (run_id,)).fetchone()
        epoch = conn.execute("SELECT epoch FROM tether_leases WHERE run_id = %s FOR SHARE", (run_id,)).fetchone()
        epoch_value = None if epoch is None else epoch[0]
        return Fence(False, None, epoch_value, None) if stored is None else Fence(True, stored[0], epoch_value, stored[1])

    def _put_head(self, conn: psycopg.Connection[Any], run_id: str, prepared: PreparedWrite) -> str:
        conn.execute(  # the incarnation is the run's from its creation on (checked by the fence)
            "INSERT INTO tether_runs (run_id, head, rev, inc) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (run_id) DO UPDATE SET head = EXCLUDED.head, rev = EXCLUDED.rev",
            (run_id, prepared.rows.head, prepared.rev, prepared.incarnation),
        )
        return run_id

    def _append(self, conn: psycopg.Connection[Any], run_id: str, key: str, prepared: PreparedWrite) -> None:
        rows = prepared.rows
        with conn.cursor() as cur:
            if rows.messages:
                query = "INSERT INTO tether_messages (run_id, seq, body) VALUES (%s, %s, %s)"
                cur.executemany(query, [(run_id, *row) for row in rows.messages])
            if rows.results:
                cur.executemany(
                    "INSERT INTO tether_results (run_id, cycle, tool_use_id, body) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (run_id, cycle, tool_use_id) DO UPDATE SET body = EXCLUDED.body",
                    [(run_id, *row) for row in rows.results],
                )
            if prepared.step is not None and rows.step is not None:
                step_row = (run_id, prepared.step, zip_text(rows.step))
                cur.execute("INSERT INTO tether_steps (run_id, step, body) VALUES (%s, %s, %s)", step_row)
            if rows.blobs:  # content-addressed: a blob the run has already is left as it is
                cur.executemany(
                    "INSERT INTO tether_blobs (run_id, id, body) VALUES (%s, %s, %s) ON CONFLICT (run_id, id) DO NOTHING",
                    [(run_id, *row) for row in rows.blobs],
                )

    def _delete_rows(self, conn: psycopg.Connection[Any], run_id: str) -> None:
        for table in ("tether_messages", "tether_results", "tether_steps", "tether_blobs", "tether_runs"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))  # the lease epoch stays: it fences

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first (one query per kind of row)."""
        per_run: dict[str, dict[str, tuple[int, int]]] = {}
        with self._reading(None) as conn:
            for table, name, column in _SIZED:
                query = f"SELECT run_id, COUNT(*), SUM(octet_length({column})) FROM {name} GROUP BY run_id"
                for run_id, rows, size in conn.execute(query).fetchall():
                    if table == "head" or run_id in per_run:
                        per_run.setdefault(run_id, {})[table] = (int(rows or 0), int(size or 0))
        return largest_first(per_run)

    def _liveness(self, runs: list[RunSummary]) -> Callable[[str], bool]:
        """One query for the advisory locks held, when any run says it is running."""
        if not any(run.status == "running" for run in runs):
            return lambda run_id: True
        held = self._held(None)
        return lambda run_id: lock_ids(advisory_key(run_id)) in held

    def _held(self, run_id: str | None) -> set[tuple[int, int]]:
        """The advisory lock keys held now, as ``(classid, objid)`` (errors name ``run_id``)."""
        with self._mutex, self._connection(run_id) as conn:
            return {(high, low) for high, low, _ in conn.execute(_HELD).fetchall()}

    # -- leases -------------------------------------------------------------------------------

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[Lease]:
        """An advisory lock held on a connection of its own, and a new epoch; a second lease
        raises :class:`~tether.errors.RunLockedError`."""
        key = advisory_key(run_id)
        with self._mutex:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed or conn.broken:
            conn = self._open()
        try:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            epoch = None
            if got and got[0]:
                bumped = conn.execute(
                    "INSERT INTO tether_leases (run_id, epoch) VALUES (%s, 1)"
                    " ON CONFLICT (run_id) DO UPDATE SET epoch = tether_leases.epoch + 1 RETURNING epoch",
                    (run_id,),
                ).fetchone()
                epoch = int(bumped[0]) if bumped else None
        except self._psycopg.Error as exc:
            conn.close()
            raise StoreError(f"run {run_id!r}: cannot take the lease on {self.where} ({str(exc).strip()})") from None
        if epoch is None:
            self._release(conn)
            raise RunLockedError(
                f"run {run_id!r} is owned by another live process or invocation; wait for it to finish, then resume the run "
                f"(a stopped owner can be fenced off with `tether unlock {run_id}`)"
            )
        self._leased[(run_id, epoch)] = conn
        try:
            yield Lease(run_id, epoch)
        finally:
            self._leased.pop((run_id, epoch), None)
            try:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except self._psycopg.Error:
                conn.close()  # closing the session drops its advisory locks too
            self._release(conn)

    def _release(self, conn: psycopg.Connection[Any]) -> None:
        with self._mutex:
            if not conn.closed and not conn.broken and len(self._idle) < _MAX_IDLE_LEASE_CONNECTIONS and self._conn is not None:
                self._idle.append(conn)
                return
        conn.close()

    def _break_lease(self, run_id: str) -> int:
        """Bump the epoch and terminate the database session holding the run's advisory lock."""
        high, low = lock_ids(advisory_key(run_id))
        with self._mutex, self._connection(run_id) as conn:
            with conn.transaction():
                row = conn.execute(
                    "INSERT INTO tether_leases (run_id, epoch) VALUES (%s, 1)"
                    " ON CONFLICT (run_id) DO UPDATE SET epoch = tether_leases.epoch + 1 RETURNING epoch",
                    (run_id,),
                ).fetchone()
            for held_high, held_low, pid in conn.execute(_HELD).fetchall():
                if (held_high, held_low) == (high, low):
                    conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            return int(row[0]) if row else 0

    def owner_alive(self, run_id: str) -> bool:
        """True when a live database session holds the run's lease."""
        return lock_ids(advisory_key(validate_run_id(run_id))) in self._held(run_id)

    # -- a tool call's effects, committed with the write recording its result (tether.durable.outbox) --

    def begin_effects(self, run_id: str) -> PostgresEffects:
        """A transaction on a connection of its own (an idle lease connection, or a new one) for
        a tool call's effects: the tool writes in it, and :meth:`PostgresEffects.commit_with`
        performs the store write recording the call's result in it and commits both at once.

        The seam with the write path: ``commit_with`` runs :meth:`_swap_head` and :meth:`_append`,
        the two halves of :meth:`~tether.durable.rowstore.RowStore.commit`, on this connection.

        Args:
            run_id: The run whose tool call writes.
        """
        validate_run_id(run_id)
        with self._mutex:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed or conn.broken:
            conn = self._open()
        try:
            return PostgresEffects(self, run_id, conn)
        except self._psycopg.Error as exc:
            conn.close()
            raise StoreError(f"run {run_id!r}: cannot begin a tool's transaction on {self.where} ({str(exc).strip()})") from None

    def close(self) -> None:
        """Close the connections (leases still open keep theirs until they end)."""
        with self._mutex:
            conns = [*self._idle, *([self._conn] if self._conn is not None else [])]
            self._idle.clear()
            self._conn = None
        for conn in conns:
            conn.close()


class PostgresEffects:
    """One tool call's transaction on a :class:`PostgresStore` (see
    :meth:`PostgresStore.begin_effects` and :mod:`tether.durable.outbox`); the connection is
    the store's until the transaction is committed or rolled back.

    Args:
        store: The store.
        run_id: The run whose tool call writes.
        conn: A connection of its own (autocommit, like every connection of the store).
    """

    def __init__(self, store: PostgresStore, run_id: str, conn: psycopg.Connection[Any]) -> None:
        self.store = store
        self.run_id = run_id
        self.connection = conn
        self._block = conn.transaction()  # BEGIN; inside it psycopg refuses conn.commit() from the tool
        self._block.__enter__()
        self._done = False

    def savepoint(self) -> AbstractContextManager[Any]:
        """A nested block (a savepoint): an exception leaving it undoes its statements only."""
        return self.connection.transaction()

    def commit_with(self, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """The store write ``prepared`` in this transaction (the fenced compare-and-swap, the head,
        the rows), then ``COMMIT``: the effects and the write are durable together or not at all.

        Raises:
            LeaseLostError: The fence failed (another owner took the run): nothing committed.
            StoreError: The server failed: nothing committed.
        """
        store, conn = self.store, self.connection
        psycopg = store._psycopg
        try:
            key = store._swap_head(conn, run_id, prepared, lease)
            store._append(conn, run_id, key, prepared)
        except BaseException as exc:
            self._end(exc)
            if isinstance(exc, psycopg.Error):
                raise StoreError(f"run {run_id!r}: {store.where} failed ({type(exc).__name__}: {str(exc).strip()})") from None
            raise
        self._end(None)
        store.bytes_written += prepared.rows.size

    def rollback(self) -> None:
        """Roll the transaction back and give the connection back to the store."""
        self._end(self.store._psycopg.Rollback())

    def _end(self, error: BaseException | None) -> None:
        """Leave the transaction block (COMMIT with no ``error``, else ROLLBACK) and hand the
        connection back (closed when the server failed)."""
        if self._done:
            return
        self._done = True
        conn, psycopg = self.connection, self.store._psycopg
        try:
            if error is None:
                self._block.__exit__(None, None, None)
            else:
                self._block.__exit__(type(error), error, error.__traceback__)
        except psycopg.Error as exc:
            conn.close()
            if error is None:
                raise StoreError(f"run {self.run_id!r}: committing on {self.store.where} failed ({str(exc).strip()})") from None
            return
        self.store._release(conn)
