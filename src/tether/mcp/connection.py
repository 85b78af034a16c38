"""One MCP session: a transport and a ``ClientSession`` held open by a task on the source's loop
thread, from ``open`` until ``close`` (anyio requires a context to be left by the task that
entered it, so one task holds the whole connection).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

CLOSE_TIMEOUT = 15.0
"""Bound on closing one connection (the stdio transport itself bounds each shutdown step)."""


class Connection:
    """An MCP client session that is open, or failed to open, or has closed.

    Args:
        open_transport: Makes the transport's async context manager (yields read/write streams).
        negotiate: Negotiates the protocol on the new ``ClientSession`` (None: the
            ``initialize`` handshake).
    """

    def __init__(
        self,
        open_transport: Callable[[], AbstractAsyncContextManager[Any]],
        negotiate: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> None:
        self._open_transport = open_transport
        self._negotiate = negotiate
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self.session: Any = None

    async def open(self, timeout: float | None) -> None:
        """Open the transport and initialize the session, within ``timeout`` seconds.

        Raises:
            TimeoutError: Not initialized in time (the connection is closed again).
            Exception: What the transport or the handshake raised (the connection is closed).
        """
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(self._ready))
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._ready)
        except BaseException:
            await self.close()
            raise

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            from mcp import ClientSession

            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._open_transport())
                from .tasks import TASKS_EXTENSION, task_claim

                # With a negotiator (protocol="auto": the 2026-07-28 revision) the client speaks the
                # tasks extension (tether.mcp.tasks); the legacy handshake advertises nothing new.
                extras: dict[str, Any] = {}
                if self._negotiate is not None:
                    extras = {"extensions": {TASKS_EXTENSION: {}}, "result_claims": {TASKS_EXTENSION: [task_claim()]}}
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1], **extras))
                await (self._negotiate(session) if self._negotiate is not None else session.initialize())
                self.session = session
                if not ready.done():
                    ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # reported to open(); a cancel is how close() ends a stuck open
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError("the connection was cancelled"))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.session = None

    @property
    def alive(self) -> bool:
        """Whether requests can be sent (open, and the peer has not closed the stream)."""
        if self.session is None or self._task is None or self._task.done():
            return False
        dispatcher = getattr(self.session, "_dispatcher", None)
        return not bool(getattr(dispatcher, "_closed", False))  # the stream ended: the server exited

    async def close(self) -> None:
        """Close the session and the transport (for stdio: stop the server process)."""
        task, self._task = self._task, None
        self._stop.set()
        if task is None:
            return
        if self.session is None:
            task.cancel()  # still opening (a handshake that never ends): nothing to wind down politely
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await asyncio.shield(task)
        except BaseException:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if self._ready is not None and self._ready.done() and not self._ready.cancelled():
            self._ready.exception()  # retrieved: no "exception never retrieved" warning


__all__ = ["CLOSE_TIMEOUT", "Connection"]
