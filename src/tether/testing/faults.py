"""Deterministic fault injection at the store boundary: SIGKILL the process at write k.

Every persistence write of a durable run (the head, new messages, a tool-start marker, a tool
result, a pause) goes through ``RunStore.commit`` (``DurableSession`` calls it; ``write`` is
``commit(prepare(...))``; a write that commits a tool call's effects with its result goes through
the transaction ``begin_effects`` gave, see :mod:`tether.durable.outbox`). :class:`FaultStore`
wraps the agent's store, counts the commits that really wrote, and kills its own process with SIGKILL at save point ``(k, when)``:

* ``when="before"``: as commit ``k`` is about to run, so write ``k`` never reaches the store
  (a crash while the step's work is done but not recorded, e.g. a tool ran, its result is lost);
* ``when="after"``: right after commit ``k`` returned, so write ``k`` is durable and nothing
  after it happened (e.g. a tool-start marker is stored, the tool never ran).
"""

from __future__ import annotations

import os
import signal
from contextlib import AbstractContextManager
from typing import Any

from ..durable.outbox import EffectTransaction, unavailable
from ..durable.store import Lease, PreparedWrite, RunStore
from ..errors import TetherError

WHEN = ("before", "after")


class FaultStore:
    """A :class:`~tether.durable.store.RunStore` proxy that counts commits and may SIGKILL.

    Args:
        inner: The real store; every other operation is passed through unchanged.
        kill_at: The 1-based number of the commit to crash at, or None to only count.
        when: ``"before"`` or ``"after"`` that commit (see the module docstring).
    """

    def __init__(self, inner: RunStore, kill_at: int | None = None, when: str = "after") -> None:
        if when not in WHEN:
            raise TetherError(f"crash point when={when!r} must be one of {WHEN}")
        self.inner = inner
        self.kill_at = kill_at
        self.when = when
        self.commits = 0
        self.out = 0  # writes sent from the event loop whose outcome is not known yet (save points ahead of the next)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """The inner commit, with the crash at the chosen save point."""
        self.before_commit()
        done = self.inner.commit(run_id, prepared, lease=lease, wait=wait)
        if done:
            self.committed()
        return done

    def send_commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None) -> _SentCommit | None:
        """The inner store's send from the event loop (if it has one), with the crash at the
        chosen save point: before it is sent, or once it is known committed (a write sent
        behind it may be out by then, as it would be at that instant of a real crash)."""
        send = getattr(self.inner, "send_commit", None)
        if send is None:
            return None
        self.before_commit(ahead=self.out)
        sent = send(run_id, prepared, lease=lease)
        if sent is None:
            return None
        self.out += 1
        return _SentCommit(self, sent)

    async def commit_async(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None) -> bool:
        """:meth:`send_commit` and its outcome; False (nothing written) sends the write to :meth:`commit`."""
        sent = self.send_commit(run_id, prepared, lease=lease)
        return False if sent is None else await sent.done()

    def begin_effects(self, run_id: str) -> EffectTransaction:
        """The inner store's transaction for a tool call's effects (see
        :mod:`tether.durable.outbox`), whose commit with a store write is a save point too."""
        begin = getattr(self.inner, "begin_effects", None)
        if begin is None:
            raise unavailable(self.inner, run_id)
        return _FaultEffects(self, begin(run_id))

    def before_commit(self, ahead: int = 0) -> None:
        """A commit is about to run: die if it is the save point to crash before (its number
        counts the commits done and the ``ahead`` writes sent before it whose outcome is not
        known yet; a write committed on the thread has none: those after it may be out)."""
        if self.kill_at == self.commits + ahead + 1 and self.when == "before":
            _die()

    def committed(self) -> None:
        """A commit wrote: count it, and die if it is the save point to crash after."""
        self.commits += 1
        if self.kill_at == self.commits and self.when == "after":
            _die()

    write = RunStore.write
    """``commit(prepare(...))`` (the protocol's one definition) through this proxy, so direct
    writes are save points too."""


class _SentCommit:
    """A save point the inner store sent from the event loop, counted when it committed."""

    def __init__(self, store: FaultStore, inner: Any) -> None:
        self.store = store
        self.inner = inner

    async def done(self) -> bool:
        try:
            done = bool(await self.inner.done())
        finally:
            self.store.out -= 1
        if done:
            self.store.committed()
        return done


class _FaultEffects:
    """A tool call's transaction whose commit with a store write is a save point of the
    :class:`FaultStore` (counted, and crashed at, like any commit)."""

    def __init__(self, store: FaultStore, inner: EffectTransaction) -> None:
        self.store = store
        self.inner = inner

    @property
    def connection(self) -> Any:
        return self.inner.connection

    def savepoint(self) -> AbstractContextManager[Any]:
        return self.inner.savepoint()

    def commit_with(self, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        self.store.before_commit()
        self.inner.commit_with(run_id, prepared, lease)
        self.store.committed()

    def rollback(self) -> None:
        self.inner.rollback()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def open_store(spec: str) -> RunStore:
    """A store from its spec: a ``postgresql://`` / ``postgres://`` URL or a SQLite file path."""
    if spec.startswith(("postgresql://", "postgres://")):
        from ..durable.postgres import PostgresStore

        return PostgresStore(spec)
    from ..durable.sqlite import SQLiteStore

    return SQLiteStore(spec)
