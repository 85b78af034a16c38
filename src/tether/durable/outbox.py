"""The PostgreSQL outbox: a tool call's effects commit in the store write that records its result.

``async with context.transaction() as conn:`` in a tool of a durable run gives the tool a
connection of the run's store in an open transaction (:meth:`ToolTransactions.enter`). The tool
writes its effect there (an order row, an outbox message for a relay); nothing is committed
when the block ends. When the call's result is folded into the run, the first store write that
records it carries the transaction (:meth:`ToolTransactions.attach`): the write's fenced
compare-and-swap, head and rows run on that connection, and one ``COMMIT`` makes the effect and
its record durable together (:meth:`ToolTransactions.commit`). So:

- a crash before that commit loses both: the call is in doubt, its effect was rolled back by
  the server, and running it again is safe (in-doubt handling re-runs a tool declared
  ``transactional``, with no reconcile);
- a recorded result means the effect committed; a completed call never runs again;
- a writer that lost its lease fails the fence inside the transaction, so its effect is rolled
  back with its write.

An error result rolls the effects back (the run records that the call failed, so nothing of it
happened), as does a call that ends with no result (an interrupt, a pause, a cancellation, the
invocation ending before the result was stored). An exception leaving a block undoes that
block's statements (a savepoint, from the second block of a call on; the first block's
transaction is simply rolled back). Calls of one run take turns: a call's first block waits
until the previous call's transaction is committed or rolled back, since one store write can
commit only one connection's transaction.

A store supports this with one method, ``begin_effects(run_id)``, returning an
:class:`EffectTransaction` (see :meth:`~tether.durable.postgres.PostgresStore.begin_effects`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import TransactionUnavailableError
from ..types import ToolResult
from .store import Lease, PreparedWrite

_log = logging.getLogger(__name__)


class EffectTransaction(Protocol):
    """A store's open transaction for one tool call's effects."""

    @property
    def connection(self) -> Any:
        """The connection the tool writes through (a psycopg connection for PostgreSQL)."""
        ...

    def savepoint(self) -> contextlib.AbstractContextManager[Any]:
        """A nested block of the transaction: an exception leaving it undoes its statements only."""
        ...

    def commit_with(self, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """Perform the store write ``prepared`` (its fenced compare-and-swap, head and rows) in
        this transaction and commit: the effects and the write become durable together, or, on
        any error (the fence failed, the connection broke), neither does."""
        ...

    def rollback(self) -> None:
        """Roll the effects back and give the connection back."""
        ...


def unavailable(store: object, run_id: str) -> TransactionUnavailableError:
    """The error of ``context.transaction()`` on a store that cannot commit a tool's effects with its result."""
    where = getattr(store, "where", None)
    return TransactionUnavailableError(
        f"run {run_id!r} is stored in {type(store).__name__}{f' ({where})' if where else ''}, which cannot commit a tool's "
        "effects in the transaction that records its result; "
        "context.transaction() needs a PostgresStore (or make the tool idempotent on context.idempotency_key)"
    )


@dataclass(eq=False)
class _Call:
    """One call's transaction while it is open or waits for its result's store write."""

    tool_use_id: str
    transaction: EffectTransaction
    release: Callable[[], None]
    blocks: int = 0  # blocks open now
    commit: bool | None = None  # decided when the result is recorded: commit (a success) or roll back
    savepoints: list[contextlib.AbstractContextManager[Any]] = field(default_factory=list)


class ToolTransactions:
    """The effect transactions of one durable session's tool calls (see the module docstring).

    Args:
        store: The session's store (``begin_effects`` is looked up on it).
        run_id: The run.
    """

    def __init__(self, store: object, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._open: dict[str, _Call] = {}  # by toolUseId: open, or waiting for its result's write
        self._ready: _Call | None = None  # its result is folded into the run: the next write carries it
        self._attached: dict[int | None, _Call] = {}  # by the revision of the write that carries it
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    # -- the tool's side: blocks ----------------------------------------------------------------

    async def enter(self, tool_use_id: str) -> tuple[Any, object]:
        """Begin a block of call ``tool_use_id``: its transaction (begun on its first block, after
        the previous call's is settled) and, from the second block on, a savepoint."""
        call = self._open.get(tool_use_id)
        if call is None:
            begin = getattr(self.store, "begin_effects", None)
            if begin is None:
                raise unavailable(self.store, self.run_id)
            loop, turns = self._turn_lock()
            await turns.acquire()
            try:
                transaction = await asyncio.to_thread(begin, self.run_id)
            except BaseException:
                turns.release()
                raise
            call = self._open[tool_use_id] = _Call(tool_use_id, transaction, _releaser(loop, turns))
            call.blocks += 1
            return transaction.connection, None
        if call.commit is not None:
            raise TransactionUnavailableError(f"tool call {tool_use_id!r} has ended; its transaction cannot take another block")
        savepoint = call.transaction.savepoint()
        await asyncio.to_thread(savepoint.__enter__)
        call.blocks += 1
        return call.transaction.connection, savepoint

    async def exit(self, tool_use_id: str, token: object, error: BaseException | None) -> None:
        """End a block; ``error`` undoes it (the whole transaction, when it was the first block)."""
        call = self._open.get(tool_use_id)
        if call is None:
            return
        call.blocks -= 1
        if token is None:  # the first block
            if error is not None:
                await self._drop(call)
            return
        savepoint: contextlib.AbstractContextManager[Any] = token  # type: ignore[assignment]
        if error is None:
            await asyncio.to_thread(savepoint.__exit__, None, None, None)
        else:
            await asyncio.to_thread(savepoint.__exit__, type(error), error, error.__traceback__)

    async def end_call(self, tool_use_id: str, result: ToolResult | None) -> Callable[[], None] | None:
        """The call ended: with no result (or a block still open) its transaction rolls back now;
        with one, it waits for the store write recording the result, which the returned callback
        (applied when the result is folded into the run) points at."""
        call = self._open.get(tool_use_id)
        if call is None or call.commit is not None:
            return None
        if result is None or call.blocks:
            if call.blocks:
                _log.warning(
                    "run %r: tool call %s ended inside a context.transaction() block: its writes are rolled back", self.run_id, tool_use_id
                )
            await self._drop(call)
            return None
        succeeded = result.get("status") == "success"

        def recorded() -> None:
            call.commit = succeeded
            self._ready = call

        return recorded

    async def _drop(self, call: _Call) -> None:
        self._open.pop(call.tool_use_id, None)
        try:
            await asyncio.to_thread(call.transaction.rollback)
        finally:
            call.release()

    # -- the session's side: the write that records the result ----------------------------------

    def attach(self, rev: int) -> None:
        """The write of revision ``rev`` is being prepared (on the loop's thread, right after the
        run was read): it records every folded result, so it carries the ready transaction."""
        call = self._ready
        if call is not None:
            self._ready = None
            self._attached[rev] = call

    def carries(self, rev: int | None) -> bool:
        """Whether the write of revision ``rev`` carries a transaction."""
        return rev in self._attached

    def commit(self, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> bool:
        """Settle the transaction the write ``prepared`` carries: commit the write in it (a
        success result; True), or roll it back (an error result; False: the caller commits the
        write as usual). Blocking: the session calls it where a store commit may block."""
        call = self._attached.pop(prepared.rev)
        self._open.pop(call.tool_use_id, None)
        try:
            if call.commit:
                call.transaction.commit_with(run_id, prepared, lease)
                return True
            call.transaction.rollback()
            return False
        finally:
            call.release()

    def discard(self, rev: int) -> None:
        """The write of revision ``rev`` will not happen (it could not be encoded): roll back the
        transaction it carries, if any."""
        call = self._attached.pop(rev, None)
        if call is None:
            return
        self._open.pop(call.tool_use_id, None)
        try:
            call.transaction.rollback()
        finally:
            call.release()

    async def aclose(self) -> None:
        """The invocation ended: roll back every transaction no write carries (its call ended
        without a result, or its result was never stored)."""
        attached = {id(call) for call in self._attached.values()}
        for call in list(self._open.values()):
            if id(call) in attached:
                continue  # a write still in flight on the writer thread settles it
            if self._ready is call:
                self._ready = None
            try:
                await self._drop(call)
            except Exception as exc:  # the connection is gone: the server rolled it back
                _log.warning("run %r: rolling back the transaction of tool call %s failed: %s", self.run_id, call.tool_use_id, exc)

    def _turn_lock(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Lock]:
        """The lock calls take turns with, for the running event loop (a session outlives the
        loop of a synchronous ``agent(...)`` call)."""
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, asyncio.Lock())
        return self._turns


def _releaser(loop: asyncio.AbstractEventLoop, lock: asyncio.Lock) -> Callable[[], None]:
    """Releases ``lock`` once, from any thread (a commit may end on the store's writer thread)."""
    done = [False]

    def release() -> None:
        if done[0]:
            return
        done[0] = True
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            lock.release()
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits on its lock
            loop.call_soon_threadsafe(lock.release)

    return release
