"""The run's book of MCP calls that wait on their server: ``state["tether.mcp"]["calls"]``.

A call answered with questions (:mod:`tether.mcp.input_required`) or with a task
(:mod:`tether.mcp.tasks`) keeps what it needs to go on here, in the agent state of the run (JSON,
stored with the run's steps, carried by snapshots), keyed by its ``toolUseId``; the entry is
removed in the step that records the call's result.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..durable.indoubt import IN_DOUBT, RERUN, InDoubtCall
from ..tools.base import to_result
from ..tools.context import ToolContext
from ..types import ToolResult

STATE_KEY = "tether.mcp"
"""The agent-state key of the book."""


def calls_in(state: Mapping[str, Any]) -> dict[str, Any]:
    """The pending MCP calls in an agent state ({} when none)."""
    book = state.get(STATE_KEY)
    calls = book.get("calls") if isinstance(book, dict) else None
    return calls if isinstance(calls, dict) else {}


def calls_of(context: ToolContext) -> dict[str, Any]:
    """The pending MCP calls of the call's run ({} when none)."""
    return calls_in(context.agent.run_state.state)


def keep(context: ToolContext, entry: dict[str, Any]) -> None:
    """Keep ``entry`` as the call's entry (replacing an earlier one)."""
    book = context.agent.run_state.state.setdefault(STATE_KEY, {"calls": {}})
    book.setdefault("calls", {})[context.tool_use["toolUseId"]] = entry


def drop_later(context: ToolContext) -> None:
    """Remove the call's entry when its result is recorded (in the same step)."""
    tool_use_id = context.tool_use["toolUseId"]

    def drop() -> None:
        calls = calls_of(context)
        calls.pop(tool_use_id, None)
        if not calls:
            context.agent.run_state.state.pop(STATE_KEY, None)

    context.on_recorded(drop)


async def decide_in_doubt(context: ToolContext, details: dict[str, Any], question: str) -> ToolResult | None:
    """A call whose outcome the server cannot tell (a lost task, a retry cut by a crash) is in
    doubt, with the choices of any in-doubt call: the agent's ``reconcile`` decides when it has
    one, else the run stops with the call's ``tether.in_doubt`` interrupt. Returns the result to
    record, or None for ``"rerun"`` (the caller makes the request again, same idempotency key)."""
    call = InDoubtCall(context.run_id or "", context.tool_use, context.idempotency_key)
    reconcile = getattr(context.agent, "reconcile", None)
    if callable(reconcile):
        answer = reconcile(call)
        if inspect.isawaitable(answer):
            answer = await answer
    else:
        answer = context.interrupt(IN_DOUBT, {**call.to_reason(), **details, "question": question})
    if answer == RERUN:
        return None
    drop_later(context)
    return to_result(context.tool_use["toolUseId"], answer)


def field_of(tool_use_id: str, *names: str) -> str:
    """Where a field of a call's entry lives in the run (for errors)."""
    return f'state["{STATE_KEY}"]["calls"]["{tool_use_id}"]' + "".join(f'["{name}"]' for name in names)


__all__ = ["STATE_KEY", "calls_in", "calls_of", "decide_in_doubt", "drop_later", "field_of", "keep"]
