"""Run metrics: cycles, tool calls, per-tool figures, token usage and model latency (JSON)."""

from __future__ import annotations

import copy
from typing import Any


class Metrics:
    """A read-only view over accumulated metrics (a JSON dict).

    ``AgentResult.metrics`` covers the whole run since its first call, across checkpoint and
    interrupt resumes; ``metrics.invocation`` is the part of the current call alone.
    """

    __slots__ = ("_data", "_invocation")

    def __init__(self, data: dict[str, Any], invocation: dict[str, Any] | None = None) -> None:
        self._data = data
        self._invocation = invocation

    @property
    def cycle_count(self) -> int:
        return int(self._data["cycle_count"])

    @property
    def tool_call_count(self) -> int:
        return int(self._data["tool_call_count"])

    @property
    def model_call_count(self) -> int:
        return int(self._data["model_call_count"])

    @property
    def usage(self) -> dict[str, int]:
        """``input_tokens``, ``output_tokens``, ``total_tokens``."""
        return dict(self._data["usage"])

    @property
    def model_latency_ms(self) -> float:
        return float(self._data["model_latency_ms"])

    @property
    def tool_metrics(self) -> dict[str, dict[str, Any]]:
        """Per tool name: ``calls``, ``errors``, ``total_duration_ms``."""
        return copy.deepcopy(self._data["tools"])

    @property
    def invocation(self) -> Metrics:
        """The part of these metrics produced by the current call."""
        return Metrics(self._invocation if self._invocation is not None else self._data)

    def to_dict(self) -> dict[str, Any]:
        out = copy.deepcopy(self._data)
        if self._invocation is not None:
            out["invocation"] = copy.deepcopy(self._invocation)
        return out

    def __repr__(self) -> str:
        return f"Metrics(cycles={self.cycle_count}, tool_calls={self.tool_call_count}, tokens={self._data['usage']['total_tokens']})"


def diff_metrics(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """``now - before`` for two accumulated metrics dicts."""
    out: dict[str, Any] = {}
    for key in ("cycle_count", "tool_call_count", "model_call_count", "model_latency_ms"):
        out[key] = now[key] - before.get(key, 0)
    out["usage"] = {k: now["usage"][k] - before.get("usage", {}).get(k, 0) for k in now["usage"]}
    tools: dict[str, Any] = {}
    for name, figures in now["tools"].items():
        prior = before.get("tools", {}).get(name, {})
        delta = {k: v - prior.get(k, 0) for k, v in figures.items()}
        if delta.get("calls"):
            tools[name] = delta
    out["tools"] = tools
    return out


def record_tool(metrics: dict[str, Any], name: str, duration_ms: float, error: bool) -> None:
    """Account one finished tool call."""
    metrics["tool_call_count"] += 1
    figures = metrics["tools"].get(name)
    if figures is None:
        figures = metrics["tools"][name] = {"calls": 0, "errors": 0, "total_duration_ms": 0.0}
    figures["calls"] += 1
    if error:
        figures["errors"] += 1
    figures["total_duration_ms"] += duration_ms
