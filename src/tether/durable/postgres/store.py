"""`PostgresStore`: durable runs in a PostgreSQL database (psycopg 3, ``tether[postgres]``).

The store's :class:`~tether.durable.rowstore.RowStore` dialect: its reads, its writes (a save
point is one statement, see :mod:`.dialect`, sent by :mod:`.pipeline`) and its schema, on the
lanes and leases of :mod:`.leases`.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import ConfigurationError, StoreError
from ..codec import BlobFetch, merge_head_delta
from ..crypto import RowCipher
from ..redaction import RedactionPolicy
from ..rowstore import Fence, HeadRow, RowStore, WouldBlock
from ..store import Lease, PreparedWrite, RunSize, largest_first, validate_run_id
from . import errors, wire
from .dialect import EPOCHS_FROM_LEASES, SCHEMA, SCHEMA_LOCK, SIZED, STORE_SCHEMA, row_kinds, save_params, save_statement
from .effects import PostgresEffects
from .lanes import DEFAULT_POOL_SIZE
from .leases import Leases
from .pipeline import Pipeline, PQGen, Sent, Unprepared, save_point, wait

if TYPE_CHECKING:
    import psycopg


class BlobCache:
    """The blob rows a store read last (at most ``entries`` rows of at most ``largest`` bytes
    each), by run and id; shared by the store's threads."""

    def __init__(self, entries: int = 512, largest: int = 256 * 1024) -> None:
        self.entries = entries
        self.largest = largest
        self._rows: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_id: str, ids: Collection[str]) -> tuple[list[tuple[Any, Any]], list[str]]:
        """The rows held of ``ids``, and the ids not held."""
        found: list[tuple[Any, Any]] = []
        missing: list[str] = []
        with self._lock:
            for ident in ids:
                body = self._rows.get((run_id, ident))
                if body is None:
                    missing.append(ident)
                else:
                    self._rows.move_to_end((run_id, ident))
                    found.append((ident, body))
        return found, missing

    def put(self, run_id: str, rows: Iterable[tuple[Any, Any]]) -> None:
        with self._lock:
            for ident, body in rows:
                if isinstance(ident, str) and body is not None and len(body) <= self.largest:
                    self._rows[(run_id, ident)] = body
                    self._rows.move_to_end((run_id, ident))
            while len(self._rows) > self.entries:
                self._rows.popitem(last=False)


class PostgresStore(Leases, RowStore["psycopg.Connection[Any]", str]):
    """Runs in a PostgreSQL database; safe to share between processes, hosts and threads.

    Connect with a libpq conninfo string or URL (``"postgresql://user@host/db"``,
    ``"host=/run/postgresql dbname=app"``) and/or keyword arguments (``host=..., dbname=...``).
    ``cipher``, ``redact_state_keys`` and ``max_row_bytes`` work as for :class:`~tether.durable.SQLiteStore`.

    One store serves any number of concurrent agents (give them all the same store) through at
    most ``pool_size`` connections. Sizing: one connection per run that commits at the same
    moment is ideal (each leased run then has its own), so ``pool_size`` about the runs a process
    keeps active at once, capped so that the processes sharing the server stay within its
    ``max_connections`` (default 100; leave room for other clients): e.g. 4 processes x 20.
    With more active runs than connections, leases share connections and their commits take
    turns (a commit holds its connection for one round trip).

    Args:
        conninfo: A libpq conninfo string or ``postgresql://`` URL (empty: libpq's defaults and
            environment, plus ``connect_kwargs``).
        pool_size: The most connections this store opens (at least 1; default 20).
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
        pool_size: int = DEFAULT_POOL_SIZE,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
        **connect_kwargs: Any,
    ) -> None:
        if not isinstance(conninfo, str):
            raise ConfigurationError(f"PostgresStore conninfo must be a string (a libpq conninfo or URL), not {type(conninfo).__name__}")
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ConfigurationError(f"PostgresStore pool_size must be a positive int (the most connections it opens), not {pool_size!r}")
        self._psycopg = errors.import_psycopg()
        if not wire.available(self._psycopg):
            raise ConfigurationError(
                "PostgresStore needs psycopg 3.1 or later with libpq 14 or later (pipeline mode); "
                "install it with pip install 'tether[postgres]', whose psycopg[binary] bundles one"
            )
        super().__init__(cipher=cipher, redact_state_keys=redact_state_keys, max_row_bytes=max_row_bytes)
        self._blobs = BlobCache()
        self._snapshot = threading.local()
        self._start_lanes(conninfo, connect_kwargs, pool_size)
        first = self._lanes[0]
        try:
            with first.lock:
                self._init_schema(self._ensure(first))
        except StoreError:
            self.close()
            raise

    head_deltas = True
    inline_commits = False  # a commit is always a round trip (see _committing)

    def _init_schema(self, conn: psycopg.Connection[Any]) -> None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO tether_meta (key, value) VALUES ('schema_version', %s) ON CONFLICT (key) DO NOTHING",
                    (str(STORE_SCHEMA),),
                )
                row = conn.execute("SELECT value FROM tether_meta WHERE key = 'schema_version'").fetchone()
                if row is not None and str(row[0]).isdigit() and int(row[0]) < STORE_SCHEMA:
                    conn.execute(EPOCHS_FROM_LEASES)
                    conn.execute("UPDATE tether_meta SET value = %s WHERE key = 'schema_version'", (str(STORE_SCHEMA),))
                    row = (str(STORE_SCHEMA),)
        except self._psycopg.Error as exc:
            raise StoreError(f"{self.where} is not a usable run store ({str(exc).strip()})") from None
        try:
            version = int(row[0])  # type: ignore[index]
        except (TypeError, ValueError):
            raise StoreError(f"{self.where}: tether_meta.schema_version is corrupt ({row!r})") from None
        if version > STORE_SCHEMA:
            raise StoreError(
                f"{self.where} was written by a newer Tether (store schema {version}, this one knows {STORE_SCHEMA}); "
                "upgrade Tether to open it"
            )

    # -- the dialect of RowStore --------------------------------------------------------------

    @contextmanager
    def snapshot(self, run_id: str | None = None) -> Iterator[None]:
        """Make the reads of this thread inside the block one read transaction on one lane (one
        snapshot, one lane taken, one ``BEGIN`` and ``COMMIT``), e.g. a run's new steps and the
        messages they added (:mod:`tether.serve.eventlog`); nested, the outer one holds."""
        if getattr(self._snapshot, "conn", None) is not None:
            yield
            return
        with self._reading(run_id) as conn:
            self._snapshot.conn, self._snapshot.known = conn, set()
            try:
                yield
            finally:
                self._snapshot.conn, self._snapshot.known = None, set()

    @contextmanager
    def _reading(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """A read-only transaction on one snapshot (``REPEATABLE READ``), begun by one statement
        (psycopg's ``transaction()`` sends ``BEGIN`` and then ``SET TRANSACTION``: a round trip
        more for every read) on the lane's autocommit connection; inside :meth:`snapshot`, that
        one's."""
        held = getattr(self._snapshot, "conn", None)
        if held is not None:
            yield held
            return
        with self._connection(run_id) as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                yield conn
            except BaseException:
                if not conn.broken and not conn.closed:
                    try:
                        conn.execute("ROLLBACK")
                    except self._psycopg.Error:
                        conn.close()  # a new connection serves the next request
                raise
            conn.execute("COMMIT")

    @contextmanager
    def _writing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A write transaction (deleting runs, a write of a head without a revision)."""
        if not wait:
            raise WouldBlock
        with self._committing(run_id, lease=lease) as conn, conn.transaction():
            yield conn

    @contextmanager
    def _committing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """The connection a write of ``run_id`` goes through: its lease's lane (a write is one
        statement, its own transaction). A round trip can always block: with ``wait=False`` it
        declines (:class:`~tether.durable.rowstore.WouldBlock`), so a caller on an event loop
        commits on its writer thread. A lease whose session ended (its lane's connection broke
        or was replaced) is a :class:`~tether.errors.LeaseLostError`, nothing written."""
        if not wait:
            raise WouldBlock
        owned = self._owned.get(run_id) if lease is not None else None
        if owned is None or lease is None or owned.epoch != lease.epoch or not owned.alive:
            with self._connection(run_id) as conn:  # not leased here: the epoch in the write fences it
                yield conn
            return
        with self._hold(owned.lane):
            held = owned.lane.conn
            if held is None or held.closed or held.broken or owned.lane.generation != owned.generation:
                raise errors.lost(self.where, run_id, "its connection is closed", sent=False)
            ended = self._session_ended(held)
            if ended is not None:
                raise errors.lost(self.where, run_id, ended, sent=False)
            try:
                yield held
            except self._psycopg.Error as exc:
                raise errors.write_failed(self.where, run_id, held, exc) from None

    def send_commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None) -> SentCommit | None:
        """Send a leased save point now, from the caller's event loop, and return its
        :class:`SentCommit` (await :meth:`SentCommit.done` for the outcome); None, having sent
        nothing, when the write must take the writer thread (:meth:`commit`): the run's first
        write, a write without a lease held here, a lane busy with another thread's statement, a
        lease whose session ended (the thread path says so).

        The write's one statement goes out on the lease's connection through the save-point
        protocol the writer thread drives too (:func:`~.pipeline.save_point`), its answer awaited
        on the loop, with no thread: handing a commit to a writer thread and back costs two
        thread wake-ups, which on an idle machine took longer than the commit itself. A save point sent while the run's previous
        one is still out goes right behind it (:class:`~.pipeline.Pipeline`): it
        commits after that one, and only if that one committed (its compare-and-swap names the
        revision that one writes). The lane is held while any of them is out.

        Args:
            run_id: The run written.
            prepared: The write (:meth:`prepare`).
            lease: The lease the write is made under (None: the thread path).
        """
        if lease is None or prepared.rev is None or prepared.rev <= 1:
            return None
        owned = self._owned.get(run_id)
        if owned is None or owned.epoch != lease.epoch or not owned.alive:
            return None
        lane = owned.lane
        out = lane.pipeline
        opened = out is None or not out.busy
        if out is not None and not opened:
            if lane.holder != threading.get_ident() or out.loop is not asyncio.get_running_loop() or lane.generation != owned.generation:
                return None  # statements of another loop out on it (two loops, one lease: not a run's own)
            pipeline = out
        else:
            opening = self._open_pipeline(lane, owned)
            if opening is None:
                return None
            pipeline = opening
        try:
            stmt = save_statement("save", row_kinds(prepared.rows))
            protocol = save_point(pipeline, stmt, wire.encode(stmt, save_params(run_id, prepared, lease), pipeline.prepared.encoding))
            next(protocol)  # sent
        except BaseException as exc:
            if opened and not pipeline.busy:  # nothing of this write went out: the lane is free again
                self._let_go(lane, pipeline.conn)
            if isinstance(exc, self._psycopg.Error):
                raise errors.write_failed(self.where, run_id, pipeline.conn, exc) from None
            raise
        return SentCommit(self, run_id, prepared, lease, pipeline, protocol, pipeline.last)

    async def commit_async(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None) -> bool:
        """:meth:`send_commit` and its outcome: True once committed; False, having written
        nothing, when the write must take the writer thread (:meth:`commit`), which also runs a
        compare-and-swap that changed nothing again to say why (or writes a delta's head whole).
        Cancelled while it waits, it finishes the round trip before it lets the cancellation
        through, so the connection is never left in the middle of a statement.

        Args:
            run_id: The run written.
            prepared: The write (:meth:`prepare`).
            lease: The lease the write is made under (None: the thread path).
        """
        sent = self.send_commit(run_id, prepared, lease=lease)
        return False if sent is None else await sent.done()

    def _write_rows(self, conn: psycopg.Connection[Any], run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """One save point in one statement (see the module docstring); a head without a
        revision (a write of its own, not a durable session's) takes the transaction of checks."""
        if prepared.rev is None:
            with conn.transaction():
                super()._write_rows(conn, run_id, prepared, lease)
            return
        head = "save" if prepared.rev > 1 else "create" if lease is None else "create_leased"
        kinds = row_kinds(prepared.rows)
        if self._saved(conn, head, kinds, save_params(run_id, prepared, lease)):
            return
        if prepared.rows.head_delta is not None:
            self._check_fence(conn, run_id, prepared, lease)  # the fence holds: the base is not the one patched
            if self._saved(conn, head, kinds, save_params(run_id, prepared, lease, whole=True)):
                return
        raise self._refused(conn, run_id, prepared, lease)

    def _saved(self, conn: psycopg.Connection[Any], head: str, kinds: str, params: dict[str, Any]) -> bool:
        """A write's statement (:func:`~.dialect.save_statement`) through the save-point
        protocol, blocking, on ``conn`` (held by the caller): whether it changed the head row.
        A statement the session had dropped is prepared and sent again, once."""
        stmt = save_statement(head, kinds)
        pipeline = Pipeline(self._psycopg, conn, self._prepared_on(conn))
        with conn.lock:
            for _ in range(2):
                try:
                    return wait(save_point(pipeline, stmt, wire.encode(stmt, params, pipeline.prepared.encoding)), pipeline.fileno)
                except Unprepared:
                    continue  # nothing ran: prepared first this time
        raise self._psycopg.OperationalError(f"the server dropped the prepared statement {stmt.name.decode()} twice")

    def _prepared_on(self, conn: psycopg.Connection[Any]) -> wire.Prepared:
        """The statements prepared on ``conn``: its lane's record, or none yet (a tool's
        transaction, on a connection of its own)."""
        return next((lane.prepared for lane in self._lanes if lane.conn is conn), None) or wire.Prepared.of(conn)

    def _head_row(self, conn: psycopg.Connection[Any], run_id: str) -> HeadRow[str] | None:
        row = conn.execute("SELECT head, rev, inc, delta FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone()
        if row is not None and conn is getattr(self._snapshot, "conn", None):
            self._snapshot.known.add(run_id)  # it exists in this snapshot: no need to ask again
        return None if row is None else HeadRow(merge_head_delta(run_id, row[0], row[3]), row[1], row[2], run_id)

    def _locate(self, conn: psycopg.Connection[Any], run_id: str) -> str | None:
        if conn is getattr(self._snapshot, "conn", None) and run_id in self._snapshot.known:
            return run_id
        return None if conn.execute("SELECT 1 FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone() is None else run_id

    def _blob_reader(self, conn: psycopg.Connection[Any], run_id: str, key: str) -> BlobFetch:
        """Blob rows by id, the recently read ones from memory: a blob is stored under the digest
        of its value (never rewritten, and checked against it when decoded), and every read of
        a run's steps or head asks for the same few (its tool specs, its system prompt)."""

        def fetch(ids: Collection[str]) -> list[tuple[Any, Any]]:
            found, missing = self._blobs.get(run_id, ids)
            if missing:
                query = "SELECT id, body FROM tether_blobs WHERE run_id = %s AND id = ANY(%s)"
                rows = [(ident, body) for ident, body in conn.execute(query, (run_id, missing)).fetchall()]
                self._blobs.put(run_id, rows)
                found += rows
            return found

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
        rows = []
        for run_id, head, rev, delta in conn.execute("SELECT run_id, head, rev, delta FROM tether_runs").fetchall():
            try:
                text = merge_head_delta(run_id, head, delta)
            except StoreError:
                text = None  # listed as corrupt (one damaged run never hides the others)
            rows.append((run_id, text, rev))
        return rows

    def _table_sizes(self, conn: psycopg.Connection[Any], run_id: str, key: str) -> dict[str, tuple[int, int]]:
        tables = {}
        for table, name, size in SIZED:
            row = conn.execute(f"SELECT COUNT(*), SUM({size}) FROM {name} WHERE run_id = %s", (run_id,)).fetchone()
            tables[table] = (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))
        return tables

    def _fence(self, conn: psycopg.Connection[Any], run_id: str) -> Fence:
        """The run's revision and incarnation (its head row locked, in a transaction) and epoch.
        Read only to delete runs and to say why a save point's compare-and-swap refused it."""
        stored = conn.execute("SELECT rev, inc FROM tether_runs WHERE run_id = %s FOR UPDATE", (run_id,)).fetchone()
        epoch = conn.execute("SELECT epoch FROM tether_leases WHERE run_id = %s FOR SHARE", (run_id,)).fetchone()
        epoch_value = None if epoch is None else epoch[0]
        return Fence(False, None, epoch_value, None) if stored is None else Fence(True, stored[0], epoch_value, stored[1])

    def _put_head(self, conn: psycopg.Connection[Any], run_id: str, prepared: PreparedWrite) -> str:
        """A head without a revision, written whole (the fence was checked in this transaction)."""
        conn.execute(  # the incarnation is the run's from its creation on (checked by the fence)
            "INSERT INTO tether_runs (run_id, head, rev, inc, epoch)"
            " VALUES (%s, %s, %s, %s, (SELECT epoch FROM tether_leases WHERE run_id = %s))"
            " ON CONFLICT (run_id) DO UPDATE SET head = EXCLUDED.head, rev = EXCLUDED.rev, delta = NULL, base = NULL",
            (run_id, prepared.rows.head, prepared.rev, prepared.incarnation, run_id),
        )
        return run_id

    def _append(self, conn: psycopg.Connection[Any], run_id: str, key: str, prepared: PreparedWrite) -> None:
        """The rows of a write whose head :meth:`_put_head` wrote (the same statement's append)."""
        self._saved(conn, "append", row_kinds(prepared.rows), save_params(run_id, prepared, None))

    def _delete_rows(self, conn: psycopg.Connection[Any], run_id: str) -> None:
        for table in ("tether_messages", "tether_results", "tether_steps", "tether_blobs", "tether_runs"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))  # the lease epoch stays: it fences

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first (one query per kind of row)."""
        per_run: dict[str, dict[str, tuple[int, int]]] = {}
        with self._reading(None) as conn:
            for table, name, size in SIZED:
                query = f"SELECT run_id, COUNT(*), SUM({size}) FROM {name} GROUP BY run_id"
                for run_id, rows, total in conn.execute(query).fetchall():
                    if table == "head" or run_id in per_run:
                        per_run.setdefault(run_id, {})[table] = (int(rows or 0), int(total or 0))
        return largest_first(per_run)

        # -- a tool call's effects, committed with the write recording its result (tether.durable.outbox) --

    def begin_effects(self, run_id: str) -> PostgresEffects:
        """A transaction on a connection of its own (opened for it, outside the lease pool: it
        stays open while the tool runs) for a tool call's effects: the tool writes in it, and
        :meth:`PostgresEffects.commit_with` performs the store write recording the call's result
        in it and commits both at once.

        The seam with the write path: ``commit_with`` runs :meth:`_write_rows` (the fenced save
        point: its compare-and-swap on the run's revision and lease epoch, the head, the rows)
        on this connection, inside the open transaction.

        Args:
            run_id: The run whose tool call writes.
        """
        validate_run_id(run_id)
        conn = self._open()
        try:
            return PostgresEffects(self, run_id, conn)
        except self._psycopg.Error as exc:
            conn.close()
            raise StoreError(f"run {run_id!r}: cannot begin a tool's transaction on {self.where} ({str(exc).strip()})") from None


@dataclass(eq=False, slots=True)
class SentCommit:
    """A save point :meth:`PostgresStore.send_commit` sent; :meth:`done` awaits its outcome.

    Args:
        store: The store.
        run_id: The run written.
        prepared: The write.
        lease: The lease it was made under.
        pipeline: The pipeline of the lease's connection it went out on.
        protocol: Its :func:`~.pipeline.save_point`, sent (its first step taken).
        out: Its statement, out on ``pipeline``.
    """

    store: PostgresStore
    run_id: str
    prepared: PreparedWrite
    lease: Lease
    pipeline: Pipeline
    protocol: PQGen[bool]
    out: Sent

    async def done(self) -> bool:
        """True once the save point committed; False when it wrote nothing (its compare-and-swap
        changed no row, or the session had dropped its statement and it could not be sent again
        now): :meth:`PostgresStore.commit` then writes it, or says why not. A lost connection
        is :class:`~tether.errors.LeaseLostError`, another server error :class:`StoreError`.
        Cancelled while it waits, the statements out on the connection are answered first."""
        store = self.store
        sent: SentCommit | None = self
        for attempt in range(2):
            assert sent is not None
            try:
                changed = await sent.pipeline.finish(sent.protocol, sent.out)
                break
            except Unprepared:  # nothing ran: sent again once, prepared first, behind what is out
                sent = store.send_commit(self.run_id, self.prepared, lease=self.lease) if attempt == 0 else None
                if sent is None:
                    return False
            except store._psycopg.Error as exc:
                raise errors.write_failed(store.where, self.run_id, sent.pipeline.conn, exc) from None
        if not changed:
            return False
        store.bytes_written += self.prepared.rows.size
        return True
