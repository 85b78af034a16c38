"""Typed shapes of a run's own JSON: the loop cursor, accumulated metrics and interrupt state.

These are the dicts a :class:`~tether.loop.state.RunState` holds and that travel, unchanged, in
snapshots, checkpoints, durable head rows and Temporal's carried state. They are ``TypedDict``s:
at runtime they are plain dicts (so the run state stays JSON as it is), and mypy checks every
key the code reads or writes. Data loaded from outside (a snapshot, a checkpoint, a store row, a
workflow payload) is ``dict[str, Any]`` until it has been validated; only then is it treated as
one of these shapes.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from .content import JSONValue, ToolResult

# The same literals as ``tether.loop.state.Phase`` and its checkpoint positions. They are spelled
# out here because ``tether.types`` cannot import ``tether.loop`` (the loop imports the types);
# ``Cursor.to_dict`` returning a ``CursorData`` makes mypy check that the two agree.
CursorPhase: TypeAlias = Literal["model", "tools", "idle"]
"""Where a cursor stands: ``model`` (a model call is next), ``tools`` (tool calls run), ``idle``."""

PausePosition: TypeAlias = Literal["after_model", "after_tools"]
"""A checkpoint position a cursor may be about to pause at."""


class CursorData(TypedDict):
    """What :meth:`tether.loop.state.Cursor.to_dict` returns: the position inside an invocation.

    ``results`` holds the tool results of the open cycle by tool-use id and ``started`` the ids
    of the tool calls that began. Older data may lack the keys after ``cycle_index``;
    ``Cursor.from_dict`` reads those with defaults, so it accepts any mapping.
    """

    phase: CursorPhase
    cycle_index: int
    invocation_cycles: int
    invocation_tokens: int
    results: dict[str, ToolResult]
    started: list[str]
    pending_pause: PausePosition | None
    structured_output: JSONValue
    corrective_turn_used: bool
    stop_reason: str | None
    trace: NotRequired[dict[str, str]]
    input_estimate: NotRequired[int]


class UsageTotals(TypedDict):
    """Token usage summed over a run (``MetricsData["usage"]``)."""

    input_tokens: int
    output_tokens: int
    total_tokens: int


class ToolFigures(TypedDict):
    """The figures of one tool name (``MetricsData["tools"][name]``), see ``record_tool``."""

    calls: int
    errors: int
    total_duration_ms: float


class SpendData(TypedDict):
    """The spend figures a budget needs besides usage and counts (``MetricsData["spend"]``),
    written only by runs that have a budget (see :mod:`tether.budget.spend`)."""

    cost_usd: float
    wall_s: float
    nested_tool_calls: int


class MetricsData(TypedDict):
    """Accumulated run metrics, as :func:`tether.loop.state.new_metrics` creates them.

    The same shape holds the part of one invocation (:func:`tether.metrics.diff_metrics`).
    ``spend`` is present once a run with a budget spent something (:mod:`tether.budget`).
    """

    cycle_count: int
    tool_call_count: int
    model_call_count: int
    usage: UsageTotals
    model_latency_ms: float
    tools: dict[str, ToolFigures]
    spend: NotRequired[SpendData]


class InterruptRecord(TypedDict):
    """One interrupt in ``InterruptState["interrupts"]`` (:meth:`tether.Interrupt.to_dict`).

    ``source`` is ``"tool"``, ``"hook"`` or ``"durable"`` (an in-doubt tool call of a durable
    run); ``response`` is present once the interrupt is answered.
    """

    id: str
    name: str
    reason: JSONValue
    source: str
    tool_use_id: str | None
    response: NotRequired[JSONValue]


class InterruptState(TypedDict, total=False):
    """A run's ``interrupt_state`` (see :mod:`tether.interrupts`); empty when nothing is interrupted.

    Every key is optional: the dict starts empty, and a snapshot written by hand may hold any
    subset (it is validated on load).

    - ``interrupts``: id -> record, in tool-call order;
    - ``activated``: true while the run is stopped (or about to stop) for interrupts;
    - ``context``: the cursor of the interrupted cycle (the results of the tools that finished);
    - ``metrics``: the run's metrics at the stop (consumed by the resume);
    - ``output_tool``: the structured-output tool of the interrupted call, if any;
    - ``manifest``: the run manifest of the agent that stopped (see :mod:`tether.manifest`).
    """

    interrupts: dict[str, InterruptRecord]
    activated: bool
    context: CursorData
    metrics: MetricsData
    output_tool: str
    manifest: dict[str, Any]


__all__ = [
    "CursorData",
    "CursorPhase",
    "InterruptRecord",
    "InterruptState",
    "MetricsData",
    "PausePosition",
    "SpendData",
    "ToolFigures",
    "UsageTotals",
]
