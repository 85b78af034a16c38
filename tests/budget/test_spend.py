"""`Spend` read from a run's metrics, and the figures budgets add to them."""

from __future__ import annotations

from tether.budget import add_cost, add_wall, spend_of
from tether.budget.spend import add_spend, diff_spend
from tether.loop.state import new_metrics
from tether.metrics import add_figures, diff_metrics
from tether.turn import copy_metrics


def test_spend_reads_usage_counts_and_the_spend_figures() -> None:
    metrics = new_metrics()
    assert spend_of(metrics).to_dict() == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "tool_calls": 0,
        "model_calls": 0,
        "wall_s": 0.0,
    }
    metrics["usage"]["input_tokens"] = 30
    metrics["usage"]["output_tokens"] = 4
    metrics["tool_call_count"] = 2
    metrics["model_call_count"] = 3
    add_cost(metrics, 0.5)
    add_wall(metrics, 1.25)
    add_spend(metrics, {"nested_tool_calls": 5, "cost_usd": 0.25})
    spend = spend_of(metrics)
    assert (spend.input_tokens, spend.output_tokens, spend.model_calls) == (30, 4, 3)
    assert spend.tool_calls == 7  # its own and its nested runs'
    assert spend.cost_usd == 0.75 and spend.wall_s == 1.25


def test_a_copy_of_the_metrics_never_sees_later_spending() -> None:
    metrics = new_metrics()
    add_cost(metrics, 1.0)
    before = copy_metrics(metrics)
    add_cost(metrics, 2.0)
    add_wall(metrics, 3.0)
    assert spend_of(before).cost_usd == 1.0 and spend_of(before).wall_s == 0.0
    assert diff_metrics(metrics, before)["spend"] == {"cost_usd": 2.0, "wall_s": 3.0, "nested_tool_calls": 0}


def test_metrics_without_spend_stay_as_they_were() -> None:
    metrics = new_metrics()
    add_figures(metrics, {"usage": {"input_tokens": 3}})
    assert "spend" not in metrics
    assert "spend" not in diff_metrics(metrics, new_metrics())


def test_roll_up_adds_a_nested_runs_spend() -> None:
    child = new_metrics()
    add_cost(child, 0.5)
    add_wall(child, 2.0)
    parent = new_metrics()
    add_figures(parent, diff_metrics(child, new_metrics()))
    assert spend_of(parent).cost_usd == 0.5 and spend_of(parent).wall_s == 2.0
    assert diff_spend({"cost_usd": 1.0}, {}) == {"cost_usd": 1.0, "wall_s": 0.0, "nested_tool_calls": 0}
