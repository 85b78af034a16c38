"""Multi-agent snapshots with the real ``strands-agents`` package, both ways: Strands' ``multiAgent``
envelope (``data = {orchestrator_id, state}``) with its Graph and Swarm ``serialize_state`` shapes.

Each side runs the same two-node workflow (a graph ``a -> b``; a swarm where ``a`` hands off to
``b``) with models driven by the same reply function: a Strands ``Model`` subclass on the
Strands side, Tether's scripted model on the Tether side. A snapshot taken mid-run on one side
is loaded on the other, which continues it: the node that finished is not run again, the next
one runs on the finished node's answer. A finished snapshot makes the other side start afresh
(Strands' rule). The snapshots travel as JSON text, as they would between processes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.errors import SnapshotError
from tether.models.scripted import tool_call
from tether.strands.multiagent import GraphBuilder, Status, Swarm
from tether.types import Message

strands = pytest.importorskip("strands", reason="strands-agents is in the dev extra")
from strands import Agent as StrandsAgent  # noqa: E402
from strands.hooks import AfterNodeCallEvent  # noqa: E402
from strands.models.model import Model as StrandsModel  # noqa: E402
from strands.multiagent import GraphBuilder as StrandsGraphBuilder  # noqa: E402
from strands.multiagent import Swarm as StrandsSwarm  # noqa: E402
from strands.multiagent._snapshot import load_snapshot as strands_load  # noqa: E402
from strands.multiagent._snapshot import take_snapshot as strands_take  # noqa: E402
from strands.multiagent.base import NodeResult as StrandsNodeResult  # noqa: E402
from strands.multiagent.base import Status as StrandsStatus  # noqa: E402
from strands.types._snapshot import Snapshot as StrandsSnapshot  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:graph has no max_node_executions")

Reply = Callable[[list[Any]], Any]
"""A reply function: the conversation -> a text, or ``{"tool": name, "input": {...}}``."""


def texts(message: Any) -> str:
    return " ".join(str(b["text"]) for b in message["content"] if isinstance(b, dict) and "text" in b)


def prompt(messages: list[Any]) -> str:
    """The text of the conversation's latest user text message (the node's input: a graph
    node's agent keeps its conversation from earlier runs, in Strands and on Tether)."""
    return next(texts(m) for m in reversed(messages) if m["role"] == "user" and texts(m))


def answers(name: str, calls: list[str]) -> Reply:
    """A node that answers ``"<name> done"``, recording its calls."""

    def reply(messages: list[Any]) -> Any:
        calls.append(name)
        return f"{name} done"

    return reply


def reads(name: str, calls: list[str]) -> Reply:
    """A node whose answer quotes its input (so the test sees what it was given)."""

    def reply(messages: list[Any]) -> Any:
        calls.append(name)
        return f"{name} read [{prompt(messages)}]"

    return reply


def hands_off(name: str, to: str, calls: list[str]) -> Reply:
    """A swarm member that hands off to ``to``, then says so."""

    def reply(messages: list[Any]) -> Any:
        calls.append(name)
        last = messages[-1]
        if any("toolResult" in b for b in last["content"]):
            return f"{name} handed off"
        return {"tool": "handoff_to_agent", "input": {"agent_name": to, "message": f"{to}, finish it", "context": {"topic": "graphs"}}}

    return reply


class ScriptModel(StrandsModel):
    """A Strands model answering with a reply function (Bedrock-style stream events)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.count = 0

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("no structured output here")
        yield  # pragma: no cover

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        out = self.reply(messages)
        self.count += 1
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(out, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": out}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            start = {"toolUse": {"toolUseId": f"t{self.count}", "name": out["tool"]}}
            yield {"contentBlockStart": {"start": start}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(out["input"])}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}


def tether_agent(name: str, reply: Reply) -> Agent:
    def script(messages: list[Message]) -> Any:
        out = reply(messages)
        return out if isinstance(out, str) else tool_call(out["tool"], out["input"])

    return Agent(model=ScriptedModel([script] * 20), name=name, description=f"the {name}")


def strands_agent(name: str, reply: Reply) -> Any:
    return StrandsAgent(model=ScriptModel(reply), name=name, description=f"the {name}", callback_handler=None)


def over_json(snapshot_dict: dict[str, Any]) -> dict[str, Any]:
    """The snapshot as another process reads it."""
    parsed: dict[str, Any] = json.loads(json.dumps(snapshot_dict))
    return parsed


# -- graphs ---------------------------------------------------------------------------------------


def tether_graph(calls: list[str], graph_id: str = "pipeline") -> Any:
    builder = GraphBuilder()
    builder.add_node(tether_agent("a", answers("a", calls)), "a")
    builder.add_node(tether_agent("b", reads("b", calls)), "b")
    builder.add_edge("a", "b")
    builder.set_graph_id(graph_id)
    return builder.build()


def strands_graph(calls: list[str], graph_id: str = "pipeline") -> Any:
    builder = StrandsGraphBuilder()
    builder.add_node(strands_agent("a", answers("a", calls)), "a")
    builder.add_node(strands_agent("b", reads("b", calls)), "b")
    builder.add_edge("a", "b")
    builder.set_graph_id(graph_id)
    return builder.build()


async def tether_graph_after_first_node(graph: Any, task: str) -> dict[str, Any]:
    """Run ``graph`` until its first node stops, snapshot it, and abandon the run there."""
    async for event in graph.stream_async(task):
        if event["type"] == "multiagent_node_stop":
            assert event["node_id"] == "a"
            return over_json(graph.take_snapshot(app_data={"ticket": 7}).to_dict())
    raise AssertionError("the first node never stopped")


def strands_graph_snapshots(graph: Any) -> list[dict[str, Any]]:
    """Strands' own snapshots of ``graph`` after each node (as its snapshot session manager takes them)."""
    taken: list[dict[str, Any]] = []
    graph.hooks.add_callback(AfterNodeCallEvent, lambda event: taken.append(over_json(strands_take(event.source).to_dict())))
    return taken


async def test_a_tether_graph_snapshot_mid_run_continues_in_strands() -> None:
    calls: list[str] = []
    snapshot = await tether_graph_after_first_node(tether_graph(calls), "summarize graphs")
    state = snapshot["data"]["state"]
    assert snapshot["scope"] == "multiAgent" and snapshot["data"]["orchestrator_id"] == "pipeline"
    assert snapshot["app_data"] == {"ticket": 7}
    assert (state["type"], state["status"], state["completed_nodes"], state["next_nodes_to_execute"]) == (
        "graph",
        "executing",
        ["a"],
        ["b"],
    )
    assert StrandsNodeResult.from_dict(state["node_results"]["a"]).status == StrandsStatus.COMPLETED

    s_calls: list[str] = []
    graph = strands_graph(s_calls)
    strands_load(graph, StrandsSnapshot.from_dict(snapshot))
    result = graph("this task is ignored: the loaded run continues")
    assert s_calls == ["b"], "a finished before the snapshot: Strands runs only b"
    assert result.status == StrandsStatus.COMPLETED
    assert [n.node_id for n in result.execution_order] == ["a", "b"]
    assert str(result.results["a"].result).strip() == "a done"
    answer = str(result.results["b"].result)
    assert "summarize graphs" in answer and "a done" in answer, "b ran on the task and a's answer"


async def test_a_finished_tether_graph_snapshot_loads_in_strands_and_starts_afresh() -> None:
    calls: list[str] = []
    graph = tether_graph(calls)
    result = await graph.invoke_async("summarize graphs")
    assert calls == ["a", "b"] and result.status == Status.COMPLETED
    snapshot = over_json(graph.take_snapshot().to_dict())
    state = snapshot["data"]["state"]
    assert (state["status"], state["next_nodes_to_execute"], state["execution_order"]) == ("completed", [], ["a", "b"])
    for entry in state["node_results"].values():
        assert StrandsNodeResult.from_dict(entry).status == StrandsStatus.COMPLETED

    s_calls: list[str] = []
    s_graph = strands_graph(s_calls)
    strands_load(s_graph, StrandsSnapshot.from_dict(snapshot))
    assert s_graph.serialize_state()["status"] == "pending", "Strands resets on a finished state"
    assert s_graph("again").status == StrandsStatus.COMPLETED
    assert s_calls == ["a", "b"]


async def test_a_strands_graph_snapshot_mid_run_continues_on_tether() -> None:
    s_calls: list[str] = []
    s_graph = strands_graph(s_calls)
    taken = strands_graph_snapshots(s_graph)
    await s_graph.invoke_async("summarize graphs")
    assert s_calls == ["a", "b"]
    after_a = taken[0]
    assert after_a["data"]["state"]["next_nodes_to_execute"] == ["b"]

    calls: list[str] = []
    graph = tether_graph(calls)
    graph.load_snapshot(after_a)
    result = await graph.invoke_async("this task is ignored: the loaded run continues")
    assert calls == ["b"], "a finished in Strands: Tether runs only b"
    assert result.status == Status.COMPLETED
    assert [n.node_id for n in result.execution_order] == ["a", "b"]
    assert str(result.results["a"].result).strip() == "a done"
    answer = str(result.results["b"].result)
    assert "summarize graphs" in answer and "a done" in answer, "b ran on the task and a's answer (read from Strands' result)"
    assert result.accumulated_usage["totalTokens"] > 0


async def test_a_finished_strands_graph_snapshot_resets_a_tether_graph() -> None:
    s_graph = strands_graph([])
    taken = strands_graph_snapshots(s_graph)
    await s_graph.invoke_async("summarize graphs")
    finished = over_json(strands_take(s_graph).to_dict())
    assert finished["data"]["state"]["status"] == "completed"
    assert len(taken) == 2

    calls: list[str] = []
    graph = tether_graph(calls)
    await graph.invoke_async("first")
    graph.load_snapshot(finished)
    assert graph.serialize_state()["status"] == "pending", "as Strands: a finished state resets the graph"
    result = await graph.invoke_async("second")
    assert result.status == Status.COMPLETED
    assert calls == ["a", "b", "a", "b"]
    assert "second" in str(result.results["b"].result)


async def test_strands_to_tether_to_strands_keeps_the_graph_run() -> None:
    s_graph = strands_graph([])
    taken = strands_graph_snapshots(s_graph)
    await s_graph.invoke_async("summarize graphs")

    graph = tether_graph([])
    graph.load_snapshot(taken[0])
    back = over_json(graph.take_snapshot().to_dict())
    state = back["data"]["state"]
    assert (state["completed_nodes"], state["next_nodes_to_execute"], state["current_task"]) == (["a"], ["b"], "summarize graphs")

    s_calls: list[str] = []
    again = strands_graph(s_calls)
    strands_load(again, StrandsSnapshot.from_dict(back))
    result = again("ignored")
    assert s_calls == ["b"] and result.status == StrandsStatus.COMPLETED


# -- swarms ---------------------------------------------------------------------------------------


def tether_swarm(calls: list[str], swarm_id: str = "team") -> Swarm:
    return Swarm([tether_agent("a", hands_off("a", "b", calls)), tether_agent("b", reads("b", calls))], id=swarm_id)


def strands_swarm(calls: list[str], swarm_id: str = "team") -> Any:
    return StrandsSwarm([strands_agent("a", hands_off("a", "b", calls)), strands_agent("b", reads("b", calls))], id=swarm_id)


async def test_a_tether_swarm_snapshot_at_a_handoff_continues_in_strands() -> None:
    calls: list[str] = []
    swarm = tether_swarm(calls)
    snapshot: dict[str, Any] | None = None
    async for event in swarm.stream_async("explain graphs"):
        if event["type"] == "multiagent_handoff":
            assert (event["from_node_ids"], event["to_node_ids"]) == (["a"], ["b"])
            snapshot = over_json(swarm.take_snapshot().to_dict())
            break
    assert snapshot is not None and calls == ["a", "a"]
    state = snapshot["data"]["state"]
    assert (state["type"], state["status"], state["node_history"], state["next_nodes_to_execute"]) == ("swarm", "executing", ["a"], ["b"])
    assert state["context"]["handoff_message"] == "b, finish it"

    s_calls: list[str] = []
    s_swarm = strands_swarm(s_calls)
    strands_load(s_swarm, StrandsSnapshot.from_dict(snapshot))
    result = s_swarm("ignored: the loaded run continues")
    assert s_calls == ["b"], "a's turn finished on Tether: Strands runs only b"
    assert result.status == StrandsStatus.COMPLETED
    assert [n.node_id for n in result.node_history] == ["a", "b"]
    answer = str(result.results["b"].result)
    assert "explain graphs" in answer and "b, finish it" in answer and "graphs" in answer


async def test_a_strands_swarm_snapshot_after_a_handoff_continues_on_tether() -> None:
    s_calls: list[str] = []
    s_swarm = strands_swarm(s_calls)
    taken: list[dict[str, Any]] = []
    s_swarm.hooks.add_callback(AfterNodeCallEvent, lambda event: taken.append(over_json(strands_take(event.source).to_dict())))
    result = await s_swarm.invoke_async("explain graphs")
    assert result.status == StrandsStatus.COMPLETED and s_calls == ["a", "a", "b"]
    after_a = taken[0]
    assert after_a["data"]["state"]["next_nodes_to_execute"] == ["b"]

    calls: list[str] = []
    swarm = tether_swarm(calls)
    swarm.load_snapshot(after_a)
    done = await swarm.invoke_async("ignored: the loaded run continues")
    assert calls == ["b"], "a's turn finished in Strands: Tether runs only b"
    assert done.status == Status.COMPLETED
    assert [str(n) for n in done.node_history] == ["a", "b"]
    answer = str(done.results["b"].result)
    assert "User Request: explain graphs" in answer and "Handoff Message: b, finish it" in answer and "• a: {'topic': 'graphs'}" in answer
    assert str(done.results["a"].result).strip() == "a handed off"


async def test_finished_swarm_snapshots_start_afresh_both_ways() -> None:
    swarm = tether_swarm([])
    await swarm.invoke_async("explain graphs")
    finished = over_json(swarm.take_snapshot().to_dict())
    state = finished["data"]["state"]
    assert (state["status"], state["node_history"], state["next_nodes_to_execute"]) == ("completed", ["a", "b"], [])
    s_calls: list[str] = []
    s_swarm = strands_swarm(s_calls)
    strands_load(s_swarm, StrandsSnapshot.from_dict(finished))
    assert s_swarm("again").status == StrandsStatus.COMPLETED
    assert s_calls == ["a", "a", "b"], "Strands starts afresh from a finished state"

    s_finished = over_json(strands_take(s_swarm).to_dict())
    calls: list[str] = []
    fresh = tether_swarm(calls)
    fresh.load_snapshot(s_finished)
    assert (await fresh.invoke_async("once more")).status == Status.COMPLETED
    assert calls == ["a", "a", "b"]


# -- bad input ------------------------------------------------------------------------------------


async def test_a_strands_snapshot_of_another_orchestrator_is_refused_and_changes_nothing() -> None:
    s_graph = strands_graph([], graph_id="other")
    taken = strands_graph_snapshots(s_graph)
    await s_graph.invoke_async("summarize graphs")
    graph = tether_graph([])
    await graph.invoke_async("mine")
    before = graph.serialize_state()
    with pytest.raises(SnapshotError, match="orchestrator_id") as caught:
        graph.load_snapshot(taken[0])
    assert "'other'" in str(caught.value) and "'pipeline'" in str(caught.value)
    assert graph.serialize_state() == before
    swarm = tether_swarm([])
    with pytest.raises(SnapshotError, match="orchestrator_id"):
        swarm.load_snapshot({**taken[0], "data": {**taken[0]["data"], "orchestrator_id": "default_swarm"}})
