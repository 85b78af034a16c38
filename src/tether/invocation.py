"""One invocation of an agent, run in-process: begin the turn, drive the loop, finish the turn.

This is the orchestrator above the loop. It receives everything as explicit collaborators:
the :class:`~tether.loop.host.LoopHost` (services), the :class:`~tether.loop.state.RunState`
(the truth), the normalized prompt, the per-call :class:`InvocationOptions` and the driver
factory (the local driver, or the durable one that persists at every step). It never sees the
``Agent``; the durable runner and the agent facade both call :func:`invoke_stream`.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pydantic

from ._prompt import Prompt
from .budget import BudgetPolicy
from .events import AgentEvent
from .hooks import AfterInvocation, BeforeInvocation, MessageAdded
from .loop.core import CoreConfig, LoopCore
from .loop.driver import DriverOptions, LocalDriver
from .loop.host import LoopHost
from .loop.state import CheckpointPosition, RunState
from .loop.tracing import NULL_TRACER, Span, span_ids
from .manifest import ResumeCheck
from .result import AgentResult
from .turn import begin_turn, finish_turn

DriverFactory = Callable[[LoopHost, LoopCore, DriverOptions, threading.Event], LocalDriver]
"""Builds the driver of one invocation (``LocalDriver`` itself is one)."""


@dataclass(frozen=True)
class InvocationOptions:
    """What one call of an agent asks for, besides the prompt.

    Args:
        checkpointing: The positions the run pauses at.
        output_model: The structured-output model, if any.
        output_tool: Its tool name (derived by the caller from ``output_model``).
        invocation_state: The caller's per-call dict handed to tools and hooks (not persisted).
        forward_deltas: Yield ``text_delta``/``reasoning_delta`` events.
        cancel: Set (from any thread) to stop at the next step.
        budget: The run's budget for this call, priced (None: no budget).
        resume_check: The agent's manifest, migrations and allowed differences: a resume of
            an interrupt or a checkpoint is judged against it (see :mod:`tether.manifest`), and
            an interrupt or checkpoint records its manifest. None: no check.
    """

    checkpointing: frozenset[CheckpointPosition] = frozenset()
    output_model: type[pydantic.BaseModel] | None = None
    output_tool: str | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    forward_deltas: bool = True
    cancel: threading.Event = field(default_factory=threading.Event)
    budget: BudgetPolicy | None = None
    resume_check: ResumeCheck | None = None


async def invoke_stream(
    host: LoopHost,
    run: RunState,
    prompt: Prompt,
    options: InvocationOptions,
    driver_factory: DriverFactory = LocalDriver,
) -> AsyncIterator[AgentEvent]:
    """Run one invocation on ``run``; yields stream events and finally ``{"type": "result", ...}``.

    Args:
        host: The services the loop uses (hooks, model, tools, ...).
        run: The run state, changed in place.
        prompt: The normalized prompt (see :func:`tether._prompt.normalize_prompt`).
        options: The per-call options.
        driver_factory: Builds the driver that performs the core's effects.
    """
    manager = host.conversation_manager
    turn = begin_turn(
        run, prompt, output_tool=options.output_tool, checkpointing=options.checkpointing, manager=manager, check=options.resume_check
    )
    hooks = host.hooks
    if hooks.has(BeforeInvocation):
        before = BeforeInvocation(
            host.owner, resumed=turn.resumed, resumed_from=turn.resumed_from, messages=None if turn.resumed else prompt.messages
        )
        await hooks.fire(before)
        if not turn.resumed and before.messages is not prompt.messages:  # a hook set other input messages
            prompt = replace(prompt, messages=list(before.messages or []))
    core = LoopCore(
        run,
        CoreConfig(
            checkpoint_positions=options.checkpointing,
            max_cycles=host.limits.max_cycles,
            max_tokens=host.limits.max_tokens,
            output_tool=options.output_tool,
            has_other_tools=len(host.tools) > 0,
            budget=options.budget,
        ),
    )
    span = _invocation_span(host, run, turn.resumed_from)
    result: AgentResult | None = None
    error: Exception | None = None
    driver: LocalDriver | None = None
    try:
        added = turn.start(core, prompt)
        if host.tracer is not NULL_TRACER:
            run.cursor.trace = span_ids(span)  # after start: a new call starts a new cursor
        driver_options = DriverOptions(
            invocation_state=options.invocation_state,
            output_model=options.output_model,
            output_tool=options.output_tool,
            forward_deltas=options.forward_deltas,
            trace_parent=span,
        )
        driver = driver_factory(host, core, driver_options, options.cancel)
        if not turn.resumed:
            # Recorded (a durable run stores its turn's first step) before anyone hears of the
            # prompt, as the driver does for every later message: a caller that saw the prompt's
            # event finds the run stored (``tether serve`` answers a new run's POST on it).
            await driver.on_messages(added)
        if hooks.has(MessageAdded):
            for message in added:
                await hooks.fire(MessageAdded(host.owner, message))
        for message in added:
            yield {"type": "message", "message": message}
        async for event in driver.run():
            yield event
        manifest = None if options.resume_check is None else options.resume_check.manifest
        result = finish_turn(
            run, driver.final, turn, manager=manager, output_model=options.output_model, output_tool=options.output_tool, manifest=manifest
        )
        span.set_attributes({"tether.stop_reason": result.stop_reason, "tether.cycles": result.metrics.invocation.cycle_count})
    except Exception as exc:
        error = exc
        raise
    finally:
        try:
            if driver is not None:
                await driver.aclose()  # before AfterInvocation: the invocation's HTTP client and open transactions
            if hooks.has(AfterInvocation):
                await hooks.fire(AfterInvocation(host.owner, result=result, resumed=turn.resumed, resumed_from=turn.resumed_from))
        finally:
            span.end(error)
    assert result is not None  # finish_turn returned it: an exception would have left above
    yield {"type": "result", "result": result}


def _invocation_span(host: LoopHost, run: RunState, resumed_from: str | None) -> Span:
    """The invocation's span; a resumed one carries the ids of the span that worked on the run
    before (stored in the cursor) as ``tether.link.*`` attributes, for a span link."""
    tracer = host.tracer
    if tracer is NULL_TRACER:
        return tracer.start_span("invocation", host.name, {})
    attributes: dict[str, str | bool] = {
        "tether.run_id": run.run_id or "",
        "tether.resumed": resumed_from is not None,
        "tether.resumed_from": resumed_from or "",
    }
    linked = run.cursor.trace if resumed_from is not None else None
    if linked is not None:
        attributes["tether.link.trace_id"] = linked["trace_id"]
        attributes["tether.link.span_id"] = linked["span_id"]
    return tracer.start_span("invocation", host.name, attributes)


__all__ = ["DriverFactory", "InvocationOptions", "invoke_stream"]
