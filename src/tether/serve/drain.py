"""A graceful shutdown of ``tether serve``: stop taking work, let tool calls finish, hand runs over.

On SIGTERM (or Ctrl-C) the server *drains* (:meth:`~tether.serve.runs.RunManager.begin_drain`):

1. it stops accepting connections and refuses new work (a new run, a new turn, answers, a retry)
   with ``503`` and ``Retry-After``: the client sends it again, to another process on the store;
2. every run executing here goes on to the end of its current step: a model call under way
   returns, a tool call under way returns and its result is stored. Before its next model call
   the :class:`HandOver` hook stops it: the run is recorded ``stopped`` with the stop reason
   ``handed over (...)`` at a step boundary, so the next server on the store resumes it with
   nothing in doubt and nothing run twice;
3. event streams of runs not executing here close at once, those of the runs here once their run
   is handed over, without an ``end`` event: clients reconnect with their last id, to the next
   server;
4. a run still inside its step when the grace period (``tether serve --grace``, default 30 s)
   runs out is cancelled there (recorded ``stopped``, also *handed over*); the call under way is
   then in doubt for the next server, as after a crash.

A run stopped this way is ``stopped`` in the store, and its stop reason says it was handed over,
never that it was cancelled.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from types import FrameType
from typing import Any

from ..errors import RequestError
from ..hooks import BeforeInvocation, BeforeModelCall, HookRegistry
from .registry import SERVE_KEY

GRACE = 30.0
"""The default grace period, in seconds."""
RETRY_AFTER = 5
"""The ``Retry-After`` (seconds) of new work refused while draining."""


def server_name() -> str:
    """This server process: ``host:pid`` (recorded in the runs it executes, logged by a takeover)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def handover_reason(*, late: bool = False, grace: float = GRACE) -> str:
    """The stop reason of a run handed over at shutdown."""
    if late:
        return f"handed over (the server stopped; its step was still under way after the {grace:g} s grace period)"
    return "handed over (the server stopped; the next server goes on with the run)"


class Drain:
    """The shutdown state of one server: whether it drains, and until when."""

    def __init__(self, grace: float = GRACE) -> None:
        self.grace = grace
        self.deadline: float | None = None

    @property
    def draining(self) -> bool:
        return self.deadline is not None

    def begin(self) -> bool:
        """Start draining now; False when it already had."""
        if self.deadline is not None:
            return False
        self.deadline = time.monotonic() + self.grace
        return True

    def remaining(self) -> float:
        """Seconds left of the grace period (0 when over; the whole period when not draining)."""
        if self.deadline is None:
            return self.grace
        return max(0.0, self.deadline - time.monotonic())

    def refuse_new_work(self) -> None:
        """Raise a 503 while draining: the request is for another server (nothing was changed)."""
        if self.draining:
            raise RequestError(f"this server is shutting down; send the request again (retry in {RETRY_AFTER} s)", status=503)


class HandOver:
    """The hook that stops a served agent's run at its next model call once the server drains
    (the step before is stored: its tool calls returned and their results are recorded), and
    records the server executing the run in its ``tether.serve`` state."""

    def __init__(self, drain: Drain) -> None:
        self.drain = drain

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeInvocation, self.before_invocation)
        registry.add_callback(BeforeModelCall, self.before_model)

    def before_invocation(self, event: BeforeInvocation) -> None:
        state = event.agent.state
        marker = state.get(SERVE_KEY) or {}
        if isinstance(marker, dict) and marker.get("server") != server_name():
            state.set(SERVE_KEY, {**marker, "server": server_name()})

    def before_model(self, event: BeforeModelCall) -> None:
        if self.drain.draining:
            raise asyncio.CancelledError(handover_reason())


def previous_server(head: dict[str, Any] | None) -> str | None:
    """The server that last executed a stored run (``host:pid``), when it recorded itself."""
    state = (head or {}).get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    server = marker.get("server") if isinstance(marker, dict) else None
    return server if isinstance(server, str) else None


def install(server: Any, manager: Any) -> None:
    """Make ``server`` (a ``uvicorn.Server``) start ``manager``'s drain at the first SIGTERM or
    Ctrl-C, before uvicorn waits for open connections (the streams close once their run is handed
    over); a second Ctrl-C still forces the exit."""
    original = server.handle_exit

    def handle_exit(sig: int, frame: FrameType | None) -> None:
        original(sig, frame)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_soon_threadsafe(manager.begin_drain)

    server.handle_exit = handle_exit


__all__ = ["GRACE", "Drain", "HandOver", "handover_reason", "install", "previous_server", "server_name"]
