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

from ..budget import Budget
from ..effects.http import keyed_call
from ..effects.scope import EffectScope
from ..hooks import AfterToolCall, BeforeToolCall
from ..interrupts import Interrupt, InterruptRaiser, InterruptSignal, PauseSignal
from ..metrics import MS_DIGITS
from ..tools.base import Tool, error_result, validation_message
from ..tools.context import ToolContext
from ..types import LoopEvent, ToolResult, ToolUse
from .host import LoopHost
from .journal import StateJournal
from .state import RunState
from .tracing import NULL_SPAN, NULL_TRACER, Span, content_recorder


@dataclass(slots=True)
class ToolOutcome:
    """What one tool call produced: a result, or the interrupt it raised, or (``paused``) a
    pause at a checkpoint (then no result). ``on_recorded`` is what the tool asked to apply to
    the run with its result (:meth:`~tether.tools.context.ToolContext.on_recorded`): the driver
    runs it when it records the result."""

    result: ToolResult | None
    interrupt: Interrupt | None = None
    duration_ms: float = 0.0
    structured_output: Any = None
    paused: bool = False
    on_recorded: list[Callable[[], None]] | None = None

    def apply_recorded(self) -> None:
        """Run ``on_recorded`` (once: with the result, in the step that records it)."""
        if self.on_recorded and self.result is not None:
            for apply in self.on_recorded:
                apply()
        self.on_recorded = None


def structured_result(output_model: type[pydantic.BaseModel], tool_use: ToolUse) -> tuple[ToolResult, Any]:
    """Validate a call of the structured-output tool: an error result the model can correct, or the value."""
    tool_use_id = tool_use["toolUseId"]
    try:
        value = output_model.model_validate(tool_use["input"])
    except pydantic.ValidationError as exc:
        text = f"Invalid structured output: {validation_message(exc)}. Call the tool again with valid input."
        return error_result(tool_use_id, text), None
    # Strands' wording, so a transcript reads the same on both
    text = f"Successfully validated {output_model.__name__} structured output"
    recorded: ToolResult = {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}
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
    one ``tool_call`` span under ``parent``. :func:`begin_call` and :meth:`PendingCall.finish`
    are the same call in two steps.
    """
    call = _call_tool(host, run, tool_use, invocation_state, output_model, output_tool, on_started, guard)
    if host.tracer is NULL_TRACER:
        return call  # no span, no extra frame
    return _traced(host, run, tool_use, call, parent)


async def _traced(host: LoopHost, run: RunState, tool_use: ToolUse, call: Awaitable[ToolOutcome], parent: Span | None) -> ToolOutcome:
    """``call`` inside one ``tool_call`` span."""
    span = _start_span(host, run, tool_use, parent)
    try:
        outcome = await call
    except BaseException as exc:
        span.end(exc if isinstance(exc, Exception) else None)  # cancellation is not a failure of the call
        raise
    _end_span(host, span, outcome)
    return outcome


def _start_span(host: LoopHost, run: RunState, tool_use: ToolUse, parent: Span | None) -> Span:
    """The call's ``tool_call`` span (with its arguments, when the tracer records content)."""
    attributes: dict[str, str | int] = {"tether.tool_use_id": tool_use["toolUseId"], "tether.cycle_index": run.cursor.cycle_index}
    span = host.tracer.start_span("tool_call", tool_use["name"], attributes, parent)
    record = content_recorder(host.tracer, span)
    if record is not None:
        record("tool_arguments", tool_use["input"])
    return span


def _end_span(host: LoopHost, span: Span, outcome: ToolOutcome) -> None:
    """Close a call's span with its outcome (and its result, when the tracer records content)."""
    span.set_attributes(_outcome_attributes(outcome))
    if outcome.result is not None:
        record = content_recorder(host.tracer, span)
        if record is not None:
            record("tool_result", outcome.result)
    span.end()


def _outcome_attributes(outcome: ToolOutcome) -> dict[str, str | float]:
    if outcome.interrupt is not None:
        return {"tether.status": "interrupted", "tether.interrupt": outcome.interrupt.name}
    if outcome.paused:
        return {"tether.status": "paused"}
    assert outcome.result is not None
    return {"tether.status": outcome.result["status"], "tether.duration_ms": outcome.duration_ms}


@dataclass(slots=True)
class PendingCall:
    """A tool call its before-hooks let through: what :meth:`finish` runs.

    A driver announces the call (``tool_start``) and records its start between
    :func:`begin_call` and :meth:`finish`; one that gives up in between calls :meth:`abandon`.
    """

    host: LoopHost
    run: RunState
    tool_use: ToolUse
    selected: Tool | None
    invocation_state: dict[str, Any]
    result: ToolResult | None
    span: Span
    emit: Callable[[LoopEvent], None] | None = None
    pausable: bool = False
    journal: StateJournal | None = None
    budget: Budget | None = None
    effects: EffectScope | None = None
    """The invocation's effect scope (``context.http``, ``context.transaction()``); None: the
    call gets a scope of its own, closed when it ends."""
    save: Callable[[], Awaitable[None]] | None = None
    """Stores the run now (``context.save()``; None: nothing to store, not a durable run)."""
    cancelled: Callable[[], bool] | None = None
    """Whether the invocation was asked to stop (``context.cancel_requested``)."""

    async def finish(
        self,
        *,
        output_model: type[pydantic.BaseModel] | None = None,
        output_tool: str | None = None,
        guard: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    ) -> ToolOutcome:
        """Run the tool (unless a hook already decided the result) and its after-hooks.

        Args:
            output_model: The structured-output model, if any.
            output_tool: Its tool name: a call of it is validated instead of run.
            guard: Wraps the tool itself (the Temporal activity heartbeats inside it).
        """
        try:
            outcome = await _finish(self, output_model, output_tool, guard)
        except BaseException as exc:
            self.abandon(exc)
            raise
        _end_span(self.host, self.span, outcome)
        return outcome

    def abandon(self, error: BaseException | None = None) -> None:
        """End the call's span without running it (the invocation stopped first)."""
        self.span.end(error if isinstance(error, Exception) else None)


async def begin_call(
    host: LoopHost,
    run: RunState,
    tool_use: ToolUse,
    *,
    invocation_state: dict[str, Any] | None = None,
    parent: Span | None = None,
    journal: StateJournal | None = None,
) -> PendingCall | ToolOutcome:
    """Open the call's span and fire its ``BeforeToolCall`` hooks.

    Args:
        host: The loop's services (hooks, tools, tracer).
        run: The run the call belongs to (its interrupt state).
        tool_use: The call.
        invocation_state: The caller's per-call dict handed to hooks and the tool.
        parent: The span the call's ``tool_call`` span goes under.
        journal: The run's state journal: the agent-state writes of the call's hooks and tool
            are noted there under its tool-use id (registered by the caller).

    Returns:
        The call to :meth:`~PendingCall.finish`, or the outcome of a hook's interrupt.
    """
    span = _start_span(host, run, tool_use, parent)
    try:
        pending = await _before(host, run, tool_use, invocation_state if invocation_state is not None else {}, span, journal)
    except BaseException as exc:
        span.end(exc if isinstance(exc, Exception) else None)
        raise
    if isinstance(pending, ToolOutcome):
        _end_span(host, span, pending)
    return pending


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
    pending = await _before(host, run, tool_use, invocation_state if invocation_state is not None else {}, NULL_SPAN)
    if isinstance(pending, ToolOutcome):
        return pending
    if on_started is not None:
        await on_started()
    return await _finish(pending, output_model, output_tool, guard)


async def _before(
    host: LoopHost, run: RunState, tool_use: ToolUse, state: dict[str, Any], span: Span, journal: StateJournal | None = None
) -> PendingCall | ToolOutcome:
    hooks = host.hooks
    tool_use_id = tool_use["toolUseId"]
    selected: Tool | None = host.tools.get(tool_use["name"])
    result: ToolResult | None = None
    if hooks.has(BeforeToolCall):
        before = BeforeToolCall(
            host.owner,
            tool_use=tool_use,
            selected_tool=selected,
            invocation_state=state,
            _raiser=InterruptRaiser(run.interrupt_state, "hook", tool_use_id),
        )
        try:
            with _attributed(journal, tool_use_id):
                await hooks.fire(before)
        except InterruptSignal as signal:
            return ToolOutcome(None, signal.interrupt)
        selected = before.selected_tool
        if before.cancel_tool:
            text = before.cancel_tool if isinstance(before.cancel_tool, str) else "Tool call cancelled by a hook."
            result = error_result(tool_use_id, text)
    return PendingCall(host, run, tool_use, selected, state, result, span, journal=journal)


def _attributed(journal: StateJournal | None, tool_use_id: str) -> contextlib.AbstractContextManager[None]:
    """Agent-state reads and writes in the block belong to call ``tool_use_id`` (with a journal)."""
    return contextlib.nullcontext() if journal is None else journal.active(tool_use_id)


async def _finish(
    call: PendingCall,
    output_model: type[pydantic.BaseModel] | None,
    output_tool: str | None,
    guard: Callable[[], AbstractAsyncContextManager[None]] | None,
) -> ToolOutcome:
    host, run, tool_use, selected, result = call.host, call.run, call.tool_use, call.selected, call.result
    tool_use_id = tool_use["toolUseId"]
    name = tool_use["name"]
    structured: Any = None
    recorded: list[Callable[[], None]] | None = None
    started = time.perf_counter()
    effects = call.effects or EffectScope()
    try:
        if result is None and output_model is not None and name == output_tool:
            result, structured = structured_result(output_model, tool_use)
        elif result is None and selected is None:
            known = ", ".join(host.tools.names) or "none"
            result = error_result(tool_use_id, f"Unknown tool {name!r}. Available tools: {known}.")
        elif result is None:
            assert selected is not None
            context = ToolContext(
                tool_use=tool_use,
                agent=host.owner,
                invocation_state=call.invocation_state,
                run_id=run.run_id,
                pausable=call.pausable,
                budget=call.budget,
                _raiser=InterruptRaiser(run.interrupt_state, "tool", tool_use_id),
                _emit=call.emit,
                _effects=effects,
                _save=call.save,
                _cancelled=call.cancelled,
            )
            try:
                async with guard() if guard is not None else contextlib.nullcontext():
                    with _attributed(call.journal, tool_use_id), keyed_call(context.idempotency_key):
                        result = await selected.invoke(tool_use, context)
                recorded = context.recorded() or None
            except InterruptSignal as signal:
                await effects.end_call(tool_use_id, None)
                return ToolOutcome(None, signal.interrupt)
            except PauseSignal:
                await effects.end_call(tool_use_id, None)
                if call.pausable:
                    return ToolOutcome(None, paused=True)
                result = error_result(tool_use_id, f"Tool {name!r} paused at a checkpoint, but this run cannot pause during a tool call.")
        duration_ms = round((time.perf_counter() - started) * 1000.0, MS_DIGITS)
        if host.hooks.has(AfterToolCall):
            with _attributed(call.journal, tool_use_id):
                after = await host.hooks.fire(AfterToolCall(host.owner, tool_use=tool_use, selected_tool=selected, result=result))
            if after.result is not None:
                result = after.result
        if effects.transactions is not None:
            settle = await effects.end_call(tool_use_id, result)  # the call's transaction commits with the recorded result
            if settle is not None:
                recorded = [*(recorded or []), settle]
    except BaseException:
        if effects.transactions is not None:
            await effects.end_call(tool_use_id, None)  # no result will be recorded: its writes roll back
        raise
    finally:
        if call.effects is None:
            await effects.aclose()
    return ToolOutcome(result, None, duration_ms, structured, on_recorded=recorded)
