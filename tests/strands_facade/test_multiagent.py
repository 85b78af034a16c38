"""``tether.strands.multiagent``: Strands' GraphBuilder, Graph, Swarm and results on Tether's
graphs and swarms (results, conditions, stream events, failures, options), and their
``multiAgent`` snapshots: Tether -> Tether losslessly, and bad input refused with nothing changed."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from tether import Agent, AgentResult, ScriptedModel, ToolContext, tool
from tether.errors import ConfigurationError, SnapshotError, SnapshotException, TetherError
from tether.models.scripted import tool_call
from tether.strands.multiagent import (
    GraphBuilder,
    GraphNode,
    GraphResult,
    GraphState,
    MultiAgentResult,
    NodeResult,
    Status,
    Swarm,
    SwarmNode,
    SwarmResult,
)
from tether.types import Message

pytestmark = pytest.mark.filterwarnings("ignore:graph has no max_node_executions")


def agent(name: str, calls: list[str], reply: Any = None) -> Agent:
    def script(messages: list[Message]) -> Any:
        calls.append(name)
        return reply(messages) if reply is not None else f"{name} done"

    return Agent(model=ScriptedModel([script] * 20), name=name, description=f"the {name}")


def diamond(calls: list[str], graph_id: str = "diamond", condition: Any = None) -> Any:
    """``a -> (b, c) -> d``; ``c``'s edge may carry ``condition``."""
    builder = GraphBuilder()
    for name in "abcd":
        builder.add_node(agent(name, calls), name)
    builder.add_edge("a", "b")
    builder.add_edge("a", "c", condition)
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    builder.set_graph_id(graph_id)
    return builder.build()


def test_a_graph_result_has_strands_fields() -> None:
    calls: list[str] = []
    result = diamond(calls)("plan a trip")
    assert isinstance(result, GraphResult) and isinstance(result, MultiAgentResult)
    assert result.status == Status.COMPLETED and result.status.value == "completed"
    assert (result.total_nodes, result.completed_nodes, result.failed_nodes, result.interrupted_nodes) == (4, 4, 0, 0)
    assert all(isinstance(n, GraphNode) for n in result.execution_order)
    order = [n.node_id for n in result.execution_order]
    assert (order[0], order[-1]) == ("a", "d")
    assert result.execution_count == 4
    assert result.accumulated_usage == {"inputTokens": 40, "outputTokens": 20, "totalTokens": 60}
    node = result.results["d"]
    assert isinstance(node, NodeResult) and isinstance(node.result, AgentResult)
    assert node.status == Status.COMPLETED and node.execution_count == 1 and str(node) == "d done\n"
    assert node.accumulated_usage == {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    assert {n.node_id for n in result.entry_points} == {"a"}
    assert ("a", "b") in {(x.node_id, y.node_id) for x, y in result.edges}
    assert str(result).splitlines() == ["a: a done", "b: b done", "c: c done", "d: d done"]
    assert sorted(calls) == ["a", "b", "c", "d"]


def test_an_edge_condition_sees_strands_graph_state_and_the_invocation_state() -> None:
    seen: list[Any] = []

    def only_if_asked(state: GraphState, *, invocation_state: dict[str, Any]) -> bool:
        seen.append((type(state), {n.node_id for n in state.completed_nodes}, str(state.results["a"].result), state.status))
        return bool(invocation_state.get("take_c"))

    calls: list[str] = []
    graph = diamond(calls, condition=only_if_asked)
    skipped = graph("task", invocation_state={"take_c": False})
    assert seen == [(GraphState, {"a"}, "a done\n", Status.EXECUTING)]
    assert "c" not in skipped.results and "d" not in calls, "Tether's join waits for both of d's edges"
    calls.clear()
    taken = graph("task", invocation_state={"take_c": True})
    assert taken.status == Status.COMPLETED and sorted(calls) == ["a", "b", "c", "d"]


async def test_graph_stream_events_have_strands_shapes() -> None:
    events = [e async for e in diamond([]).stream_async("task")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "multiagent_node_start" and kinds[-1] == "multiagent_result"
    assert set(kinds) <= {"multiagent_node_start", "multiagent_node_stream", "multiagent_node_stop", "multiagent_result"}
    start = events[0]
    assert (start["node_id"], start["node_type"]) == ("a", "agent")
    stops = [e for e in events if e["type"] == "multiagent_node_stop"]
    assert stops[0]["node_id"] == "a" and len(stops) == 4
    assert isinstance(stops[0]["node_result"], NodeResult) and stops[0]["node_result"].status == Status.COMPLETED
    assert any(e["type"] == "multiagent_node_stream" and e["node_id"] == "b" for e in events)
    assert isinstance(events[-1]["result"], GraphResult)


def test_a_graph_node_that_raises_fails_the_graph_as_strands() -> None:
    def boom(messages: list[Message]) -> Any:
        raise RuntimeError("node exploded")

    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel([boom]), name="a"), "a")
    with pytest.raises(Exception, match="node exploded"):
        builder.build()("task")


def test_swarm_result_and_events_have_strands_shapes() -> None:
    calls: list[str] = []

    def hand_off(messages: list[Message]) -> Any:
        if any("toolResult" in b for b in messages[-1]["content"]):
            return "a handed off"
        return tool_call("handoff_to_agent", {"agent_name": "b", "message": "finish it"})

    swarm = Swarm([agent("a", calls, hand_off), agent("b", calls)], id="team")
    result = swarm("task")
    assert isinstance(result, SwarmResult) and result.status == Status.COMPLETED
    assert all(isinstance(n, SwarmNode) for n in result.node_history)
    assert [str(n) for n in result.node_history] == ["a", "b"] and result.execution_count == 2
    assert str(result.results["b"].result) == "b done\n"
    assert result.accumulated_usage["totalTokens"] == 45  # three model calls

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in Swarm([agent("a", [], hand_off), agent("b", [])]).stream_async("task")]

    import asyncio

    events = asyncio.run(collect())
    kinds = [e["type"] for e in events if e["type"] != "multiagent_node_stream"]
    assert kinds == [
        "multiagent_node_start",
        "multiagent_node_stop",
        "multiagent_handoff",
        "multiagent_node_start",
        "multiagent_node_stop",
        "multiagent_result",
    ]
    handoff = next(e for e in events if e["type"] == "multiagent_handoff")
    assert (handoff["from_node_ids"], handoff["to_node_ids"], handoff["message"]) == (["a"], ["b"], "finish it")


def test_a_swarm_member_that_raises_ends_the_swarm_failed_with_a_result_as_strands() -> None:
    def boom(messages: list[Message]) -> Any:
        raise RuntimeError("member exploded")

    result = Swarm([Agent(model=ScriptedModel([boom]), name="a")])("task")
    assert result.status == Status.FAILED
    assert isinstance(result.results["a"].result, Exception) and "member exploded" in str(result.results["a"].result)


@pytest.mark.parametrize("option", ["session_manager", "hooks", "plugins"])
def test_multi_agent_session_managers_hooks_and_plugins_are_refused_not_ignored(option: str) -> None:
    with pytest.raises(ConfigurationError, match=option):
        Swarm([agent("a", [])], **{option: [object()]})
    with pytest.raises(ConfigurationError, match=option):
        from tether.strands.multiagent.graph import Graph

        Graph({}, set(), set(), **{option: [object()]})


def test_builder_errors_are_value_errors_as_in_strands() -> None:
    builder = GraphBuilder()
    a = agent("a", [])
    builder.add_node(a, "a")
    with pytest.raises(ValueError, match="Duplicate node instance"):
        builder.add_node(a, "again")
    with pytest.raises(ValueError, match="already exists"):
        builder.add_node(agent("x", []), "a")
    with pytest.raises(ValueError, match="not found"):
        builder.add_edge("a", "missing")
    with pytest.raises(ValueError, match="at least one node"):
        GraphBuilder().build()


def test_node_and_multi_agent_results_round_trip_through_strands_json() -> None:
    result = diamond([])("task")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["type"] == "multiagent_result" and data["results"]["a"]["result"]["type"] == "agent_result"
    back = MultiAgentResult.from_dict(data)
    assert back.status == Status.COMPLETED and str(back.results["d"]) == "d done"
    failed = NodeResult(Exception("bad"), status=Status.FAILED)
    assert str(NodeResult.from_dict(failed.to_dict()).result) == "bad"
    with pytest.raises(TypeError):
        NodeResult.from_dict({"result": {"type": "nope"}})


# -- snapshots: Tether -> Tether -------------------------------------------------------------------


async def test_a_mid_run_graph_snapshot_continues_on_a_new_graph_with_nothing_redone() -> None:
    calls: list[str] = []
    graph = diamond(calls)
    snapshot = None
    async for event in graph.stream_async("plan a trip"):
        if event["type"] == "multiagent_node_stop":
            snapshot = json.loads(graph.take_snapshot().to_json())
            break
    assert snapshot is not None
    assert sorted(snapshot["data"]["state"]["next_nodes_to_execute"]) == ["b", "c"]
    later: list[str] = []
    fresh = diamond(later)
    fresh.load_snapshot(snapshot)
    result = await fresh.invoke_async("ignored")
    assert sorted(later) == ["b", "c", "d"], "a is not run again"
    assert result.status == Status.COMPLETED and len(result.execution_order) == 4


def test_a_finished_snapshot_resets_the_graph_and_its_state_reads_as_strands() -> None:
    graph = diamond([])
    graph("task")
    assert graph.state.status == Status.COMPLETED and len(graph.state.completed_nodes) == 4
    graph.load_snapshot(graph.take_snapshot())
    assert graph.state.status == Status.PENDING and graph.serialize_state()["status"] == "pending"


# -- snapshots: bad input --------------------------------------------------------------------------


def strands_graph_state(**changes: Any) -> dict[str, Any]:
    """A Strands graph state of ``diamond`` after ``a`` (as Strands' ``serialize_state`` writes it)."""
    state: dict[str, Any] = {
        "type": "graph",
        "id": "diamond",
        "status": "executing",
        "completed_nodes": ["a"],
        "failed_nodes": [],
        "interrupted_nodes": [],
        "node_results": {
            "a": {
                "result": {
                    "type": "agent_result",
                    "message": {"role": "assistant", "content": [{"text": "a done"}]},
                    "stop_reason": "end_turn",
                },
                "execution_time": 3,
                "status": "completed",
                "accumulated_usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "accumulated_metrics": {"latencyMs": 3},
                "execution_count": 1,
                "interrupts": [],
            }
        },
        "next_nodes_to_execute": ["b", "c"],
        "current_task": "plan",
        "execution_order": ["a"],
        "accumulated_usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "accumulated_metrics": {"latencyMs": 3},
        "execution_count": 1,
        "execution_time": 3,
        "_internal_state": {"interrupt_state": {"interrupts": {}, "context": {}, "activated": False}},
    }
    state.update(changes)
    return state


def envelope(state: Any, orchestrator_id: str = "diamond", **changes: Any) -> dict[str, Any]:
    doc = {
        "scope": "multiAgent",
        "schema_version": "1.0",
        "created_at": "2026-01-01T00:00:00Z",
        "data": {"orchestrator_id": orchestrator_id, "state": state},
        "app_data": {},
    }
    doc.update(changes)
    return doc


def test_a_strands_graph_state_continues() -> None:
    calls: list[str] = []
    graph = diamond(calls)
    graph.load_snapshot(envelope(strands_graph_state()))
    result = graph("ignored")
    assert sorted(calls) == ["b", "c", "d"] and result.status == Status.COMPLETED


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (envelope(strands_graph_state(), orchestrator_id="other"), "orchestrator_id"),
        (envelope(strands_graph_state(), schema_version="2.0"), "schema_version"),
        (envelope(strands_graph_state(), scope="agent"), "snapshot.data.orchestrator_id is not a snapshot field"),
        (envelope([1, 2]), "snapshot.data.state"),
        (envelope(strands_graph_state(type="swarm")), "state.type"),
        (envelope(strands_graph_state(status="paused")), "state.status"),
        (envelope(strands_graph_state(next_nodes_to_execute=["zz"])), "state.next_nodes_to_execute"),
        (envelope(strands_graph_state(completed_nodes="a")), "state.completed_nodes"),
        (envelope(strands_graph_state(execution_order=["a", 3])), "state.execution_order"),
        (envelope(strands_graph_state(node_results={"a": {"result": {"type": "alien"}}})), "state.node_results.a"),
        (envelope(strands_graph_state(node_results={"a": {"result": {"type": "agent_result"}}})), "state.node_results.a"),
        (envelope(strands_graph_state(node_results={"ghost": {}})), "state.node_results"),
        (envelope(strands_graph_state(current_task=42)), "state.current_task"),
        (envelope(strands_graph_state(tether_state={"state": {"status": "executing"}, "execution_order": []})), "tether_state"),
        (envelope(strands_graph_state(status="interrupted")), "state.status"),
    ],
)
def test_a_bad_multi_agent_snapshot_is_refused_naming_the_field_and_changes_nothing(doc: dict[str, Any], field: str) -> None:
    calls: list[str] = []
    graph = diamond(calls)
    graph.load_snapshot(envelope(strands_graph_state()))
    before = copy.deepcopy(graph.serialize_state())
    with pytest.raises(SnapshotError, match=field) as caught:
        graph.load_snapshot(copy.deepcopy(doc))
    assert isinstance(caught.value, TetherError) and isinstance(caught.value, SnapshotException)
    assert graph.serialize_state() == before, "nothing changed"
    graph("ignored")
    assert sorted(calls) == ["b", "c", "d"], "the state loaded before still continues"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"node_history": ["a", "nobody"]}, "state.node_history"),
        ({"context": {"shared_context": {"a": 1}}}, "shared_context"),
        ({"context": {"handoff_message": 5}}, "handoff_message"),
        ({"type": "graph"}, "state.type"),
    ],
)
def test_a_bad_swarm_state_is_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    swarm = Swarm([agent("a", []), agent("b", [])], id="team")
    state = {
        "type": "swarm",
        "id": "team",
        "status": "executing",
        "node_history": ["a"],
        "node_results": {},
        "next_nodes_to_execute": ["b"],
        "current_task": "t",
        "context": {"shared_context": {}, "handoff_node": None, "handoff_message": "go"},
        **change,
    }
    before = swarm.serialize_state()
    with pytest.raises(SnapshotError, match=field):
        swarm.load_snapshot(envelope(state, orchestrator_id="team"))
    assert swarm.serialize_state() == before


def test_importing_the_facade_imports_no_strands_nor_provider_sdk() -> None:
    code = (
        "import sys, tether.strands.multiagent, tether.strands.multiagent.graph, tether.strands.multiagent.swarm, "
        "tether.strands.multiagent.base\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('strands', 'openai', 'anthropic', 'boto3', 'llama_cpp')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_graph_nests_a_graph_as_a_node() -> None:
    calls: list[str] = []
    inner = GraphBuilder()
    inner.add_node(agent("x", calls), "x")
    outer = GraphBuilder()
    outer.add_node(inner.build(), "inner")
    outer.add_node(agent("y", calls), "y")
    outer.add_edge("inner", "y")
    result = outer.build()("task")
    assert result.status == Status.COMPLETED and calls == ["x", "y"]
    nested = result.results["inner"]
    assert isinstance(nested.result, MultiAgentResult) and str(nested.result) == "x: x done"
    assert nested.get_agent_results()[0].stop_reason == "end_turn"
    with pytest.raises(ConfigurationError, match="Swarm cannot be a graph node"):
        builder = GraphBuilder()
        builder.add_node(Swarm([agent("s", [])]), "s")
        builder.build()


def interrupting_graph(log: list[str]) -> Any:
    @tool
    def approve(ctx: ToolContext, amount: int) -> str:
        """Ask a human to approve an amount.

        Args:
            amount: The amount.
        """
        answer = ctx.interrupt("approval", f"approve {amount}?")
        log.append(f"approved: {answer}")
        return f"human said {answer}"

    model = ScriptedModel([tool_call("approve", {"amount": 5}), "ask done"], stateful=True)
    builder = GraphBuilder()
    builder.add_node(Agent(model=model, tools=[approve], name="ask"), "ask")
    builder.add_node(agent("after", log), "after")
    builder.add_edge("ask", "after")
    builder.set_graph_id("approvals")
    return builder.build()


def test_an_interrupted_graph_moves_through_the_envelope_and_is_answered_on_a_new_graph() -> None:
    log: list[str] = []
    first = interrupting_graph(log)("refund")
    assert first.status == Status.INTERRUPTED and first.interrupted_nodes == 1
    assert [i.name for i in first.interrupts] == ["approval"]
    snapshot = json.loads(json.dumps(interrupting_graph(log).take_snapshot().to_dict()))
    assert snapshot["data"]["state"]["status"] == "pending", "a new graph has not run"
    graph = interrupting_graph(log)
    graph("refund")
    moved = json.loads(graph.take_snapshot().to_json())
    state = moved["data"]["state"]
    assert (state["status"], state["interrupted_nodes"], state["next_nodes_to_execute"]) == ("interrupted", ["ask"], ["ask"])
    fresh = interrupting_graph(log)
    fresh.load_snapshot(moved)
    waiting = [i.id for i in fresh.state.results["ask"].interrupts]
    done = fresh([{"interruptResponse": {"interruptId": i, "response": "yes"}} for i in waiting])
    assert done.status == Status.COMPLETED
    assert log == ["approved: yes", "after"]
