"""`PostgresStore`: durable runs in a PostgreSQL database (psycopg 3, ``tether[postgres]``).

Same layout as the SQLite store, with a ``tether_`` prefix so the tables can share a database
with the application: ``tether_meta`` (schema version), ``tether_runs`` (one head row per run),
``tether_leases`` (each run's lease epoch), ``tether_messages``, ``tether_results`` and
``tether_steps`` (append-only JSON text rows; steps are the time-travel history of
:mod:`tether.durable.history`) and ``tether_blobs``. Every statement is parameterized.

**A save point is one statement.** A write is one ``WITH`` statement on an autocommit
connection: one round trip and one transaction (one WAL flush). Its first part is the
compare-and-swap itself, ``UPDATE tether_runs … WHERE run_id = … AND rev = <previous> AND epoch
= <the lease's> AND inc = <the incarnation>`` (a new run: ``INSERT … SELECT … FROM tether_leases
… FOR SHARE``); the other parts insert the messages, results, step row and blobs *from* the
updated row, so when the fence does not hold nothing at all is written (the store then reads
why, and raises :class:`~tether.errors.LeaseLostError` or
:class:`~tether.errors.RunReplacedError`). No row is locked by a separate read: a concurrent
lease change (which updates ``tether_runs.epoch`` in its own transaction) and a write conflict
on the run's one row, and PostgreSQL re-checks the condition on the row as the other left it.

**The head as a delta.** ``tether_runs.head`` holds a whole (packed) head, the *base*, written
at revision ``base``; ``delta`` holds the patch from it to the current head (see
:meth:`~tether.durable.packing.HeadPacker.head_delta`), so a save point rewrites the few
hundred bytes that changed, not the ~1 KB head, and PostgreSQL logs only the changed end of the
row (the base is its unchanged prefix). The head is written whole again when the delta grows
past the size of the head itself. Stores with a cipher write every head whole.

**Connections: a bounded pool.** A store opens at most ``pool_size`` connections (*lanes*) and
shares them among every run it serves, reads and writes alike. The lease of a run is a
session-level advisory lock (``pg_try_advisory_lock`` on a 64-bit hash of the run id) taken on
one lane, plus an epoch bump in ``tether_leases`` (and ``tether_runs.epoch``); the run's writes
go through that lane, so a writer whose lease session ended (an idle timeout, a pooler, a
failover, ``tether unlock``) cannot write at all. While fewer runs are leased than the pool has
lanes, each leased run has a lane of its own and no run's commit waits for another's; beyond
that, leases share lanes (a lane holds any number of advisory locks) and the commits of runs
sharing a lane take turns. The server drops a session's advisory locks when its connection
ends, so an owner that is killed frees its runs at once, with no expiry or heartbeat. (Across a
network, a host that vanishes without closing its TCP connection is noticed by the server's TCP
keepalive: set ``tcp_keepalives_idle`` on the server if that matters.)
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import select
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, LeaseLostError, RunLockedError, StoreError
from . import pgwire
from .codec import BlobFetch, merge_head_delta, zip_text
from .crypto import RowCipher
from .history import RunSummary
from .redaction import RedactionPolicy
from .rowstore import Fence, HeadRow, RowStore, WouldBlock
from .store import SCHEMA_VERSION, EncodedWrite, Lease, PreparedWrite, RunSize, largest_first, validate_run_id

if TYPE_CHECKING:
    import psycopg

STORE_SCHEMA = SCHEMA_VERSION + 1
"""The version a PostgreSQL store records in ``tether_meta``: the row schema plus this store's
own layout (``tether_runs.epoch``, ``delta`` and ``base``). A Tether that does not know it keeps
no ``tether_runs.epoch`` and would not be fenced off, so it refuses to open such a store."""

DEFAULT_POOL_SIZE = 20
"""Connections a :class:`PostgresStore` opens at most, unless told otherwise."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tether_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # A new store's columns are ordered for the WAL: an update's record leaves out the unchanged
    # prefix and suffix of the row, and a save point changes only ``rev`` and ``delta`` (the base
    # head, the incarnation, the epoch and the base revision change when the head is written whole
    # or the lease changes hands). Stores made before keep their order: the ALTERs add what they lack.
    "CREATE TABLE IF NOT EXISTS tether_runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, inc TEXT, epoch BIGINT, base BIGINT,"
    " rev BIGINT, delta TEXT)",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS rev BIGINT",  # schema 1 stores: learned at the next write
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS inc TEXT",  # the run's incarnation (NULL: stored before incarnations)
    # the run's lease epoch (a copy of tether_leases.epoch kept by every lease change: the write's
    # compare-and-swap reads it on the row it updates), the head's delta and the revision of its base
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS epoch BIGINT",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS delta TEXT",
    "ALTER TABLE tether_runs ADD COLUMN IF NOT EXISTS base BIGINT",
    "CREATE TABLE IF NOT EXISTS tether_leases (run_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tether_messages (run_id TEXT NOT NULL, seq BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))",
    "CREATE TABLE IF NOT EXISTS tether_results (run_id TEXT NOT NULL, cycle BIGINT NOT NULL, tool_use_id TEXT NOT NULL,"
    " body TEXT NOT NULL, PRIMARY KEY (run_id, cycle, tool_use_id))",
    "CREATE TABLE IF NOT EXISTS tether_steps (run_id TEXT NOT NULL, step BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, step))",
    "CREATE TABLE IF NOT EXISTS tether_blobs (run_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, id))",
    # A head is replaced at every save point: leave each page room, so PostgreSQL prunes the dead
    # versions of a head before its page is full and every update stays a HOT update in place
    # (a HOT update on the same page is also the one whose WAL record leaves out the unchanged
    # prefix of the row: the base head).
    "ALTER TABLE tether_runs SET (fillfactor = 50)",
)
_EPOCHS_FROM_LEASES = (
    "UPDATE tether_runs r SET epoch = l.epoch FROM tether_leases l WHERE l.run_id = r.run_id AND r.epoch IS DISTINCT FROM l.epoch"
)
"""Upgrading a store of schema 3 or older: every run's epoch column from its lease row."""
_SCHEMA_LOCK = 0x7465746865720001  # advisory key serializing concurrent schema creation ("tether" + 1)

_APPENDS = {
    "m": "m AS (INSERT INTO tether_messages (run_id, seq, body)"
    " SELECT h.run_id, u.seq, u.body FROM h, unnest(%(mseq)b::bigint[], %(mbody)b::text[]) AS u(seq, body))",
    "M": "m AS (INSERT INTO tether_messages (run_id, seq, body) SELECT h.run_id, %(mseq1)s, %(mbody1)s FROM h)",
    "r": "r AS (INSERT INTO tether_results (run_id, cycle, tool_use_id, body)"
    " SELECT h.run_id, u.cycle, u.id, u.body FROM h, unnest(%(rcycle)b::bigint[], %(rid)b::text[], %(rbody)b::text[]) AS u(cycle, id, body)"
    " ON CONFLICT (run_id, cycle, tool_use_id) DO UPDATE SET body = EXCLUDED.body)",
    "s": "s AS (INSERT INTO tether_steps (run_id, step, body) SELECT h.run_id, %(step)s, %(sbody)s FROM h)",
    "b": "b AS (INSERT INTO tether_blobs (run_id, id, body)"
    " SELECT h.run_id, u.id, u.body FROM h, unnest(%(bid)b::text[], %(bbody)b::text[]) AS u(id, body) ON CONFLICT (run_id, id) DO NOTHING)",
}
"""The rows a write appends, each inserted *from* the head row the write's first part changed
(``h``): when the compare-and-swap changed no row, none of them is inserted. A statement names
only the kinds of rows its write has (a cycle's save point has no blobs and, but for the last
call of a cycle, no results), so the server neither plans nor runs the others. The arrays go in
binary (``%(name)b``): as text, every quote of every JSON row is escaped in Python first. A
write of one message (a cycle's save points) passes it as two plain values (``M``): an array
costs psycopg more to adapt than the rest of the statement's values together."""

_HEADS = {
    "save": "WITH h AS (UPDATE tether_runs SET head = coalesce(%(head)s, head), delta = %(delta)s, base = coalesce(%(newbase)s, base),"
    " rev = %(rev)s WHERE run_id = %(run)s AND (rev = %(prev)s OR rev IS NULL) AND inc IS NOT DISTINCT FROM %(inc)s"
    " AND (%(epoch)s::bigint IS NULL OR epoch = %(epoch)s) AND (%(base)s::bigint IS NULL OR base = %(base)s) RETURNING run_id)",
    "create_leased": "WITH h AS (INSERT INTO tether_runs (run_id, head, rev, inc, epoch, delta, base)"
    " (SELECT %(run)s, %(head)s, 1, %(inc)s, l.epoch, NULL, 1 FROM tether_leases l WHERE l.run_id = %(run)s AND l.epoch = %(epoch)s"
    " FOR SHARE) ON CONFLICT (run_id) DO NOTHING RETURNING run_id)",
    "create": "WITH h AS (INSERT INTO tether_runs (run_id, head, rev, inc, epoch, delta, base)"
    " SELECT %(run)s, %(head)s, 1, %(inc)s, (SELECT epoch FROM tether_leases WHERE run_id = %(run)s), NULL, 1"
    " ON CONFLICT (run_id) DO NOTHING RETURNING run_id)",
    "append": "WITH h AS (SELECT %(run)s::text AS run_id)",
}
"""The first part of a save-point statement:

- ``save``: a save point of an existing run: the head (whole, or a delta against the base it
  names) if the run is at the previous revision, of the write's incarnation and, leased, at the
  lease's epoch;
- ``create_leased``: the first save point of a run, made under a lease: the lease row is read
  locked (once per run), so a lease change waits for this write, or this write sees the change
  and writes nothing;
- ``create``: the first save point of a run made without a lease;
- ``append``: the rows of a write whose head was written by a statement of its own."""


@functools.lru_cache(maxsize=64)
def save_query(head: str, kinds: str) -> str:
    """The statement of a write: :data:`_HEADS` ``[head]`` and the appends of ``kinds`` (letters
    of :data:`_APPENDS`), answering the number of head rows it changed (0: the fence failed)."""
    return _HEADS[head] + "".join(", " + _APPENDS[kind] for kind in kinds) + " SELECT count(*) FROM h"


@functools.lru_cache(maxsize=64)
def save_statement(kinds: str) -> pgwire.Statement:
    """The statement of a save point with rows of ``kinds`` (see :func:`save_query`) in libpq's
    form (:mod:`tether.durable.pgwire`), as :meth:`PostgresStore.commit_async` sends it."""
    return pgwire.statement(save_query("save", kinds), _SAVE_TYPES)


def row_kinds(rows: EncodedWrite) -> str:
    """The kinds of rows a write appends (see :func:`save_query`)."""
    kinds = ("M" if len(rows.messages) == 1 else "m", rows.messages), ("r", rows.results), ("s", rows.step is not None), ("b", rows.blobs)
    return "".join(kind for kind, present in kinds if present)


_BUMP = (
    "INSERT INTO tether_leases (run_id, epoch) VALUES (%s, 1)"
    " ON CONFLICT (run_id) DO UPDATE SET epoch = tether_leases.epoch + 1 RETURNING epoch"
)
_SYNC_EPOCH = "UPDATE tether_runs SET epoch = %s WHERE run_id = %s"
"""A lease change: the epoch bumped, then copied to the run's row by a second statement of the
same transaction (a fresh snapshot: it sees a run created by a write that held the lease row)."""


_SIZED = (
    ("head", "tether_runs", "octet_length(head) + coalesce(octet_length(delta), 0)"),
    ("messages", "tether_messages", "octet_length(body)"),
    ("results", "tether_results", "octet_length(body)"),
    ("steps", "tether_steps", "octet_length(body)"),
    ("blobs", "tether_blobs", "octet_length(body)"),
)
"""Each kind of row a run is stored as: its table and the bytes of a row (for ``size``)."""


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


_SAVE_TYPES = (
    ("run", pgwire.TEXT), ("head", pgwire.TEXT), ("delta", pgwire.TEXT), ("newbase", pgwire.INT8), ("base", pgwire.INT8),
    ("rev", pgwire.INT8), ("prev", pgwire.INT8), ("inc", pgwire.TEXT), ("epoch", pgwire.INT8),
    ("mseq", pgwire.INT8_ARRAY), ("mbody", pgwire.TEXT_ARRAY), ("mseq1", pgwire.INT8), ("mbody1", pgwire.TEXT),
    ("rcycle", pgwire.INT8_ARRAY), ("rid", pgwire.TEXT_ARRAY), ("rbody", pgwire.TEXT_ARRAY),
    ("step", pgwire.INT8), ("sbody", pgwire.TEXT), ("bid", pgwire.TEXT_ARRAY), ("bbody", pgwire.TEXT_ARRAY),
)  # fmt: skip
"""The type of every parameter of a save-point statement (:func:`save_query`), for libpq
(:mod:`tether.durable.pgwire`): the columns' types."""


def save_params(run_id: str, prepared: PreparedWrite, lease: Lease | None, *, whole: bool = False) -> dict[str, Any]:
    """The parameters of a save-point statement (``whole``: the head written whole, not as its
    delta): those of the row kinds the write has (:func:`row_kinds`), which its statement names."""
    rows = prepared.rows
    delta = None if whole else rows.head_delta
    rev = prepared.rev
    params: dict[str, Any] = {
        "run": run_id,
        "head": rows.head if delta is None else None,
        "delta": delta,
        "newbase": rev if delta is None else None,
        "base": None if delta is None else rows.head_base,
        "rev": rev,
        "prev": None if rev is None else rev - 1,
        "inc": prepared.incarnation,
        "epoch": None if lease is None else lease.epoch,
    }
    messages = rows.messages
    if len(messages) == 1:
        params["mseq1"], params["mbody1"] = messages[0]
    elif messages:
        params["mseq"] = [seq for seq, _ in messages]
        params["mbody"] = [text for _, text in messages]
    if rows.results:
        params["rcycle"] = [cycle for cycle, _, _ in rows.results]
        params["rid"] = [ident for _, ident, _ in rows.results]
        params["rbody"] = [text for _, _, text in rows.results]
    if rows.step is not None:
        params["step"] = prepared.step
        params["sbody"] = zip_text(rows.step)
    if rows.blobs:
        params["bid"] = [ident for ident, _ in rows.blobs]
        params["bbody"] = [text for _, text in rows.blobs]
    return params


@dataclass(eq=False)
class Lane:
    """One connection of a store's pool, used by one thread at a time (``lock``).

    ``generation`` counts the connections the lane has had: a lease taken on generation g ended
    with that connection's session. ``prepared``: the statements :mod:`tether.durable.pgwire`
    prepared on the current connection. ``leases`` counts the leases held on it. ``holder``: the
    thread of the event loop that holds ``lock`` while its statements are out (``pipeline``,
    see :meth:`PostgresStore.send_commit`); nobody else blocks waiting for such a lane, since a
    wait on that loop's own thread would never end (that thread reads their answers first).
    """

    conn: psycopg.Connection[Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0
    prepared: pgwire.Prepared = field(default_factory=pgwire.Prepared)
    leases: int = 0
    holder: int | None = None
    pipeline: pgwire.Pipeline | None = None


@dataclass(eq=False)
class Owned:
    """A lease this store holds: its lane and that lane's connection generation."""

    lane: Lane
    generation: int
    epoch: int
    alive: bool = True


class PostgresStore(RowStore["psycopg.Connection[Any]", str]):
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
        self._psycopg = _import_psycopg()
        self._wire = pgwire.available(self._psycopg)  # save points on the event loop (commit_async)
        super().__init__(cipher=cipher, redact_state_keys=redact_state_keys, max_row_bytes=max_row_bytes)
        self.conninfo = conninfo
        self.connect_kwargs = dict(connect_kwargs)
        self.pool_size = pool_size
        self._mutex = threading.Lock()  # the pool's bookkeeping (never held during a round trip)
        self._lanes: list[Lane] = [Lane()]
        self._owned: dict[str, Owned] = {}  # the runs this store leases now
        self._turn = itertools.count()
        self._closed = False
        first = self._lanes[0]
        try:
            with first.lock:
                self._init_schema(self._ensure(first))
        except StoreError:
            self.close()
            raise

    head_deltas = True
    inline_commits = False  # a commit is always a round trip (see _committing)

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

    @property
    def connections(self) -> int:
        """Connections this store has open now (at most ``pool_size``)."""
        with self._mutex:
            return sum(1 for lane in self._lanes if lane.conn is not None and not lane.conn.closed)

    def _open(self, *, lane: bool = False) -> psycopg.Connection[Any]:
        """A new connection (autocommit). ``lane``: one of the pool's, which runs only the
        store's own statements: those are few and keyed by run id, so each is planned once per
        connection (``plan_cache_mode = force_generic_plan``: a save point's statement took longer
        to plan than to run, and a plan made for one run's parameters fits every run). A tool's
        transaction (:meth:`begin_effects`) runs the tool's own SQL and keeps the server's default."""
        try:
            conn: psycopg.Connection[Any] = self._psycopg.connect(self.conninfo, autocommit=True, **self.connect_kwargs)
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.where} ({str(exc).strip()}); check the conninfo and that the server is up") from None
        if lane:
            try:
                conn.execute("SET plan_cache_mode = force_generic_plan")
            except self._psycopg.Error as exc:
                conn.close()
                raise StoreError(f"cannot set up a connection to {self.where} ({str(exc).strip()})") from None
        return conn

    def _ensure(self, lane: Lane, *, check: bool = False) -> psycopg.Connection[Any]:
        """The lane's connection, opened anew when it has none or it broke (the caller holds
        ``lane.lock``); a new connection is a new generation: leases of the old one ended.
        ``check``: also when the server ended its session while it was idle (an idle timeout, a
        restart): nothing was sent on it, so a new one serves the same request."""
        conn = lane.conn
        if conn is not None and check and not conn.closed and not conn.broken and self._session_ended(conn) is not None:
            conn.close()
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                conn.close()
            lane.conn = None
            conn = self._open(lane=True)
            lane.conn = conn
            lane.prepared = pgwire.Prepared.of(conn)
            lane.generation += 1
        return conn

    def _main(self) -> psycopg.Connection[Any]:
        """The first lane's connection (reads and unleased writes go there first)."""
        lane = self._lanes[0]
        with lane.lock:
            return self._ensure(lane)

    @contextmanager
    def _any_lane(self) -> Iterator[Lane]:
        """A lane for a read or an unleased write, held: a free one, else a new one while the
        pool has room, else the next in turn with no commit on an event loop in flight (waiting
        for it; the first lane when every other may be held by one, see :attr:`Lane.holder`)."""
        with self._mutex:
            lane = next((lane for lane in self._lanes if lane.lock.acquire(blocking=False)), None)
            if lane is None and len(self._lanes) < self.pool_size:
                lane = Lane()
                lane.lock.acquire()
                self._lanes.append(lane)
            waiting = None
            if lane is None:
                turn = self._lanes[next(self._turn) % len(self._lanes)]
                waiting = turn if turn.holder is None and turn.leases != 1 else self._lanes[0]
        if waiting is not None:
            waiting.lock.acquire()
            lane = waiting
        assert lane is not None
        try:
            yield lane
        finally:
            lane.lock.release()

    def _lease_lane(self) -> Lane:
        """Where a new lease goes (under the mutex): a lane holding no lease (not the first while
        another can be opened), a new lane while the pool has room, else the least shared."""
        lanes = self._lanes if self.pool_size == 1 else self._lanes[1:]
        free = next((lane for lane in lanes if lane.leases == 0), None)
        if free is not None:
            return free
        if len(self._lanes) < self.pool_size:
            lane = Lane()
            self._lanes.append(lane)
            return lane
        # Shared: never a lane a commit on an event loop holds now (taking the lease waits for the
        # lane, maybe on that loop's own thread); once shared, a lane has no commits on a loop.
        return min([lane for lane in lanes if lane.holder is None] or self._lanes[:1], key=lambda lane: lane.leases)

    def _init_schema(self, conn: psycopg.Connection[Any]) -> None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO tether_meta (key, value) VALUES ('schema_version', %s) ON CONFLICT (key) DO NOTHING",
                    (str(STORE_SCHEMA),),
                )
                row = conn.execute("SELECT value FROM tether_meta WHERE key = 'schema_version'").fetchone()
                if row is not None and str(row[0]).isdigit() and int(row[0]) < STORE_SCHEMA:
                    conn.execute(_EPOCHS_FROM_LEASES)
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
    def _connection(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """The connection of a lane held for the context; driver errors become StoreError."""
        with self._any_lane() as used:
            try:
                yield self._ensure(used, check=True)
            except self._psycopg.Error as exc:
                what = f"run {run_id!r}" if run_id is not None else "listing runs"
                raise StoreError(f"{what}: {self.where} failed ({type(exc).__name__}: {str(exc).strip()})") from None

    @contextmanager
    def _reading(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """A read-only transaction on one snapshot (``REPEATABLE READ``)."""
        with self._connection(run_id) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

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
                raise self._lost(run_id, "its connection is closed", sent=False)
            ended = self._session_ended(held)
            if ended is not None:
                raise self._lost(run_id, ended, sent=False)
            try:
                yield held
            except self._psycopg.Error as exc:
                raise self._write_failed(run_id, held, exc) from None

    def _write_failed(self, run_id: str, conn: psycopg.Connection[Any], exc: BaseException) -> StoreError:
        """The error of a write whose statement failed on a lease's connection ``conn``: the lease
        is lost when the connection broke (whether the write committed is unknown), else the
        server refused the statement (StoreError: nothing committed)."""
        why = f"{type(exc).__name__}: {str(exc).strip()}"
        if conn.broken or conn.closed:
            return self._lost(run_id, why, sent=True)
        return StoreError(f"run {run_id!r}: {self.where} failed ({why})")

    def send_commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None) -> SentCommit | None:
        """Send a leased save point now, from the caller's event loop, and return its
        :class:`SentCommit` (await :meth:`SentCommit.done` for the outcome); None, having sent
        nothing, when the write must take the writer thread (:meth:`commit`): the run's first
        write, a write without a lease held here, a lane busy with another thread's statement, a
        lease whose session ended (the thread path says so).

        The write's one statement goes out on the lease's connection through libpq itself
        (prepared once per connection, see :mod:`tether.durable.pgwire`), with no thread:
        handing a commit to a writer thread and back costs two thread wake-ups, which on an idle
        machine took longer than the commit itself. A save point sent while the run's previous
        one is still out goes right behind it (:class:`~tether.durable.pgwire.Pipeline`): it
        commits after that one, and only if that one committed (its compare-and-swap names the
        revision that one writes). The lane is held while any of them is out.

        Args:
            run_id: The run written.
            prepared: The write (:meth:`prepare`).
            lease: The lease the write is made under (None: the thread path).
        """
        if lease is None or prepared.rev is None or prepared.rev <= 1 or not self._wire:
            return None
        owned = self._owned.get(run_id)
        if owned is None or owned.epoch != lease.epoch or not owned.alive:
            return None
        lane = owned.lane
        pipeline = lane.pipeline
        if pipeline is None or not pipeline.busy:
            pipeline = self._open_pipeline(lane, owned)
            if pipeline is None:
                return None
        elif lane.holder != threading.get_ident() or pipeline.loop is not asyncio.get_running_loop() or lane.generation != owned.generation:
            return None  # statements of another loop out on it (two loops, one lease: not a run's own)
        stmt = save_statement(row_kinds(prepared.rows))
        params = pgwire.encode(stmt, save_params(run_id, prepared, lease))
        try:
            answer = pipeline.send(stmt, params)
        except self._psycopg.Error as exc:
            raise self._write_failed(run_id, pipeline.conn, exc) from None
        return SentCommit(self, run_id, prepared, lease, pipeline.conn, answer)

    def _open_pipeline(self, lane: Lane, owned: Owned) -> pgwire.Pipeline | None:
        """Hold an idle lease lane for statements sent from the running event loop (its lock and
        its connection's, released when the last answer is in); None when it cannot be held now."""
        with self._mutex:
            # Only a lane of this one lease, never the first (where waiting reads queue): then
            # no lease is taken or dropped on it, and no read waits for it, while it is held here.
            if lane.leases != 1 or lane is self._lanes[0] or not lane.lock.acquire(blocking=False):
                return None
            lane.holder = threading.get_ident()
        conn = lane.conn
        if (
            conn is None
            or conn.closed
            or conn.broken
            or lane.generation != owned.generation
            or not lane.prepared.utf8  # pgwire encodes text as UTF-8 (a client encoding is almost always that)
            or self._session_ended(conn) is not None
            or not conn.lock.acquire(blocking=False)
        ):
            lane.holder = None
            lane.lock.release()
            return None
        loop = asyncio.get_running_loop()
        pipeline = lane.pipeline
        if pipeline is None or pipeline.conn is not conn or pipeline.loop is not loop:
            pipeline = lane.pipeline = pgwire.Pipeline(self._psycopg, conn, lane.prepared, functools.partial(self._let_go, lane, conn))
        return pipeline

    @staticmethod
    def _let_go(lane: Lane, conn: psycopg.Connection[Any]) -> None:
        """A lane's pipeline has no statement out any more: the lane is free."""
        conn.lock.release()
        lane.holder = None
        lane.lock.release()

    @contextmanager
    def _hold(self, lane: Lane) -> Iterator[None]:
        """Hold ``lane``, waiting for it; on the thread of an event loop whose statements are out
        on it, their answers are read first (a wait there would never end)."""
        pipeline = lane.pipeline
        if pipeline is not None and pipeline.busy and lane.holder == threading.get_ident():
            pipeline.drain()
        with lane.lock:
            yield

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

    def _session_ended(self, conn: psycopg.Connection[Any]) -> str | None:
        """Why an idle lease connection's session has ended, or None while it lives.

        A session the server ended (``pg_terminate_backend``, an idle timeout, a shutdown) has
        sent its last message and closed the socket, so the socket of an idle connection is
        readable: a poll that costs no round trip. Only then is the session asked (a cheap
        query, which is what reads the server's reason)."""
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):
            return "its connection is closed"
        if not readable:
            return None
        try:
            conn.execute("SELECT 1")
        except self._psycopg.Error as exc:
            return f"{type(exc).__name__}: {str(exc).strip()}"
        return None

    def _lost(self, run_id: str, why: str, *, sent: bool) -> LeaseLostError:
        outcome = (
            "its write was not confirmed (it is stored only if it committed before the session ended)" if sent else "nothing was written"
        )
        return LeaseLostError(
            f"run {run_id!r}: this writer's lease session on {self.where} was terminated ({why}), so it no longer "
            f"owns the run and {outcome}; stop, and resume the run (the next owner reads what is stored)"
        )

    def _write_rows(self, conn: psycopg.Connection[Any], run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """One save point in one statement (see the module docstring); a head without a
        revision (a write of its own, not a durable session's) takes the transaction of checks."""
        if prepared.rev is None:
            with conn.transaction():
                super()._write_rows(conn, run_id, prepared, lease)
            return
        query = save_query("save" if prepared.rev > 1 else "create" if lease is None else "create_leased", row_kinds(prepared.rows))
        if self._saved(conn, query, save_params(run_id, prepared, lease)):
            return
        if prepared.rows.head_delta is not None:
            self._check_fence(conn, run_id, prepared, lease)  # the fence holds: the base is not the one patched
            if self._saved(conn, query, save_params(run_id, prepared, lease, whole=True)):
                return
        raise self._refused(conn, run_id, prepared, lease)

    @staticmethod
    def _saved(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> bool:
        row = conn.execute(query, params).fetchone()
        return bool(row and row[0])

    def _head_row(self, conn: psycopg.Connection[Any], run_id: str) -> HeadRow[str] | None:
        row = conn.execute("SELECT head, rev, inc, delta FROM tether_runs WHERE run_id = %s", (run_id,)).fetchone()
        return None if row is None else HeadRow(merge_head_delta(run_id, row[0], row[3]), row[1], row[2], run_id)

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
        for table, name, size in _SIZED:
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
        params = save_params(run_id, prepared, None)
        conn.execute(save_query("append", row_kinds(prepared.rows)), params)

    def _delete_rows(self, conn: psycopg.Connection[Any], run_id: str) -> None:
        for table in ("tether_messages", "tether_results", "tether_steps", "tether_blobs", "tether_runs"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = %s", (run_id,))  # the lease epoch stays: it fences

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first (one query per kind of row)."""
        per_run: dict[str, dict[str, tuple[int, int]]] = {}
        with self._reading(None) as conn:
            for table, name, size in _SIZED:
                query = f"SELECT run_id, COUNT(*), SUM({size}) FROM {name} GROUP BY run_id"
                for run_id, rows, total in conn.execute(query).fetchall():
                    if table == "head" or run_id in per_run:
                        per_run.setdefault(run_id, {})[table] = (int(rows or 0), int(total or 0))
        return largest_first(per_run)

    def _liveness(self, runs: list[RunSummary]) -> Callable[[str], bool]:
        """One query for the advisory locks held, when any run says it is running."""
        if not any(run.status == "running" for run in runs):
            return lambda run_id: True
        held = self._held(None)
        return lambda run_id: lock_ids(advisory_key(run_id)) in held

    def _held(self, run_id: str | None) -> set[tuple[int, int]]:
        """The advisory lock keys held now, as ``(classid, objid)`` (errors name ``run_id``)."""
        with self._connection(run_id) as conn:
            return {(high, low) for high, low, _ in conn.execute(_HELD).fetchall()}

    # -- leases -------------------------------------------------------------------------------

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[Lease]:
        """An advisory lock held on one of the pool's connections, and a new epoch; a second
        lease (in this process or another) raises :class:`~tether.errors.RunLockedError`."""
        key = advisory_key(run_id)
        with self._mutex:
            if run_id in self._owned:  # advisory locks are re-entrant within a session: refuse here
                raise self._locked(run_id)
            lane = self._lease_lane()
            lane.leases += 1
            owned = self._owned[run_id] = Owned(lane, 0, 0)
        try:
            with lane.lock:
                conn = self._ensure(lane)
                owned.generation = lane.generation
                epoch = self._take(conn, run_id, key)
        except BaseException:
            self._forget(run_id, owned)
            raise
        if epoch is None:
            self._forget(run_id, owned)
            raise self._locked(run_id)
        owned.epoch = epoch
        try:
            yield Lease(run_id, epoch)
        finally:
            if owned.alive:
                with self._hold(lane):
                    if lane.conn is not None and not lane.conn.broken and lane.generation == owned.generation:
                        try:
                            lane.conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                        except self._psycopg.Error:
                            lane.conn.close()  # closing the session drops its advisory locks too
            self._forget(run_id, owned)

    def _take(self, conn: psycopg.Connection[Any], run_id: str, key: int) -> int | None:
        """The advisory lock and a new epoch on ``conn`` (None: another session holds the lock)."""
        got = False
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            got = bool(row and row[0])
            if not got:
                return None
            return self._bump(conn, run_id)
        except self._psycopg.Error as exc:
            if got and not conn.broken:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except self._psycopg.Error:
                    conn.close()
            raise StoreError(f"run {run_id!r}: cannot take the lease on {self.where} ({str(exc).strip()})") from None

    @staticmethod
    def _bump(conn: psycopg.Connection[Any], run_id: str) -> int:
        """Bump the run's epoch in ``tether_leases`` and on its row, in one transaction."""
        with conn.transaction():
            row = conn.execute(_BUMP, (run_id,)).fetchone()
            epoch = int(row[0]) if row else 0
            conn.execute(_SYNC_EPOCH, (epoch, run_id))
        return epoch

    def _forget(self, run_id: str, owned: Owned) -> None:
        """The end of a lease (or of an attempt): its lane is one lease lighter."""
        with self._mutex:
            if self._owned.get(run_id) is owned:
                del self._owned[run_id]
            owned.lane.leases -= 1
            owned.alive = False
            close = self._closed and owned.lane.leases == 0
        if close:
            with self._hold(owned.lane):
                if owned.lane.conn is not None:
                    owned.lane.conn.close()

    def _locked(self, run_id: str) -> RunLockedError:
        return RunLockedError(
            f"run {run_id!r} is owned by another live process or invocation; wait for it to finish, then resume the run "
            f"(a stopped owner can be fenced off with `tether unlock {run_id}`)"
        )

    def _break_lease(self, run_id: str) -> int:
        """Bump the epoch and end the run's lease: a lease of this store is released on its
        connection; a lease of another process by terminating the database session holding it
        (which ends every lease that process holds on that connection: their owners stop at
        their next write with LeaseLostError, and are resumed)."""
        with self._mutex:
            owned = self._owned.pop(run_id, None)
        with self._connection(run_id) as conn:
            epoch = self._bump(conn, run_id)
        if owned is not None:
            with self._hold(owned.lane):
                owned.alive = False  # its owner's next write finds the epoch moved on
                if owned.lane.conn is not None and not owned.lane.conn.broken and owned.lane.generation == owned.generation:
                    try:
                        owned.lane.conn.execute("SELECT pg_advisory_unlock(%s)", (advisory_key(run_id),))
                    except self._psycopg.Error:
                        owned.lane.conn.close()
            return epoch  # the lane is one lease lighter when that lease's context ends
        high, low = lock_ids(advisory_key(run_id))
        with self._connection(run_id) as conn:
            for held_high, held_low, pid in conn.execute(_HELD).fetchall():
                if (held_high, held_low) == (high, low):
                    conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return epoch

    def owner_alive(self, run_id: str) -> bool:
        """True when a live database session holds the run's lease."""
        return lock_ids(advisory_key(validate_run_id(run_id))) in self._held(run_id)

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

    def close(self) -> None:
        """Close the connections (a lane holding open leases is closed when its last lease ends)."""
        with self._mutex:
            self._closed = True
            idle = [lane for lane in self._lanes if lane.leases == 0]
        for lane in idle:
            with lane.lock:
                if lane.conn is not None:
                    lane.conn.close()


@dataclass(eq=False, slots=True)
class SentCommit:
    """A save point :meth:`PostgresStore.send_commit` sent; :meth:`done` awaits its outcome.

    Args:
        store: The store.
        run_id: The run written.
        prepared: The write.
        lease: The lease it was made under.
        conn: The connection it went out on.
        answer: Its statement's answer.
    """

    store: PostgresStore
    run_id: str
    prepared: PreparedWrite
    lease: Lease
    conn: psycopg.Connection[Any]
    answer: pgwire.Answer

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
                result = await sent.answer.result()
                break
            except pgwire.Unprepared:  # nothing ran: sent again once, prepared first, behind what is out
                sent = store.send_commit(self.run_id, self.prepared, lease=self.lease) if attempt == 0 else None
                if sent is None:
                    return False
            except store._psycopg.Error as exc:
                raise store._write_failed(self.run_id, sent.conn, exc) from None
        row = result.get_value(0, 0) if result.ntuples == 1 else None
        if row is None or int(row) == 0:
            return False
        store.bytes_written += self.prepared.rows.size
        return True


class PostgresEffects:
    """One tool call's transaction on a :class:`PostgresStore` (see
    :meth:`PostgresStore.begin_effects` and :mod:`tether.durable.outbox`); the connection is
    closed when the transaction is committed or rolled back.

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
            store._write_rows(conn, run_id, prepared, lease)
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
        conn.close()
