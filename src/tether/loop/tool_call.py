"""One tool call, as every driver performs it: hooks, interrupts, structured output, the tool.

The local driver and the Temporal tool activity both run :func:`call_tool`, so a tool call
behaves the same in-process and on a worker. The caller folds the outcome into the run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import pydantic

from ..hooks import AfterToolCall, BeforeToolCall
from ..interrupts import Interrupt, InterruptRaiser, InterruptSignal
from ..tools.base import Tool, error_result, validation_message
from ..tools.context import ToolContext
from ..types import ToolResult, ToolUse
from .host import LoopHost
from .state import RunState
from .tracing import NULL_TRACER, Span


@dataclass(slots=True)
class ToolOutcome:
    """What one tool call produced: a result, or the interrupt it raised (then no result)."""

    result: ToolResult | None
    interrupt: Interrupt | None = None
    duration_ms: float = 0.0
    structured_output: Any = None


def structured_result(output_model: type[pydantic.BaseModel], tool_use: ToolUse) -> tuple[ToolResult, Any]:
    """Validate a call of the structured-output tool: an error result the model can correct, or the value."""
    tool_use_id = tool_use["toolUseId"]
    try:
        value = output_model.model_validate(tool_use["input"])
    except pydantic.ValidationError as exc:
        text = f"Invalid structured output: {validation_message(exc)}. Call the tool again with valid input."
        return error_result(tool_use_id, text), None
    recorded: ToolResult = {"toolUseId": tool_use_id, "status": "success", "content": [{"text": "Structured output recorded."}]}
    return recorded, value.model_dump(mode="json")


def call_tool(
    host: LoopHost,
    run: RunState,
    tool_use: ToolUse,
    *,
    invocation_state: dict[str, Any] | None = None,
    output_model: type[pydantic.BaseModel] | None = None,
    output_tool: str | None = None,
    on_started: Callable[[], Awaitable[None]] | None = None,
    guard: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    parent: Span | None = None,
) -> Awaitable[ToolOutcome]:
    """Run ``tool_use`` with its ``BeforeToolCall``/``AfterToolCall`` hooks.

    ``on_started`` runs once the call is going to happen (after the before-hooks, which may
    still interrupt it): the durable driver records the start there. ``guard`` wraps the tool
    itself (the Temporal activity heartbeats inside it). Interrupts raised by a hook or by the
    tool come back in the outcome; every other failure is already an error result. The call is
    one ``tool_call`` span under ``parent``.
    """
    call = _call_tool(host, run, tool_use, invocation_state, output_model, output_tool, on_started, guard)
    if host.tracer is NULL_TRACER:
        return call  # no span, no extra frame
    return _traced(host, tool_use, call, parent)


async def _traced(host: LoopHost, tool_use: ToolUse, call: Awaitable[ToolOutcome], parent: Span | None) -> ToolOutcome:
    """``call`` inside one ``tool_call`` span."""
    span = host.tracer.start_span("tool_call", tool_use["name"], {"tether.tool_use_id": tool_use["toolUseId"]}, parent)
    try:
        outcome = await call
    except BaseException as exc:
        span.end(exc if isinstance(exc, Exception) else None)  # cancellation is not a failure of the call
        raise
    span.set_attributes(_outcome_attributes(outcome))
    span.end()
    return outcome


def _outcome_attributes(outcome: ToolOutcome) -> dict[str, str | float]:
    if outcome.interrupt is not None:
        return {"tether.status": "interrupted", "tether.interrupt": outcome.interrupt.name}
    assert outcome.result is not None
    return {"tether.status": outcome.result["status"], "tether.duration_ms": outcome.duration_ms}


async def _call_tool(
    host: LoopHost,
    run: RunState,
    tool_use: ToolUse,
    invocation_state: dict[str, Any] | None,
    output_model: type[pydantic.BaseModel] | None,
    output_tool: str | None,
    on_started: Callable[[], Awaitable[None]] | None,
    guard: Callable[[], AbstractAsyncContextManager[None]] | None,
) -> ToolOutcome:
    hooks = host.hooks
    agent = host.owner
    tool_use_id = tool_use["toolUseId"]
    name = tool_use["name"]
    selected: Tool | None = host.tools.get(name)
    state = invocation_state if invocation_state is not None else {}
    result: ToolResult | None = None
    if hooks.has(BeforeToolCall):
        before = BeforeToolCall(
            agent,
            tool_use=tool_use,
            selected_tool=selected,
            invocation_state=state,
            _raiser=InterruptRaiser(run.interrupt_state, "hook", tool_use_id),
        )
        try:
            await hooks.fire(before)
        except InterruptSignal as signal:
            return ToolOutcome(None, signal.interrupt)
        selected = before.selected_tool
        if before.cancel_tool:
            text = before.cancel_tool if isinstance(before.cancel_tool, str) else "Tool call cancelled by a hook."
            result = error_result(tool_use_id, text)
    if on_started is not None:
        await on_started()
    structured: Any = None
    started = time.perf_counter()
    if result is None:
        if output_model is not None and name == output_tool:
            result, structured = structured_result(output_model, tool_use)
        elif selected is None:
            known = ", ".join(host.tools.names) or "none"
            result = error_result(tool_use_id, f"Unknown tool {name!r}. Available tools: {known}.")
        else:
            context = ToolContext(
                tool_use=tool_use,
                agent=agent,
                invocation_state=state,
                run_id=run.run_id,
                _raiser=InterruptRaiser(run.interrupt_state, "tool", tool_use_id),
            )
            try:
                async with guard() if guard is not None else contextlib.nullcontext():
                    result = await selected.invoke(tool_use, context)
            except InterruptSignal as signal:
                return ToolOutcome(None, signal.interrupt)
    duration_ms = (time.perf_counter() - started) * 1000.0
    if hooks.has(AfterToolCall):
        after = await hooks.fire(AfterToolCall(agent, tool_use=tool_use, selected_tool=selected, result=result))
        if after.result is not None:
            result = after.result
    return ToolOutcome(result, None, duration_ms, structured)
