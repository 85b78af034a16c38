"""`RunState`: the whole truth about a run, as JSON-ready data.

Nothing about a run lives anywhere else: the loop core reads and writes only this object, so a
snapshot, a checkpoint, a durable store row and a Temporal workflow all carry the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..types import CursorData, InterruptState, Message, MetricsData, SystemContentBlock, ToolResult

Phase: TypeAlias = Literal["model", "tools", "idle"]
CheckpointPosition: TypeAlias = Literal["after_model", "after_tools"]
"""A cycle boundary where a run can pause with a checkpoint (see :mod:`tether.checkpoint`)."""
CHECKPOINT_POSITIONS: tuple[CheckpointPosition, ...] = ("after_model", "after_tools")
"""Every checkpoint position, in cycle order (not the step positions of the durable history)."""


def new_metrics() -> MetricsData:
    """Empty accumulated metrics (JSON)."""
    return {
        "cycle_count": 0,
        "tool_call_count": 0,
        "model_call_count": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "model_latency_ms": 0.0,
        "tools": {},
    }


@dataclass
class Cursor:
    """Where the run is inside the current invocation.

    ``phase`` is ``"model"`` when the next step is a model call, ``"tools"`` when the last
    message is an assistant message whose tool calls are being run, ``"idle"`` between
    invocations. ``results`` holds the tool results of the current cycle recorded so far, by
    tool-use id; ``started`` the ids of tool calls that began (for in-doubt detection).
    """

    phase: Phase = "idle"
    cycle_index: int = 0
    invocation_cycles: int = 0
    invocation_tokens: int = 0
    results: dict[str, ToolResult] = field(default_factory=dict)
    started: list[str] = field(default_factory=list)
    pending_pause: CheckpointPosition | None = None
    structured_output: Any = None
    corrective_turn_used: bool = False
    stop_reason: str | None = None
    trace: dict[str, str] | None = None
    input_estimate: int | None = None

    def to_dict(self) -> CursorData:
        """The cursor as JSON data (a new dict; ``results`` and ``started`` are copies).

        ``trace`` (the ids of the invocation span that last worked on the run, so a resumed
        invocation can link to it) is written only when set: with tracing off the data is
        exactly what it was before tracing existed. ``input_estimate`` (the estimated input
        tokens of the next model request, kept by runs with a budget) likewise.
        """
        data: CursorData = {
            "phase": self.phase,
            "cycle_index": self.cycle_index,
            "invocation_cycles": self.invocation_cycles,
            "invocation_tokens": self.invocation_tokens,
            "results": dict(self.results),
            "started": list(self.started),
            "pending_pause": self.pending_pause,
            "structured_output": self.structured_output,
            "corrective_turn_used": self.corrective_turn_used,
            "stop_reason": self.stop_reason,
        }
        if self.trace is not None:
            data["trace"] = dict(self.trace)
        if self.input_estimate is not None:
            data["input_estimate"] = self.input_estimate
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cursor:
        """A cursor from :meth:`to_dict` data; keys after ``cycle_index`` may be missing (older data)."""
        return cls(
            phase=data["phase"],
            cycle_index=int(data["cycle_index"]),
            invocation_cycles=int(data.get("invocation_cycles", 0)),
            invocation_tokens=int(data.get("invocation_tokens", 0)),
            results=dict(data.get("results") or {}),
            started=list(data.get("started") or []),
            pending_pause=data.get("pending_pause"),
            structured_output=data.get("structured_output"),
            corrective_turn_used=bool(data.get("corrective_turn_used", False)),
            stop_reason=data.get("stop_reason"),
            trace=trace_ids(data.get("trace")),
            input_estimate=_estimate(data.get("input_estimate")),
        )


def _estimate(value: Any) -> int | None:
    """A stored input estimate, or None when absent or malformed (it is then estimated again)."""
    return value if type(value) is int and value >= 0 else None


def trace_ids(value: Any) -> dict[str, str] | None:
    """Stored span ids (``{"trace_id", "span_id"}``, hex text) or None when absent or malformed:
    they only ever make a span link, so bad ones are dropped rather than failing a resume."""
    if type(value) is not dict:
        return None
    trace_id, span_id = value.get("trace_id"), value.get("span_id")
    if type(trace_id) is not str or type(span_id) is not str:
        return None
    return {"trace_id": trace_id, "span_id": span_id}


@dataclass
class RunState:
    """The state of an agent and its run.

    The first six fields are the ones a snapshot captures; ``cursor`` is the position inside
    an invocation and ``metrics`` the accumulated metrics of the whole run.
    """

    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    conversation_manager_state: dict[str, Any] = field(default_factory=dict)
    interrupt_state: InterruptState = field(default_factory=InterruptState)
    system_prompt: list[SystemContentBlock] | None = None
    model_state: dict[str, Any] = field(default_factory=dict)
    cursor: Cursor = field(default_factory=Cursor)
    metrics: MetricsData = field(default_factory=new_metrics)
    run_id: str | None = None
