"""Strands' `AgentResult` and its metrics view, on Tether's result.

:class:`AgentResult` is Tether's :class:`tether.AgentResult` (same fields, same JSON through
``to_dict``/``from_dict``) with Strands' ``str()`` and Strands' metrics view
(:class:`EventLoopMetrics`: ``accumulated_usage``, ``accumulated_metrics``, ``cycle_count``,
``tool_metrics``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic

from ...metrics import Metrics
from ...result import AgentResult as _TetherAgentResult
from ...types import ToolUse


@dataclass
class ToolMetrics:
    """Strands' per-tool figures (``total_time`` in seconds)."""

    tool: ToolUse
    call_count: int = 0
    success_count: int = 0
    error_count: int = 0
    total_time: float = 0.0


class EventLoopMetrics(Metrics):
    """Tether's metrics (:class:`tether.metrics.Metrics`) with Strands' attribute names.

    The figures cover every invocation of the agent so far, as Strands' ``event_loop_metrics``
    does. ``accumulated_metrics["latencyMs"]`` is the time Tether measured around model calls
    (Strands adds the latencies providers report).
    """

    __slots__ = ()

    @property
    def accumulated_usage(self) -> dict[str, int]:
        """``inputTokens``, ``outputTokens``, ``totalTokens``."""
        usage = self._data["usage"]
        return {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"], "totalTokens": usage["total_tokens"]}

    @property
    def accumulated_metrics(self) -> dict[str, int]:
        """``latencyMs``: the model calls' time, in whole milliseconds."""
        return {"latencyMs": int(self._data["model_latency_ms"])}

    @property
    def tool_metrics(self) -> dict[str, ToolMetrics]:  # type: ignore[override]
        """Per tool name: Strands' :class:`ToolMetrics` (``tool`` names the tool only)."""
        out: dict[str, ToolMetrics] = {}
        for name, figures in self._data["tools"].items():
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
    """The result of one invocation, rendered by ``str()`` as Strands renders it."""

    @classmethod
    def of(cls, result: _TetherAgentResult) -> AgentResult:
        """The Strands view of Tether's ``result`` (sharing its values)."""
        metrics = result.metrics
        view = EventLoopMetrics(metrics._data, metrics._invocation)
        return cls(
            stop_reason=result.stop_reason,
            message=result.message,
            metrics=view,
            state=result.state,
            interrupts=result.interrupts,
            checkpoint=result.checkpoint,
            structured_output=result.structured_output,
            divergence=result.divergence,
        )

    @classmethod
    def from_dict(cls, data: Any) -> AgentResult:
        """Read a serialized result (Strands' or Tether's ``to_dict``)."""
        return cls.of(_TetherAgentResult.from_dict(data))

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
            import json

            return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
        text = ""
        content: list[Any] = list(self.message["content"]) if self.message is not None else []
        for item in content:
            if isinstance(item, dict):
                if "text" in item:
                    text += str(item.get("text", "")) + "\n"
                elif "citationsContent" in item:
                    for content in item["citationsContent"].get("content", []):
                        if isinstance(content, dict) and "text" in content:
                            text += str(content.get("text", "")) + "\n"
        return text


def _strands_interrupt(record: Any) -> dict[str, Any]:
    """An interrupt record in Strands' ``Interrupt.to_dict`` shape (``id``, ``name``, ``reason``, ``response``)."""
    return {"id": record["id"], "name": record["name"], "reason": record.get("reason"), "response": record.get("response")}


__all__ = ["AgentResult", "EventLoopMetrics", "ToolMetrics"]
