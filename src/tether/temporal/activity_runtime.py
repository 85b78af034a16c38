"""What every agent activity shares: the agent rebuilt with the tools its sources listed, the
conversation chains, the errors no retry can fix, heartbeats, and the run state and host an
activity drives.

:class:`AgentActivitySet` is the base of :class:`~tether.temporal.TetherActivities` (and of the
activities that settle a resume, :mod:`tether.temporal.resume_activities`); the functions here
are what those activities run a model or tool call with.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import functools
import inspect
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from temporalio import activity

from .. import errors as tether_errors
from ..loop.host import Host, LoopHost
from ..loop.state import RunState
from ..tools.decorator import FunctionTool
from ..tools.registry import ToolRegistry
from .activity_io import AgentRef, CallModelInput, CheckResumeInput, RunToolInput
from .activity_set import ActivitySet
from .claimcheck import Conversations
from .errors import to_failure

NOT_RETRYABLE: tuple[type[BaseException], ...] = (
    tether_errors.ConfigurationError,
    tether_errors.ContextWindowExhaustedError,
    tether_errors.ModelAuthError,
    tether_errors.PayloadTooLargeError,
    tether_errors.ScriptExhaustedError,
    tether_errors.StoreError,
)
"""Errors no retry of the activity can fix: the activity fails for good."""


@contextlib.contextmanager
def fatal_errors(what: str) -> Iterator[None]:
    """Turn errors that no retry can fix into non-retryable failures."""
    try:
        yield
    except NOT_RETRYABLE as exc:
        raise to_failure(exc, what) from None


class AgentActivitySet(ActivitySet):
    """An activity set that rebuilds the registry's agents and reads their conversations."""

    @functools.cached_property
    def conversations(self) -> Conversations:
        """The conversation chains of the blob store (with a cache of the ones read lately)."""
        return Conversations(self.payloads.blobs)

    def _agent(self, params: AgentRef) -> Any:
        """The agent ``params`` names, built from the registry with its config."""
        return self._build("agent", params["agent"], params.get("config"))

    def _adopt(self, agent: Any, params: CallModelInput | RunToolInput | CheckResumeInput) -> None:
        """Give a rebuilt agent the tools its sources listed (``source_tools`` of the params), with
        the idempotency the sources declared when they listed them."""
        listed = params.get("source_tools")
        if listed:
            with fatal_errors(f"cannot register the listed tools of agent {params.get('agent')!r}"):
                agent.tool_registry.adopt_listings(listed["listings"], listed["idempotent"])


def fresh_run(agent: Any, **fields: Any) -> RunState:
    """The agent's own run state (a fresh agent built for this activity) reset to ``fields``.

    Tools and hooks reach the state through their agent (``context.agent.state``), so the run
    an activity drives must be the agent's own object, filled in rather than replaced.
    """
    run: RunState = agent.run_state
    fresh = RunState(**fields)
    for name in RunState.__dataclass_fields__:
        setattr(run, name, getattr(fresh, name))
    return run


def threaded_host(agent: Any) -> LoopHost:
    """The agent's host, with its sync tools made to run in a thread.

    A sync tool built with ``run_in_thread=False`` runs on the event loop locally; on a worker
    it would block the loop, and with it the heartbeats (Temporal's async activities heartbeat
    through the loop) and every other activity of the worker. Here it gets a copy of itself
    that runs in a thread, in a registry of this activity's own: the tool objects, which may be
    shared with local agents of the same process, are not changed.
    """
    host = agent.host()
    tools: ToolRegistry = host.tools
    blocking = [
        name
        for name in tools.names
        if isinstance(tool := tools.get(name), FunctionTool) and not tool.run_in_thread and not inspect.iscoroutinefunction(tool.func)
    ]
    if not blocking:
        return host  # type: ignore[no-any-return]
    items: list[Any] = []
    for name in tools.names:
        tool = tools.get(name)
        if name in blocking:
            tool = copy.copy(tool)
            assert isinstance(tool, FunctionTool)
            tool.run_in_thread = True
        items.append(tool)
    threaded = ToolRegistry([*items, *tools.sources])
    assert isinstance(host, Host)
    return dataclasses.replace(host, tools=threaded)


class Pulse:
    """Heartbeats on stream events, at most three times per heartbeat timeout."""

    def __init__(self) -> None:
        timeout = activity.info().heartbeat_timeout
        self.enabled = bool(timeout)
        self.interval = timeout.total_seconds() / 3.0 if timeout else 0.0
        self.last = time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            activity.heartbeat()


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat while a tool or a model call runs, so a dead worker is noticed within the
    heartbeat timeout (the call itself may take far longer than that)."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return
    interval = max(timeout.total_seconds() / 3.0, 0.05)

    async def beat() -> None:
        # No beat at the start: the heartbeat timeout counts from the start, and most calls
        # end long before the first beat is due (a beat is a call into the worker's core).
        while True:
            await asyncio.sleep(interval)
            activity.heartbeat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = ["NOT_RETRYABLE", "AgentActivitySet", "Pulse", "fatal_errors", "fresh_run", "heartbeating", "threaded_host"]
