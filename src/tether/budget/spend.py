"""`Spend`: what a run has spent, read from its metrics (part of the run's JSON state).

Tokens and model calls are the metrics' own figures (``usage``, ``model_call_count``), which
already include what nested runs used (rolled up once, see :func:`tether.metrics.add_figures`).
The figures the metrics did not keep before budgets live under ``metrics["spend"]``
(:class:`~tether.types.SpendData`), written only by a run that has a budget:

- ``cost_usd``: the priced cost of the run's model calls and of its nested runs';
- ``wall_s``: the seconds the run actually ran, as its driver measured them (the core reads
  no clock: the driver reports the time each step took, see ``LoopCore.elapsed``);
- ``nested_tool_calls``: tool calls made by agent tools' child runs (the run's own
  ``tool_call_count`` keeps counting its own calls only).

Every function here replaces ``metrics["spend"]`` rather than changing it in place, so a shallow
copy of the metrics (an invocation's starting figures) never sees later spending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..types import MetricsData, SpendData


@dataclass(frozen=True)
class Spend:
    """What a run has spent, in the units of a :class:`~tether.budget.Budget`.

    Attributes:
        input_tokens: Input tokens of every model call (nested runs' included).
        output_tokens: Output tokens of every model call (nested runs' included).
        cost_usd: Priced cost in US dollars (counted while the run has a budget).
        tool_calls: Tool calls, nested runs' included.
        model_calls: Model calls, nested runs' included.
        wall_s: Seconds the run actually ran (counted while the run has a budget).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    model_calls: int = 0
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """The figures as JSON."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "tool_calls": self.tool_calls,
            "model_calls": self.model_calls,
            "wall_s": self.wall_s,
        }


def spend_of(metrics: Mapping[str, Any]) -> Spend:
    """The spend recorded in a run's metrics (a missing figure counts as zero).

    Args:
        metrics: A run's accumulated metrics (:class:`~tether.types.MetricsData`).
    """
    usage = metrics.get("usage") or {}
    extra = metrics.get("spend") or {}
    return Spend(
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),
        cost_usd=float(extra.get("cost_usd", 0.0)),
        tool_calls=int(metrics.get("tool_call_count", 0)) + int(extra.get("nested_tool_calls", 0)),
        model_calls=int(metrics.get("model_call_count", 0)),
        wall_s=float(extra.get("wall_s", 0.0)),
    )


def _spend_data(metrics: MetricsData) -> SpendData:
    old = metrics.get("spend")
    if old is None:
        return {"cost_usd": 0.0, "wall_s": 0.0, "nested_tool_calls": 0}
    return {"cost_usd": old["cost_usd"], "wall_s": old["wall_s"], "nested_tool_calls": old["nested_tool_calls"]}


def add_cost(metrics: MetricsData, usd: float) -> None:
    """Count ``usd`` dollars against the run (replaces ``metrics["spend"]``)."""
    data = _spend_data(metrics)
    data["cost_usd"] += usd
    metrics["spend"] = data


def add_wall(metrics: MetricsData, seconds: float) -> None:
    """Count ``seconds`` of running time against the run (replaces ``metrics["spend"]``)."""
    data = _spend_data(metrics)
    data["wall_s"] += max(0.0, seconds)
    metrics["spend"] = data


def add_spend(metrics: MetricsData, added: Mapping[str, Any]) -> None:
    """Roll a nested run's spend figures (``added``: a ``SpendData``-shaped dict in which any
    figure may be missing) up into ``metrics``. An agent tool leaves ``wall_s`` out (its child
    runs inside the parent's measured time); a graph's node runs add theirs (the graph run has no
    driver measuring it)."""
    cost = float(added.get("cost_usd", 0.0))
    nested = int(added.get("nested_tool_calls", 0))
    seconds = float(added.get("wall_s", 0.0))
    if not (cost or nested or seconds) and "spend" not in metrics:
        return
    data = _spend_data(metrics)
    data["cost_usd"] += cost
    data["nested_tool_calls"] += nested
    data["wall_s"] += seconds
    metrics["spend"] = data


def diff_spend(now: Mapping[str, Any], before: Mapping[str, Any]) -> SpendData:
    """``now - before`` of two ``SpendData``-shaped dicts (missing figures count as zero)."""
    return {
        "cost_usd": float(now.get("cost_usd", 0.0)) - float(before.get("cost_usd", 0.0)),
        "wall_s": float(now.get("wall_s", 0.0)) - float(before.get("wall_s", 0.0)),
        "nested_tool_calls": int(now.get("nested_tool_calls", 0)) - int(before.get("nested_tool_calls", 0)),
    }


__all__ = ["Spend", "add_cost", "add_spend", "add_wall", "diff_spend", "spend_of"]
