"""The activities of an agent run: describe the agent, one model call, one tool call, finish.

Each activity rebuilds the agent from the registry (name + JSON config), reads what it needs
from the :class:`BlobStore` and returns compact, JSON-only results, so no payload grows with
the conversation. They perform effects exactly as the local driver does (same stream folding,
same hooks, same tool invocation and ids), which is why a run gives the same messages here as
in-process. Failures that a retry cannot fix become non-retryable ``ApplicationError``s.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Iterator
from typing import Any

from temporalio import activity

from .._json import json_copy
from ..errors import (
    ConfigurationError,
    ContextWindowExhaustedError,
    ModelAuthError,
    ModelThrottledError,
    ScriptExhaustedError,
    StoreError,
    TetherError,
)
from ..hooks import AfterInvocation, BeforeInvocation, MessageAdded
from ..loop.host import LoopHost
from ..loop.model_call import ModelResponse, respond
from ..loop.state import RunState
from ..loop.tool_call import call_tool
from ..tools.executors import SequentialToolExecutor
from ..types import Message
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT, Conversations, compact_message, compact_result, expand_tool_use
from .errors import throttled_failure, to_failure
from .registry import AgentRegistry

TAIL = 4
"""Compact messages the workflow keeps in memory (the loop core reads only the last one)."""

_NOT_RETRYABLE: tuple[type[BaseException], ...] = (
    ConfigurationError,
    ContextWindowExhaustedError,
    ModelAuthError,
    ScriptExhaustedError,
    StoreError,
)


@contextlib.contextmanager
def _fatal_errors(what: str) -> Iterator[None]:
    """Turn errors that no retry can fix into non-retryable failures."""
    try:
        yield
    except _NOT_RETRYABLE as exc:
        raise to_failure(exc, what) from None


def state_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    """What a tool changed in the agent state (``set`` keys, ``deleted`` keys), or None.

    Concurrent tool calls each report their own changes and the workflow applies them in the
    order the calls finish, as concurrent tools writing one local state dict would.
    """
    changed = {key: value for key, value in after.items() if key not in before or before[key] != value}
    deleted = [key for key in before if key not in after]
    if not changed and not deleted:
        return None
    return {"set": json_copy(changed), "deleted": deleted}


class TetherActivities:
    """The activities a worker registers; they share one registry and one blob store."""

    def __init__(self, registry: AgentRegistry, blobs: BlobStore, *, inline_limit: int = DEFAULT_INLINE_LIMIT) -> None:
        self.registry = registry
        self.blobs = blobs
        self.conversations = Conversations(blobs)
        self.inline_limit = inline_limit

    def all(self) -> list[Any]:
        """The activity callables to register on a worker."""
        return [self.describe, self.call_model, self.run_tool, self.finish, self.invocation_hook]

    def _agent(self, params: dict[str, Any]) -> Any:
        try:
            return self.registry.build(params["agent"], params.get("config") or {})
        except TetherError as exc:
            raise to_failure(exc, f"cannot build agent {params.get('agent')!r}") from None

    def _compact(self, message: Any) -> dict[str, Any]:
        return compact_message(self.blobs, message, self.inline_limit)

    # -- describe -------------------------------------------------------------------------

    @activity.defn(name="tether.describe")
    async def describe(self, params: dict[str, Any]) -> dict[str, Any]:
        """The agent's initial run state (compact) and the settings the workflow needs."""
        agent = self._agent(params)
        run = agent.run_state
        with _fatal_errors(f"cannot store the initial messages of agent {params.get('agent')!r}"):
            compact = [self._compact(message) for message in run.messages]
        hooks = agent.hooks
        return {
            "conv": self.conversations.append(None, compact),
            "tail": compact[-TAIL:],
            "state": run.state,
            "conversation_manager_state": agent.conversation_manager.state(run),
            "system_prompt": None if run.system_prompt is None else self._compact({"role": "system", "content": run.system_prompt}),
            "settings": {
                "max_cycles": agent.limits.max_cycles,
                "max_tokens": agent.limits.max_tokens,
                "model_attempts": agent.retry.max_attempts,
                "sequential": isinstance(agent.tool_executor, SequentialToolExecutor),
                "has_tools": len(agent.tool_registry) > 0,
                "invocation_hooks": hooks.has(BeforeInvocation) or hooks.has(AfterInvocation) or hooks.has(MessageAdded),
            },
        }

    # -- model ----------------------------------------------------------------------------

    @activity.defn(name="tether.call_model")
    async def call_model(self, params: dict[str, Any]) -> dict[str, Any]:
        """Persist the pending messages, call the model once, return the compact response."""
        agent = self._agent(params)
        conversations = self.conversations
        with _fatal_errors(f"cannot read the conversation of run {params.get('run_id')!r}"):
            conv = conversations.append(params.get("conv"), params.get("pending") or [])
            loaded = conversations.load(conv)
        run = _fresh_run(
            agent,
            messages=list(loaded),
            state=params.get("state") or {},
            conversation_manager_state=dict(params.get("conversation_manager_state") or {}),
            model_state=params.get("model_state") or {},
            run_id=params.get("run_id"),
        )
        run.conversation_manager_state.pop("kind", None)
        system = params.get("system_prompt")
        if system is not None:
            with _fatal_errors(f"cannot read the system prompt of run {params.get('run_id')!r}"):
                run.system_prompt = self._expand_system(system)
        try:
            response = await self._stream(agent.host(), run, params)
        except TetherError as exc:
            if isinstance(exc, _NOT_RETRYABLE):
                raise to_failure(exc, "the model call cannot succeed") from None
            if isinstance(exc, ModelThrottledError):
                raise throttled_failure(exc) from None
            raise
        message = response.message
        for i, block in enumerate(message["content"]):
            if "toolUse" in block and not block["toolUse"].get("toolUseId"):
                block["toolUse"]["toolUseId"] = f"tooluse_{len(run.messages)}_{i}"
        out: dict[str, Any] = {
            "conv": conv,
            "message": self._compact(message),
            "stop_reason": response.stop_reason,
            "usage": response.usage,
            "latency_ms": response.latency_ms,
            "model_state": response.model_state,
            "rebased": False,
        }
        if len(run.messages) != len(loaded) or any(a is not b for a, b in zip(run.messages, loaded, strict=False)):
            out["rebased"] = True
            out["conv"] = self._rebase(conv, loaded, run.messages)
            out["length"] = len(run.messages)
            out["conversation_manager_state"] = agent.conversation_manager.state(run)
        return out

    def _expand_system(self, compact: dict[str, Any]) -> Any:
        from .claimcheck import expand_message

        return expand_message(self.blobs, compact)["content"]

    async def _stream(self, host: LoopHost, run: RunState, params: dict[str, Any]) -> ModelResponse:
        """One accepted response, with overflow reductions and hook retries exactly as locally.

        Throttling is not retried here: it fails the activity and Temporal's retry policy runs it again.
        """
        async for item in respond(
            host,
            run,
            tool_specs=host.tool_specs(None),
            tool_choice=params.get("tool_choice"),
            cycle_index=int(params.get("cycle_index", 0)),
        ):
            if isinstance(item, ModelResponse):
                return item
        raise RuntimeError("the model call ended without a response")  # only a cancel can do that; none is passed

    def _rebase(self, conv: str | None, loaded: list[Message], kept: list[Message]) -> str:
        """A new chain for ``kept`` (reusing compact nodes when ``kept`` is a suffix of ``loaded``)."""
        offset = len(loaded) - len(kept)
        if offset >= 0 and all(kept[i] is loaded[offset + i] for i in range(len(kept))):
            compact = self.conversations.compact_nodes(conv)[offset:]
        else:
            compact = [self._compact(message) for message in kept]
        return self.conversations.rebase(compact)

    # -- tools ----------------------------------------------------------------------------

    @activity.defn(name="tether.run_tool")
    async def run_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call (with its hooks); returns a compact result or the interrupt it raised."""
        agent = self._agent(params)
        before_state: dict[str, Any] = params.get("state") or {}
        run = _fresh_run(
            agent,
            state=copy.deepcopy(before_state),
            run_id=params.get("run_id"),
            interrupt_state={"interrupts": dict(params.get("interrupts") or {}), "activated": True},
        )
        with _fatal_errors(f"cannot read the input of tool call {params['tool_use'].get('toolUseId')!r}"):
            tool_use: Any = expand_tool_use(self.blobs, params["tool_use"])
        outcome = await call_tool(agent.host(), run, tool_use, guard=_heartbeating)
        if outcome.interrupt is not None:
            return {"interrupt": outcome.interrupt.to_dict()}
        assert outcome.result is not None
        out: dict[str, Any] = {
            "result": compact_result(self.blobs, outcome.result, self.inline_limit),
            "duration_ms": outcome.duration_ms,
        }
        changes = state_changes(before_state, run.state)
        if changes is not None:
            out["state_changes"] = changes
        return out

    # -- end of an invocation -------------------------------------------------------------

    @activity.defn(name="tether.finish")
    async def finish(self, params: dict[str, Any]) -> dict[str, Any]:
        """Persist the pending messages and apply the conversation manager's after-call management."""
        agent = self._agent(params)
        conversations = self.conversations
        with _fatal_errors(f"cannot read the conversation of run {params.get('run_id')!r}"):
            conv = conversations.append(params.get("conv"), params.get("pending") or [])
            loaded = conversations.load(conv)
        state = dict(params.get("conversation_manager_state") or {})
        state.pop("kind", None)
        run = RunState(messages=list(loaded), conversation_manager_state=state)
        if params.get("manage", True):
            agent.conversation_manager.apply_management(run)
        out: dict[str, Any] = {
            "conv": conv,
            "length": len(run.messages),
            "conversation_manager_state": agent.conversation_manager.state(run),
        }
        if len(run.messages) != len(loaded):
            out["conv"] = self._rebase(conv, loaded, run.messages)
        return out

    @activity.defn(name="tether.invocation_hook")
    async def invocation_hook(self, params: dict[str, Any]) -> None:
        """Fire invocation-level hooks (``BeforeInvocation``, ``AfterInvocation``, ``MessageAdded``)."""
        from .claimcheck import expand_message

        agent = self._agent(params)
        hooks = agent.hooks
        kind = params["event"]
        if kind == "before":
            await hooks.fire(BeforeInvocation(agent, resumed=bool(params.get("resumed")), resumed_from=params.get("resumed_from")))
        elif kind == "after":
            await hooks.fire(AfterInvocation(agent, resumed=bool(params.get("resumed")), resumed_from=params.get("resumed_from")))
        elif kind == "messages" and hooks.has(MessageAdded):
            for compact in params.get("messages") or []:
                await hooks.fire(MessageAdded(agent, expand_message(self.blobs, compact)))


def _fresh_run(agent: Any, **fields: Any) -> RunState:
    """The agent's own run state (a fresh agent built for this activity) reset to ``fields``.

    Tools and hooks reach the state through their agent (``context.agent.state``), so the run
    an activity drives must be the agent's own object, filled in rather than replaced.
    """
    run: RunState = agent.run_state
    fresh = RunState(**fields)
    for name in RunState.__dataclass_fields__:
        setattr(run, name, getattr(fresh, name))
    return run


@contextlib.asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat while a tool runs, so a dead worker is noticed within the heartbeat timeout."""
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return
    interval = max(timeout.total_seconds() / 3.0, 0.05)

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(interval)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = ["TAIL", "TetherActivities"]
