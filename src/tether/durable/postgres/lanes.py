"""The PostgreSQL store's connections: a bounded pool of *lanes*, and the guard that keeps a
thread from waiting for a lane only it can free.

A store opens at most ``pool_size`` connections (lanes) and shares them among every run it
serves, reads and writes alike. A lease (:mod:`.leases`) is taken on one lane and the run's
writes go through it; while fewer runs are leased than the pool has lanes, each leased run has a
lane of its own and no run's commit waits for another's; beyond that, leases share lanes and the
commits of runs sharing a lane take turns. A lane is used by one thread at a time (its lock),
but for one case: statements sent from an event loop (:mod:`.pipeline`) hold a lane until their
answers are in, and a blocking use of that lane on the loop's own thread reads those answers
first (:meth:`Lanes._hold`), since a wait there would never end.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import StoreError
from . import errors, wire
from .pipeline import WAIT_R, Pipeline, ready

if TYPE_CHECKING:
    import psycopg

DEFAULT_POOL_SIZE = 20
"""Connections a :class:`~tether.durable.postgres.PostgresStore` opens at most, unless told otherwise."""


@dataclass(eq=False)
class Lane:
    """One connection of a store's pool, used by one thread at a time (``lock``).

    ``generation`` counts the connections the lane has had: a lease taken on generation g ended
    with that connection's session. ``prepared``: the statements prepared on the current
    connection (:mod:`.wire`). ``leases`` counts the leases held on it. ``holder``: the thread of
    the event loop that holds ``lock`` while its statements are out (``pipeline``, see
    :meth:`~tether.durable.postgres.PostgresStore.send_commit`); nobody else blocks waiting for such a lane, since a
    wait on that loop's own thread would never end (that thread reads their answers first).
    """

    conn: psycopg.Connection[Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0
    prepared: wire.Prepared = field(default_factory=wire.Prepared)
    leases: int = 0
    holder: int | None = None
    pipeline: Pipeline | None = None


@dataclass(eq=False)
class Owned:
    """A lease this store holds: its lane and that lane's connection generation."""

    lane: Lane
    generation: int
    epoch: int
    alive: bool = True


class Lanes:
    """The pool of a :class:`~tether.durable.postgres.PostgresStore` (its base: the store's
    connections, their lanes and the leases held on them)."""

    _psycopg: Any
    conninfo: str
    connect_kwargs: dict[str, Any]
    pool_size: int

    def _start_lanes(self, conninfo: str, connect_kwargs: dict[str, Any], pool_size: int) -> None:
        """No connection yet: the first lane opens its own at its first use."""
        self.conninfo = conninfo
        self.connect_kwargs = dict(connect_kwargs)
        self.pool_size = pool_size
        self._mutex = threading.Lock()  # the pool's bookkeeping (never held during a round trip)
        self._lanes: list[Lane] = [Lane()]
        self._owned: dict[str, Owned] = {}  # the runs this store leases now
        self._turn = itertools.count()
        self._closed = False

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
        transaction (``begin_effects``) runs the tool's own SQL and keeps the server's default."""
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
            lane.prepared = wire.Prepared.of(conn)
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

    @contextmanager
    def _connection(self, run_id: str | None) -> Iterator[psycopg.Connection[Any]]:
        """The connection of a lane held for the context; driver errors become StoreError."""
        with self._any_lane() as used:
            try:
                yield self._ensure(used, check=True)
            except self._psycopg.Error as exc:
                raise errors.failed(self.where, run_id, exc) from None

    def _open_pipeline(self, lane: Lane, owned: Owned) -> Pipeline | None:
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
            or self._session_ended(conn) is not None
            or not conn.lock.acquire(blocking=False)
        ):
            lane.holder = None
            lane.lock.release()
            return None
        loop = asyncio.get_running_loop()
        pipeline = lane.pipeline
        if pipeline is None or pipeline.conn is not conn or pipeline.loop is not loop:
            pipeline = lane.pipeline = Pipeline(self._psycopg, conn, lane.prepared, functools.partial(self._let_go, lane, conn), loop)
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

    def _session_ended(self, conn: psycopg.Connection[Any]) -> str | None:
        """Why an idle lease connection's session has ended, or None while it lives.

        A session the server ended (``pg_terminate_backend``, an idle timeout, a shutdown) has
        sent its last message and closed the socket, so the socket of an idle connection is
        readable: a poll that costs no round trip. Only then is the session asked (a cheap
        query, which is what reads the server's reason)."""
        try:
            readable = ready(conn.fileno(), WAIT_R, 0)
        except (OSError, ValueError):
            return "its connection is closed"
        if not readable:
            return None
        try:
            conn.execute("SELECT 1")
        except self._psycopg.Error as exc:
            return errors.why(exc)
        return None

    def close(self) -> None:
        """Close the connections (a lane holding open leases is closed when its last lease ends)."""
        with self._mutex:
            self._closed = True
            idle = [lane for lane in self._lanes if lane.leases == 0]
        for lane in idle:
            with lane.lock:
                if lane.conn is not None:
                    lane.conn.close()
