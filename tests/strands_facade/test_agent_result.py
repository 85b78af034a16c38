"""The facade's ``AgentResult`` has Strands' fields, defaults and JSON, and stays a Tether result.

Strands' ``AgentResult``: ``interrupts`` None when there are none, ``to_dict`` writes four keys
(``type``, ``message``, ``stop_reason``, ``checkpoint``), ``from_dict`` takes the message as it
is. Tether's graph and swarm runs store a node's result in Tether's full form
(:func:`tether.multiagent.results.encode_result`) whichever ``to_dict`` the result has. Strands'
metrics names count from the agent object's construction (its ``_metrics_baseline``).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

import tether
import tether.strands as ts
from tether.errors import ResultError
from tether.interrupts import Interrupt
from tether.loop.state import new_metrics
from tether.metrics import Metrics
from tether.multiagent.results import decode_result, encode_result
from tether.strands.agent import AgentResult
from tether.strands.agent.agent_result import EventLoopMetrics
from tether.types import MetricsData

from .test_agent import TOOL_EXCHANGE, TetherFake, plain, strands_fake, word_tools

strands = pytest.importorskip("strands")


def _figures(tokens: tuple[int, int], cycles: int, calls: int) -> MetricsData:
    data = new_metrics()
    data["usage"] = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)}
    data["cycle_count"] = cycles
    data["model_call_count"] = cycles
    data["model_latency_ms"] = 10.0 * cycles
    data["tool_call_count"] = calls
    if calls:
        data["tools"] = {"shout": {"calls": calls, "errors": 0, "total_duration_ms": 2.0 * calls}}
    return data


def test_an_invocation_result_has_strands_interrupts_and_json() -> None:
    theirs = strands.Agent(model=strands_fake(TOOL_EXCHANGE), tools=word_tools(strands), callback_handler=None)("hi")
    ours = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=None)("hi")
    assert ours.interrupts is None and theirs.interrupts is None
    assert sorted(ours.to_dict()) == sorted(theirs.to_dict()) == ["checkpoint", "message", "stop_reason", "type"]
    assert ours.to_dict()["message"] == plain(theirs.to_dict()["message"])
    back = strands.agent.AgentResult.from_dict(ours.to_dict())
    assert str(back) == str(ours)


def test_interrupts_of_an_interrupted_result_are_a_list() -> None:
    raised = Interrupt(id="i-1", name="approve", reason="sure?")
    tether_result = tether.AgentResult("interrupt", None, Metrics(new_metrics()), interrupts=[raised])
    view = AgentResult.of(tether_result)
    assert view.interrupts == [raised]
    assert AgentResult.of(tether.AgentResult("end_turn", None, Metrics(new_metrics()))).interrupts is None


def test_from_dict_reads_strands_json_as_strands_does() -> None:
    data = {
        "type": "agent_result",
        "message": {
            "role": "assistant",
            "content": [
                {"text": "a"},
                {"non_text_content": "kept as is"},
                {"image": {"source": {"bytes": {"__bytes_encoded__": True, "data": "AAE="}}}},
            ],
        },
        "stop_reason": "max_tokens",
        "checkpoint": None,
        "state": {"ignored": True},
    }
    ours = AgentResult.from_dict(data)
    theirs = strands.agent.AgentResult.from_dict(copy.deepcopy(data))
    assert ours.message == theirs.message
    assert ours.message["content"][2]["image"]["source"]["bytes"] == b"\x00\x01"  # type: ignore[index]
    assert (ours.stop_reason, ours.state, ours.interrupts, str(ours)) == (theirs.stop_reason, theirs.state, theirs.interrupts, str(theirs))
    assert ours.metrics.accumulated_usage == theirs.metrics.accumulated_usage
    assert AgentResult.from_dict(ours.to_dict()).message == ours.message


@pytest.mark.parametrize("data", [{"type": "other"}, "agent_result", {"type": "agent_result", "message": ["not", "a", "message"]}])
def test_from_dict_refuses_what_is_not_a_result(data: Any) -> None:
    with pytest.raises(ResultError) as raised:
        AgentResult.from_dict(data)
    assert isinstance(raised.value, TypeError)  # what Strands raises


def test_a_graph_node_result_is_stored_in_tethers_full_form() -> None:
    raised = Interrupt(id="i-1", name="approve", reason="sure?")
    data = _figures((7, 3), 1, 0)
    facade = AgentResult.of(tether.AgentResult("interrupt", None, Metrics(data), state={"k": "v"}, interrupts=[raised]))
    stored = encode_result(facade)["value"]
    assert stored["state"] == {"k": "v"}
    assert [record["id"] for record in stored["interrupts"]] == ["i-1"]
    assert stored["metrics"]["usage"] == data["usage"]
    decoded = decode_result(encode_result(facade), "node")
    assert isinstance(decoded, tether.AgentResult) and [i.id for i in decoded.interrupts] == ["i-1"]
    plain = AgentResult.of(tether.AgentResult("end_turn", None, Metrics(data)))
    assert encode_result(plain)["value"]["interrupts"] == []


def test_strands_metrics_count_from_the_baseline_and_tethers_keep_the_run_totals() -> None:
    baseline, now = _figures((20, 10), 2, 1), _figures((45, 20), 5, 3)
    view = EventLoopMetrics(now, None, baseline)
    assert view.accumulated_usage == {"inputTokens": 25, "outputTokens": 10, "totalTokens": 35}
    assert view.cycle_count == 3
    assert view.accumulated_metrics == {"latencyMs": 30}
    assert view.tool_metrics["shout"].call_count == 2
    assert view.usage == now["usage"] and view.tool_call_count == 3 and view.to_dict()["cycle_count"] == 5  # the run's
    assert EventLoopMetrics(now).accumulated_usage["totalTokens"] == 65


def test_a_tool_used_only_before_the_baseline_has_no_strands_figures() -> None:
    view = EventLoopMetrics(_figures((30, 10), 3, 1), None, _figures((20, 10), 2, 1))
    assert view.tool_metrics == {}


def test_figures_replaced_by_smaller_ones_are_shown_whole() -> None:
    # A checkpoint resumed replaces the run's figures: they no longer continue from the baseline.
    view = EventLoopMetrics(_figures((5, 5), 1, 0), None, _figures((20, 10), 2, 1))
    assert view.accumulated_usage["totalTokens"] == 10 and view.cycle_count == 1


def test_result_of_reads_the_agents_metrics_baseline() -> None:
    result = tether.AgentResult("end_turn", None, Metrics(_figures((45, 20), 5, 3)))
    for baseline in (_figures((20, 10), 2, 1), Metrics(_figures((20, 10), 2, 1))):
        agent = SimpleNamespace(_metrics_baseline=baseline)
        assert AgentResult.of(result, agent).metrics.accumulated_usage["totalTokens"] == 35  # type: ignore[attr-defined]
    assert AgentResult.of(result, SimpleNamespace()).metrics.accumulated_usage["totalTokens"] == 65  # type: ignore[attr-defined]
    assert AgentResult.of(result).metrics.accumulated_usage["totalTokens"] == 65  # type: ignore[attr-defined]
