"""The PostgreSQL store's leases: a session-level advisory lock on one lane, and an epoch.

The lease of a run is a session-level advisory lock (``pg_try_advisory_lock`` on a 64-bit hash
of the run id) taken on one lane (:mod:`.lanes`), plus an epoch bump in ``tether_leases`` (and
``tether_runs.epoch``); the run's writes go through that lane, so a writer whose lease session
ended (an idle timeout, a pooler, a failover, ``tether unlock``) cannot write at all. The server
drops a session's advisory locks when its connection ends, so an owner that is killed frees its
runs at once, with no expiry or heartbeat. (Across a network, a host that vanishes without
closing its TCP connection is noticed by the server's TCP keepalive: set
``tcp_keepalives_idle`` on the server if that matters.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...errors import RunLockedError, StoreError
from ..history import RunSummary
from ..store import Lease, validate_run_id
from .dialect import BUMP, HELD, HELD_BY, SYNC_EPOCH, advisory_key, lock_ids
from .lanes import Lanes, Owned

if TYPE_CHECKING:
    import psycopg


class Leases(Lanes):
    """The leases of a :class:`~tether.durable.postgres.PostgresStore`, held on its lanes."""

    def _liveness(self, runs: list[RunSummary]) -> Callable[[str], bool]:
        """One query for the advisory locks held, when any run says it is running."""
        if not any(run.status == "running" for run in runs):
            return lambda run_id: True
        held = self._held(None)
        return lambda run_id: lock_ids(advisory_key(run_id)) in held

    def _held(self, run_id: str | None) -> set[tuple[int, int]]:
        """The advisory lock keys held now, as ``(classid, objid)`` (errors name ``run_id``)."""
        with self._connection(run_id) as conn:
            return {(high, low) for high, low, _ in conn.execute(HELD).fetchall()}

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
            row = conn.execute(BUMP, (run_id,)).fetchone()
            epoch = int(row[0]) if row else 0
            conn.execute(SYNC_EPOCH, (epoch, run_id))
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
            for held_high, held_low, pid in conn.execute(HELD).fetchall():
                if (held_high, held_low) == (high, low):
                    conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        return epoch

    def owner_alive(self, run_id: str) -> bool:
        """True when a live database session holds the run's lease (the server reads that one
        lock, not every lease held: a stream asks this of its run as it ends)."""
        high, low = lock_ids(advisory_key(validate_run_id(run_id)))
        with self._connection(run_id) as conn:
            return conn.execute(HELD_BY, (high, low)).fetchone() is not None
