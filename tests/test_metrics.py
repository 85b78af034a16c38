"""Metrics: cycles, tool calls, per-tool figures, token usage, model latency, JSON export."""

from __future__ import annotations

import json
import time

from tether import Agent, Metrics, ScriptedModel, tool
from tether.loop.state import new_metrics
from tether.metrics import diff_metrics, record_tool
from tether.models import tool_calls
from tether.tools.decorator import FunctionTool

from .conftest import call


def test_run_metrics(add_tool: FunctionTool) -> None:
    @tool
    def fail() -> str:
        raise ValueError("no")

    @tool
    def nap() -> str:
        time.sleep(0.01)
        return "rested"

    script = [
        tool_calls([("add", {"a": 1, "b": 2}), ("fail", {})]),
        call("add", {"a": 3, "b": 4}),
        call("nap"),
        "done",
    ]
    agent = Agent(model=ScriptedModel(script, usage=(100, 7)), tools=[add_tool, fail, nap])
    metrics = agent("go").metrics
    assert metrics.cycle_count == 4
    assert metrics.model_call_count == 4
    assert metrics.tool_call_count == 4
    assert metrics.usage == {"input_tokens": 400, "output_tokens": 28, "total_tokens": 428}
    tools = metrics.tool_metrics
    assert tools["add"]["calls"] == 2 and tools["add"]["errors"] == 0
    assert tools["fail"] == {"calls": 1, "errors": 1, "total_duration_ms": tools["fail"]["total_duration_ms"]}
    assert tools["nap"]["total_duration_ms"] >= 10.0
    assert metrics.model_latency_ms > 0.0


def test_to_dict_is_json_and_a_copy(add_tool: FunctionTool) -> None:
    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 2}), "done"]), tools=[add_tool])
    metrics = agent("go").metrics
    data = metrics.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["cycle_count"] == 2
    assert data["usage"]["total_tokens"] == 30
    assert data["tools"]["add"]["calls"] == 1
    assert data["invocation"]["cycle_count"] == 2
    data["tools"]["add"]["calls"] = 99
    data["usage"]["total_tokens"] = 0
    assert metrics.tool_metrics["add"]["calls"] == 1
    assert metrics.usage["total_tokens"] == 30
    metrics.tool_metrics["add"]["calls"] = 5
    assert metrics.tool_metrics["add"]["calls"] == 1


def test_metrics_accumulate_across_calls_and_invocation_is_the_delta(add_tool: FunctionTool) -> None:
    script = [call("add", {"a": 1, "b": 1}), "one", "two"]
    agent = Agent(model=ScriptedModel(script), tools=[add_tool])
    first = agent("a").metrics
    second = agent("b").metrics
    assert second.cycle_count == 3
    assert second.tool_call_count == 1
    assert second.invocation.cycle_count == 1
    assert second.invocation.tool_call_count == 0
    assert second.invocation.usage["total_tokens"] == 15
    assert second.invocation.tool_metrics == {}
    # an earlier result is a value: later calls do not change it
    assert first.cycle_count == 2
    assert first.invocation.cycle_count == 2
    assert first.invocation.tool_metrics["add"]["calls"] == 1


def test_repr() -> None:
    assert repr(Metrics(new_metrics())) == "Metrics(cycles=0, tool_calls=0, tokens=0)"


def test_invocation_without_delta_is_the_whole() -> None:
    data = new_metrics()
    data["cycle_count"] = 4
    assert Metrics(data).invocation.cycle_count == 4


def test_record_tool_and_diff() -> None:
    before = new_metrics()
    now = new_metrics()
    record_tool(now, "x", 2.0, error=False)
    record_tool(now, "x", 3.0, error=True)
    record_tool(now, "y", 1.0, error=False)
    assert now["tool_call_count"] == 3
    assert now["tools"]["x"] == {"calls": 2, "errors": 1, "total_duration_ms": 5.0}
    snapshot = json.loads(json.dumps(now))
    record_tool(now, "y", 4.0, error=False)
    now["usage"]["input_tokens"] += 10
    delta = diff_metrics(now, snapshot)
    assert delta["tool_call_count"] == 1
    assert delta["tools"] == {"y": {"calls": 1, "errors": 0, "total_duration_ms": 4.0}}
    assert delta["usage"]["input_tokens"] == 10
    assert diff_metrics(now, before)["tools"]["x"]["calls"] == 2


def test_add_figures_rolls_up_what_is_given_and_nothing_else() -> None:
    from tether.loop.state import new_metrics
    from tether.metrics import add_figures

    metrics = new_metrics()
    metrics["tools"]["t"] = {"calls": 1, "errors": 0, "total_duration_ms": 2.0}
    add_figures(metrics, {"usage": {"input_tokens": 3, "total_tokens": 5}, "model_call_count": 2, "model_latency_ms": 7})
    add_figures(
        metrics,
        {
            "cycle_count": 1,
            "tools": {"t": {"calls": 2, "errors": 1, "total_duration_ms": 1.5}, "u": {"calls": 1, "errors": 0, "total_duration_ms": 0.5}},
        },
    )
    assert metrics["usage"] == {"input_tokens": 3, "output_tokens": 0, "total_tokens": 5}
    assert (metrics["cycle_count"], metrics["tool_call_count"], metrics["model_call_count"]) == (1, 0, 2)
    assert metrics["model_latency_ms"] == 7.0 and isinstance(metrics["model_latency_ms"], float)
    assert metrics["tools"] == {
        "t": {"calls": 3, "errors": 1, "total_duration_ms": 3.5},
        "u": {"calls": 1, "errors": 0, "total_duration_ms": 0.5},
    }


def test_durations_are_kept_to_the_microsecond(add_tool: FunctionTool) -> None:
    """Timer noise is not stored: every duration figure is milliseconds with at most 3 decimals,
    and sums of them stay so (a durable run writes these figures at every save point)."""
    metrics = new_metrics()
    for ms in (0.1, 0.2, 17.4239999, 1 / 3):
        record_tool(metrics, "x", ms, error=False)
    assert metrics["tools"]["x"]["total_duration_ms"] == 18.057
    script = [call("add", {"a": i, "b": 1}) for i in range(5)] + ["done"]
    data = Agent(model=ScriptedModel(script), tools=[add_tool])("go").metrics.to_dict()
    figures = [data["model_latency_ms"], data["tools"]["add"]["total_duration_ms"]]
    assert all(repr(figure) == repr(round(figure, 3)) and len(repr(figure).split(".")[1]) <= 3 for figure in figures)
