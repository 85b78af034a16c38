"""Run metrics: cycles, tool calls, per-tool figures, token usage and model latency (JSON).

The data is a :class:`~tether.types.MetricsData` dict; :class:`Metrics` is a read-only view of it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .budget.spend import Spend, add_spend, diff_spend, spend_of
from .types import MetricsData, ToolFigures, UsageTotals

MS_DIGITS = 3
"""Durations are kept to the microsecond (milliseconds rounded to 3 decimals): the figures are
written at every save point, and a float's full 17 digits of timer noise would be most of what
a durable cycle's head delta and step row store."""


def add_ms(total: float, ms: float) -> float:
    """``total + ms`` milliseconds, rounded to :data:`MS_DIGITS` decimals (a sum of rounded
    figures would otherwise pick up binary noise such as ``17.424000000000003``)."""
    return round(total + ms, MS_DIGITS)


class Metrics:
    """A read-only view over accumulated metrics (a JSON dict).

    ``AgentResult.metrics`` covers the whole run since its first call, across checkpoint and
    interrupt resumes; ``metrics.invocation`` is the part of the current call alone.
    """

    __slots__ = ("_data", "_invocation")

    def __init__(self, data: MetricsData, invocation: MetricsData | None = None) -> None:
        """Wrap metrics data (the view does not copy it).

        Args:
            data: The run's accumulated metrics.
            invocation: The current invocation's own metrics, if tracked apart.
        """
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
    def usage(self) -> UsageTotals:
        """``input_tokens``, ``output_tokens``, ``total_tokens`` (a copy)."""
        return self._data["usage"].copy()

    @property
    def model_latency_ms(self) -> float:
        return float(self._data["model_latency_ms"])

    @property
    def tool_metrics(self) -> dict[str, ToolFigures]:
        """Per tool name: ``calls``, ``errors``, ``total_duration_ms``."""
        return copy.deepcopy(self._data["tools"])

    @property
    def spend(self) -> Spend:
        """What the run spent, in the units of a :class:`~tether.Budget` (nested runs included;
        cost and wall time are counted while the run has a budget)."""
        return spend_of(self._data)

    @property
    def invocation(self) -> Metrics:
        """The part of these metrics produced by the current call."""
        return Metrics(self._invocation if self._invocation is not None else self._data)

    def to_dict(self) -> dict[str, Any]:
        """A copy of the data as JSON, with the current call's part under ``invocation``."""
        out: dict[str, Any] = dict(copy.deepcopy(self._data))
        if self._invocation is not None:
            out["invocation"] = copy.deepcopy(self._invocation)
        return out

    def __repr__(self) -> str:
        return f"Metrics(cycles={self.cycle_count}, tool_calls={self.tool_call_count}, tokens={self._data['usage']['total_tokens']})"


_NO_USAGE: UsageTotals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
_NO_FIGURES: ToolFigures = {"calls": 0, "errors": 0, "total_duration_ms": 0.0}


def diff_metrics(now: MetricsData, before: MetricsData) -> MetricsData:
    """``now - before`` for two accumulated metrics dicts.

    A figure missing from ``before`` counts as zero; tools without new calls are left out.
    """
    prior_usage = before.get("usage", _NO_USAGE)
    usage = now["usage"]
    spent = now.get("spend")
    prior_tools = before.get("tools", {})
    tools: dict[str, ToolFigures] = {}
    for name, figures in now["tools"].items():
        prior = prior_tools.get(name, _NO_FIGURES)
        delta: ToolFigures = {
            "calls": figures["calls"] - prior.get("calls", 0),
            "errors": figures["errors"] - prior.get("errors", 0),
            "total_duration_ms": add_ms(figures["total_duration_ms"], -prior.get("total_duration_ms", 0)),
        }
        if delta["calls"]:
            tools[name] = delta
    diff: MetricsData = {
        "cycle_count": now["cycle_count"] - before.get("cycle_count", 0),
        "tool_call_count": now["tool_call_count"] - before.get("tool_call_count", 0),
        "model_call_count": now["model_call_count"] - before.get("model_call_count", 0),
        "model_latency_ms": add_ms(now["model_latency_ms"], -before.get("model_latency_ms", 0)),
        "usage": {
            "input_tokens": usage["input_tokens"] - prior_usage.get("input_tokens", 0),
            "output_tokens": usage["output_tokens"] - prior_usage.get("output_tokens", 0),
            "total_tokens": usage["total_tokens"] - prior_usage.get("total_tokens", 0),
        },
        "tools": tools,
    }
    if spent is not None:  # a run with a budget: its spend figures too (see tether.budget)
        diff["spend"] = diff_spend(spent, before.get("spend") or {})
    return diff


def record_tool(metrics: MetricsData, name: str, duration_ms: float, error: bool) -> None:
    """Account one finished tool call."""
    metrics["tool_call_count"] += 1
    figures = metrics["tools"].get(name)
    if figures is None:
        figures = metrics["tools"][name] = {"calls": 0, "errors": 0, "total_duration_ms": 0.0}
    figures["calls"] += 1
    if error:
        figures["errors"] += 1
    figures["total_duration_ms"] = add_ms(figures["total_duration_ms"], duration_ms)


def add_figures(metrics: MetricsData, added: Mapping[str, Any]) -> None:
    """Roll figures up into ``metrics``: add ``added`` (a :class:`~tether.types.MetricsData`-shaped
    dict in which any figure may be missing: a missing one adds nothing).

    This is the one roll-up of a nested run's cost into its parent's metrics: an agent tool's
    child (locally and on Temporal) and a graph node's or swarm member's run. Counts are added
    as ints, the model latency as a float, per-tool figures key by key, budget spend figures
    (``spend``: cost, wall time, nested tool calls) figure by figure.
    """
    usage = added.get("usage") or {}
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        metrics["usage"][key] += int(usage.get(key, 0))
    for count in ("cycle_count", "tool_call_count", "model_call_count"):
        metrics[count] += int(added.get(count, 0))
    metrics["model_latency_ms"] = add_ms(metrics["model_latency_ms"], float(added.get("model_latency_ms", 0.0)))
    for name, figures in (added.get("tools") or {}).items():
        mine = metrics["tools"].setdefault(name, {"calls": 0, "errors": 0, "total_duration_ms": 0.0})
        mine["calls"] += figures["calls"]
        mine["errors"] += figures["errors"]
        mine["total_duration_ms"] = add_ms(mine["total_duration_ms"], figures["total_duration_ms"])
    spend = added.get("spend")
    if spend:
        add_spend(metrics, spend)
