"""`EffectScope`: what the tool calls of one invocation share for their side effects.

The driver of an invocation makes one (the local driver a plain one; the durable driver one
whose transactions commit with the run's steps, see :mod:`tether.durable.outbox`) and closes it
when the invocation ends; each tool call reaches it through its ``ToolContext``:
``context.http`` is the scope's HTTP client (made on first use) and ``context.transaction()``
opens the call's transaction. A call run outside a driver (a Temporal activity, a direct call)
gets a scope of its own, closed with the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigurationError, TransactionUnavailableError
from ..types import ToolResult

if TYPE_CHECKING:
    import httpx


NO_STORE = (
    "this call belongs to no durable run on a PostgreSQL store (a run without run_id, or a tool call run outside the agent's loop, "
    "such as a Temporal activity); context.transaction() needs agent(..., run_id=...) with a PostgresStore"
)


class TransactionHost(Protocol):
    """Where a scope's transactions come from (the durable session's :class:`~tether.durable.outbox.ToolTransactions`)."""

    async def enter(self, tool_use_id: str) -> tuple[Any, object]:
        """Begin a ``context.transaction()`` block of call ``tool_use_id``: its connection and a
        token for :meth:`exit`."""
        ...

    async def exit(self, tool_use_id: str, token: object, error: BaseException | None) -> None:
        """End the block (``error``: what left it, which undoes the block's statements)."""
        ...

    async def end_call(self, tool_use_id: str, result: ToolResult | None) -> Callable[[], None] | None:
        """The call ended with ``result`` (None: with none); returns what to apply when the
        result is recorded (``ToolContext.on_recorded``), if anything."""
        ...

    async def aclose(self) -> None:
        """The invocation ended: give up what no recorded result will commit."""
        ...


class CallTransaction:
    """One ``with`` / ``async with context.transaction() as conn:`` block (see
    ``ToolContext.transaction``). The async form is native; the blocking form, for a
    synchronous tool in a worker thread, runs the same steps on the invocation's event loop.

    Args:
        host: Where the transaction comes from.
        tool_use_id: The call the block belongs to.
        loop: The invocation's event loop (for the blocking form).
    """

    def __init__(self, host: TransactionHost, tool_use_id: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.host = host
        self.tool_use_id = tool_use_id
        self.loop = loop
        self._token: object = None

    async def __aenter__(self) -> Any:
        conn, self._token = await self.host.enter(self.tool_use_id)
        return conn

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        await self.host.exit(self.tool_use_id, self._token, error)

    def __enter__(self) -> Any:
        return self._blocking(self.__aenter__())

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._blocking(self.__aexit__(kind, error, tb))

    def _blocking(self, step: Any) -> Any:
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is not None:
            step.close()
            raise ConfigurationError(
                f"tool call {self.tool_use_id!r}: use `async with context.transaction()` in a tool that runs on the event loop "
                "(an async tool, or run_in_thread=False); `with` is for synchronous tools running in a worker thread"
            )
        return asyncio.run_coroutine_threadsafe(step, loop).result()


class EffectScope:
    """The side-effect helpers of one invocation's tool calls: an HTTP client that sends each
    call's idempotency key, and (on a durable run whose store supports it) the calls'
    transactions.

    Args:
        transactions: Where ``context.transaction()`` blocks come from (None: they raise
            :class:`~tether.errors.TransactionUnavailableError` with ``unavailable``).
        unavailable: Why there are no transactions, for that error.
    """

    def __init__(self, transactions: TransactionHost | None = None, *, unavailable: str = NO_STORE) -> None:
        self.transactions = transactions
        self.unavailable = unavailable
        self._http: httpx.AsyncClient | None = None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The invocation's HTTP client (see :func:`tether.effects.http_client`), made on first use."""
        if self._http is None:
            from .http import http_client

            self._http = http_client()
        return self._http

    def transaction(self, tool_use_id: str) -> CallTransaction:
        """A block of call ``tool_use_id``'s transaction; raises
        :class:`~tether.errors.TransactionUnavailableError` where there are none."""
        if self.transactions is None:
            raise TransactionUnavailableError(f"tool call {tool_use_id!r}: {self.unavailable}")
        return CallTransaction(self.transactions, tool_use_id, self.loop)

    async def end_call(self, tool_use_id: str, result: ToolResult | None) -> Callable[[], None] | None:
        """Call ``tool_use_id`` ended with ``result`` (None: with no result, e.g. an interrupt):
        an open transaction of it is rolled back now (no result) or waits for the result's
        store write; returns what to apply when the result is recorded."""
        if self.transactions is None:
            return None
        return await self.transactions.end_call(tool_use_id, result)

    async def aclose(self) -> None:
        """Close the HTTP client and give up the transactions no recorded result will commit."""
        client, self._http = self._http, None
        try:
            if self.transactions is not None:
                await self.transactions.aclose()
        finally:
            if client is not None:
                await client.aclose()
