"""Strands' `AgentResult` and its metrics view, on Tether's result.

:class:`AgentResult` is Tether's :class:`tether.AgentResult` with Strands' observable shape:
``interrupts`` is None when there are none, ``str()`` is Strands' rendering, ``to_dict`` writes
Strands' four keys (``type``, ``message``, ``stop_reason``, ``checkpoint``) and ``from_dict``
reads them as Strands does. Tether's internals that store a result (graph and swarm node
results) write Tether's full form with ``tether.AgentResult.to_dict(result)``.

:class:`EventLoopMetrics` is Tether's :class:`~tether.metrics.Metrics` with Strands' names
(``accumulated_usage``, ``accumulated_metrics``, ``cycle_count``, ``tool_metrics``). Those count
from the agent object's construction, as in Strands, where a new agent continuing a session
starts at zero: they subtract the agent's ``_metrics_baseline``. Tether's own names
(``usage``, ``tool_call_count``, ``model_call_count``, ``model_latency_ms``, ``invocation``,
``to_dict``) keep the durable run's totals, which Tether's roll-ups of nested runs rely on.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pydantic

from ..._json import brief
from ...errors import ResultError, ShapeError
from ...interrupts import Interrupt
from ...metrics import Metrics, diff_metrics
from ...result import RESULT_TYPE, _decode_bytes, _encode_bytes
from ...result import AgentResult as _TetherAgentResult
from ...types import Message, MetricsData, ToolUse


@dataclass
class ToolMetrics:
    """Strands' per-tool figures (``total_time`` in seconds)."""

    tool: ToolUse
    call_count: int = 0
    success_count: int = 0
    error_count: int = 0
    total_time: float = 0.0


def metrics_baseline(agent: Any) -> MetricsData | None:
    """The figures ``agent``'s Strands metrics count from: its ``_metrics_baseline``.

    The facade agent sets ``_metrics_baseline`` once, at the end of its constructor (after a
    session restored the run), to a deep copy of ``run_state.metrics`` (a
    :class:`~tether.types.MetricsData` dict; a :class:`~tether.metrics.Metrics` is accepted
    too); None, or no such attribute, counts from zero (the run's totals).
    """
    baseline = getattr(agent, "_metrics_baseline", None)
    if isinstance(baseline, Metrics):
        return baseline._data
    return cast("MetricsData | None", baseline)


class EventLoopMetrics(Metrics):
    """Tether's metrics (:class:`tether.metrics.Metrics`) with Strands' attribute names.

    Strands' names cover the invocations of this agent object (figures minus ``baseline``), as
    Strands' ``event_loop_metrics`` does. ``accumulated_metrics["latencyMs"]`` is the time
    Tether measured around model calls (Strands adds the latencies providers report).

    Args:
        data: The run's accumulated metrics.
        invocation: The current invocation's own metrics, if tracked apart.
        baseline: The run's figures when the agent object was built (None: zero).
    """

    __slots__ = ("_baseline",)

    def __init__(self, data: MetricsData, invocation: MetricsData | None = None, baseline: MetricsData | None = None) -> None:
        super().__init__(data, invocation)
        self._baseline = baseline

    def __eq__(self, other: object) -> bool:
        """Equal figures are equal metrics, as for Strands' ``EventLoopMetrics`` dataclass."""
        if not isinstance(other, EventLoopMetrics):
            return NotImplemented
        return self._since() == other._since() and self._invocation == other._invocation

    __hash__ = None  # type: ignore[assignment]  # mutable figures, as Strands' dataclass

    def _since(self) -> MetricsData:
        """The figures since the baseline; the run's when there is none, or when the run's
        figures were since replaced by smaller ones (a checkpoint's, resumed: they do not
        continue from the baseline, and Strands' checkpoints carry no metrics)."""
        base = self._baseline
        if (
            base is None
            or self._data["cycle_count"] < base["cycle_count"]
            or self._data["usage"]["total_tokens"] < base["usage"]["total_tokens"]
        ):
            return self._data
        return diff_metrics(self._data, base)

    @property
    def accumulated_usage(self) -> dict[str, int]:
        """``inputTokens``, ``outputTokens``, ``totalTokens``."""
        usage = self._since()["usage"]
        return {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"], "totalTokens": usage["total_tokens"]}

    @property
    def accumulated_metrics(self) -> dict[str, int]:
        """``latencyMs``: the model calls' time, in whole milliseconds."""
        return {"latencyMs": int(self._since()["model_latency_ms"])}

    @property
    def cycle_count(self) -> int:
        """The event-loop cycles run by this agent object."""
        return int(self._since()["cycle_count"])

    @property
    def tool_metrics(self) -> dict[str, ToolMetrics]:  # type: ignore[override]
        """Per tool name: Strands' :class:`ToolMetrics` (``tool`` names the tool only)."""
        out: dict[str, ToolMetrics] = {}
        for name, figures in self._since()["tools"].items():
            calls, errors = int(figures["calls"]), int(figures["errors"])
            tool: ToolUse = {"toolUseId": "", "name": name, "input": {}}
            out[name] = ToolMetrics(tool, calls, calls - errors, errors, float(figures["total_duration_ms"]) / 1000.0)
        return out

    @property
    def latest_context_size(self) -> int | None:
        """Not tracked by Tether: None (Strands: None when no data is available)."""
        return None

    @property
    def projected_context_size(self) -> int | None:
        """Not tracked by Tether: None."""
        return None


@dataclass
class AgentResult(_TetherAgentResult):
    """The result of one invocation, with Strands' fields, ``str()`` and JSON.

    ``interrupts`` is None when the invocation raised none (Strands' default); Tether's code
    that reads a result's interrupts does so only for ``stop_reason == "interrupt"``.
    """

    interrupts: Sequence[Interrupt] | None = None  # type: ignore[assignment]

    @classmethod
    def of(cls, result: _TetherAgentResult, agent: Any = None) -> AgentResult:
        """The Strands view of Tether's ``result`` (sharing its values).

        Args:
            result: Tether's result.
            agent: The facade agent that produced it: its metrics view counts from the
                agent's ``_metrics_baseline`` (see :func:`metrics_baseline`); None: from zero.
        """
        metrics = result.metrics
        view = EventLoopMetrics(metrics._data, metrics._invocation, metrics_baseline(agent))
        return cls(
            stop_reason=result.stop_reason,
            message=result.message,
            metrics=view,
            state=result.state,
            interrupts=list(result.interrupts) if result.interrupts else None,
            checkpoint=result.checkpoint,
            structured_output=result.structured_output,
            divergence=result.divergence,
        )

    def to_dict(self) -> dict[str, Any]:
        """Strands' JSON: ``type``, ``message`` (bytes as Strands' base64 envelopes),
        ``stop_reason`` and ``checkpoint`` (``Checkpoint.to_dict()`` or None).

        Tether's other fields (state, interrupts, metrics, structured output) are not written,
        as in Strands; ``tether.AgentResult.to_dict(result)`` writes them.
        """
        return {
            "type": RESULT_TYPE,
            "message": _encode_bytes(self.message),
            "stop_reason": self.stop_reason,
            "checkpoint": None if self.checkpoint is None else self.checkpoint.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any) -> AgentResult:
        """Read a serialized result as Strands does: its message (bytes envelopes decoded; the
        blocks as they are), stop reason and checkpoint; metrics of zero and ``state`` empty.

        Raises:
            ResultError: ``data`` is not a serialized result (also a ``TypeError``, as in Strands).
            CheckpointError: its ``checkpoint`` is malformed.
        """
        from ...checkpoint import Checkpoint
        from ...loop.state import new_metrics

        if not isinstance(data, dict) or data.get("type") != RESULT_TYPE:
            got = data.get("type") if isinstance(data, dict) else type(data).__name__
            raise ResultError(f"AgentResult.from_dict: unexpected type {brief(got)}; expected a dict with type {RESULT_TYPE!r}")
        message = data.get("message")
        if message is not None and not isinstance(message, dict):
            raise ResultError(f"result.message must be a message object, got {brief(message)}")
        try:
            decoded = None if message is None else cast(Message, _decode_bytes(copy.deepcopy(message), ["result", "message"]))
        except ShapeError as exc:
            raise ResultError(str(exc)) from None
        checkpoint_data = data.get("checkpoint")
        checkpoint = Checkpoint.from_dict(checkpoint_data) if checkpoint_data else None
        return cls(
            stop_reason=data.get("stop_reason"),  # type: ignore[arg-type]  # as Strands: not checked
            message=decoded,
            metrics=EventLoopMetrics(new_metrics()),
            state={},
            checkpoint=checkpoint,
        )

    @property
    def context_size(self) -> int | None:
        """Not tracked by Tether: None."""
        return None

    @property
    def projected_context_size(self) -> int | None:
        """Not tracked by Tether: None."""
        return None

    def __str__(self) -> str:
        """Strands' rendering: the interrupts, else the structured output as JSON, else each
        text block (and citation text) followed by a newline."""
        if self.interrupts:
            return str([_strands_interrupt(interrupt.to_dict()) for interrupt in self.interrupts])
        structured = self.structured_output
        if structured:
            if isinstance(structured, pydantic.BaseModel):
                return structured.model_dump_json()
            return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
        text = ""
        content: Any = self.message.get("content", []) if isinstance(self.message, dict) else []
        for item in content:
            if isinstance(item, dict):
                if "text" in item:
                    text += str(item.get("text", "")) + "\n"
                elif "citationsContent" in item:
                    for cited in item["citationsContent"].get("content", []):
                        if isinstance(cited, dict) and "text" in cited:
                            text += str(cited.get("text", "")) + "\n"
        return text


def _strands_interrupt(record: Any) -> dict[str, Any]:
    """An interrupt record in Strands' ``Interrupt.to_dict`` shape (``id``, ``name``, ``reason``, ``response``)."""
    return {"id": record["id"], "name": record["name"], "reason": record.get("reason"), "response": record.get("response")}


__all__ = ["AgentResult", "EventLoopMetrics", "ToolMetrics", "metrics_baseline"]
