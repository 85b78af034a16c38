"""Graphs: conditional edges, parallel branches, cycles, snapshots, durable runs, bad input."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, AgentResult, tool
from tether.durable import MemoryStore, SQLiteStore
from tether.errors import ConfigurationError, PromptError, RunNotFoundError, SnapshotError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Graph, GraphBuilder, GraphResult, GraphState
from tether.tools.context import ToolContext
from tether.types import Message


def answering(name: str, reply: str | None = None) -> Agent:
    """An agent whose every answer names it and echoes the start of its input."""

    def answer(messages: list[Message]) -> str:
        text = messages[-1]["content"][0].get("text", "")
        return reply if reply is not None else f"{name}<{text[:20]}>"

    return Agent(model=ScriptedModel([answer], stateful=True), name=name)


def branching(verdict: str) -> Graph:
    """classify -> (yes | no) by a condition, and classify -> audit (a parallel branch)."""
    builder = GraphBuilder()
    builder.add_node(answering("classify", verdict), "classify")
    builder.add_node(answering("yes"), "yes")
    builder.add_node(answering("no"), "no")
    builder.add_node(answering("audit"), "audit")
    builder.add_edge("classify", "yes", condition=lambda s: "approve" in s.results["classify"].text)
    builder.add_edge("classify", "no", condition=lambda s: "approve" not in s.results["classify"].text)
    builder.add_edge("classify", "audit")
    builder.set_entry_point("classify")
    return builder.build()


def test_a_conditional_edge_picks_one_branch_and_the_parallel_branch_runs_too() -> None:
    approved = branching("approve")("a loan request")
    assert approved.status == "completed"
    assert approved.execution_order[0] == "classify"
    assert sorted(approved.execution_order[1:]) == ["audit", "yes"]
    assert "no" not in approved.results
    assert approved.results["yes"].text.startswith("yes<Original task: a ")
    rejected = branching("reject")("a loan request")
    assert sorted(rejected.execution_order[1:]) == ["audit", "no"]
    assert str(rejected) == rejected.results[rejected.execution_order[-1]].text
    assert rejected.execution_count == 3


async def test_parallel_branches_run_concurrently() -> None:
    arrived: list[str] = []
    both = asyncio.Event()

    async def meet(name: str) -> str:
        arrived.append(name)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 30)  # sequential branches would never meet
        return name

    async def left(prompt: Any) -> str:
        return await meet("left")

    async def right(prompt: Any) -> str:
        return await meet("right")

    builder = GraphBuilder()
    builder.add_node(lambda p: "go", "start")
    builder.add_node(left)
    builder.add_node(right)
    builder.add_node(lambda p: f"joined: {p.count('From ')} inputs", "join")
    for branch in ("left", "right"):
        builder.add_edge("start", branch)
        builder.add_edge(branch, "join")
    result = await builder.build().invoke_async("task")
    assert sorted(arrived) == ["left", "right"]
    assert result.execution_order[-1] == "join"
    assert str(result) == "joined: 2 inputs"  # a node runs when ALL its incoming edges are satisfied


def test_one_agent_object_in_two_parallel_nodes_does_not_collide() -> None:
    shared = answering("shared")
    builder = GraphBuilder()
    builder.add_node(answering("start"), "start")
    builder.add_node(shared, "one")
    builder.add_node(shared, "two")
    builder.add_edge("start", "one")
    builder.add_edge("start", "two")
    result = builder.build()("task")
    assert result.status == "completed"
    assert {result.results["one"].text, result.results["two"].text} == {"shared<Original task: task\n>"}
    assert shared.messages == []  # each execution ran a fresh copy of the agent


def counting_loop(limit: int, stop_after: int) -> tuple[Graph, list[str]]:
    calls: list[str] = []

    def step(prompt: Any) -> str:
        calls.append("step")
        return f"step {len(calls)}"

    builder = GraphBuilder()
    builder.add_node(step, "step")
    builder.add_node(lambda p: "checked", "check")
    builder.add_edge("step", "check")
    builder.add_edge("check", "step", condition=lambda s: s.executions("step") < stop_after)
    builder.set_entry_point("step")
    builder.set_max_node_executions(limit)
    return builder.build(), calls


def test_a_cycle_runs_until_its_condition_stops_it() -> None:
    graph, calls = counting_loop(limit=100, stop_after=3)
    result = graph("loop")
    assert result.status == "completed"
    assert result.execution_order == ["step", "check"] * 3
    assert len(calls) == 3
    assert result.results["step"].executions == 3


def test_a_cycle_stops_at_the_execution_limit() -> None:
    graph, _ = counting_loop(limit=5, stop_after=100)
    result = graph("loop")
    assert result.status == "failed"
    assert result.execution_count == 5
    assert result.error is not None and "max node executions (5)" in result.error


def test_a_nested_graph_is_a_node() -> None:
    inner = GraphBuilder()
    inner.add_node(lambda p: "inner done", "inner")
    outer = GraphBuilder()
    outer.add_node(lambda p: "first", "first")
    outer.add_node(inner.build(), "sub")
    outer.add_edge("first", "sub")
    result = outer.build()("task")
    sub = result.results["sub"].result
    assert isinstance(sub, GraphResult) and sub.execution_order == ["inner"]
    assert str(result) == "inner done"


async def test_stream_reports_node_starts_agent_events_and_results() -> None:
    graph = branching("approve")
    events = [event async for event in graph.stream_async("task")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "node_start" and kinds[-1] == "result"
    assert {e["node_id"] for e in events if e["type"] == "node_event"} == {"classify", "yes", "audit"}
    assert [e["node_id"] for e in events if e["type"] == "node_result"] == events[-1]["result"].execution_order


def test_conditions_see_the_graph_state() -> None:
    seen: list[tuple[Any, list[str], int]] = []

    def look(state: GraphState) -> bool:
        seen.append((state.task, state.execution_order, state.execution_count))
        return True

    builder = GraphBuilder()
    builder.add_node(lambda p: "a", "a")
    builder.add_node(lambda p: "b", "b")
    builder.add_edge("a", "b", condition=look)
    builder.build()("the task")
    assert seen == [("the task", ["a"], 1)]


# -- snapshots -----------------------------------------------------------------------------------


def counted_pipeline(counts: dict[str, int]) -> Graph:
    def node(name: str) -> Any:
        def run(prompt: Any) -> str:
            counts[name] = counts.get(name, 0) + 1
            return f"{name}({str(prompt)[-12:]})"

        run.__name__ = name
        return run

    builder = GraphBuilder()
    for name in ("a", "b", "c"):
        builder.add_node(node(name))
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    return builder.build()


async def test_a_snapshot_restores_into_a_fresh_graph_without_redoing_finished_nodes() -> None:
    reference = counted_pipeline({})("task")
    first_counts: dict[str, int] = {}
    graph = counted_pipeline(first_counts)
    async with contextlib_aclosing(graph.stream_async("task")) as events:
        async for event in events:
            if event["type"] == "node_result":
                snapshot = json.loads(json.dumps(graph.take_snapshot()))  # plain JSON
                break
    assert first_counts == {"a": 1}
    counts: dict[str, int] = {}
    fresh = counted_pipeline(counts)
    fresh.load_snapshot(snapshot)
    result = await fresh.invoke_async()
    assert counts == {"b": 1, "c": 1}  # "a" was finished: not redone
    assert result.execution_order == reference.execution_order
    assert str(result) == str(reference)
    assert fresh.take_snapshot()["state"]["status"] == "completed"


def contextlib_aclosing(gen: Any) -> Any:
    import contextlib

    return contextlib.aclosing(gen)


def test_a_snapshot_of_another_graph_is_refused() -> None:
    graph = counted_pipeline({})
    graph("task")
    snapshot = graph.take_snapshot()
    other = GraphBuilder()
    other.add_node(lambda p: "x", "x")
    with pytest.raises(SnapshotError, match="not this graph's nodes"):
        other.build().load_snapshot(snapshot)
    with pytest.raises(SnapshotError, match="not a graph snapshot"):
        graph.load_snapshot({"type": "tether.agent"})
    broken = json.loads(json.dumps(snapshot))
    broken["execution_order"] = ["nowhere"]
    with pytest.raises(SnapshotError, match="execution order"):
        graph.load_snapshot(broken)


# -- durable runs ------------------------------------------------------------------------------------


def test_a_durable_graph_run_is_a_run_of_nested_node_runs(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    graph = branching("approve")
    graph.store = store
    result = graph("task", run_id="g")
    assert result.run_id == "g" and result.status == "completed"
    runs = {r.run_id: r for r in store.list_runs()}
    assert runs["g"].status == "finished" and runs["g"].parent_run_id is None
    children = {r for r in runs if r != "g"}
    assert children == {"g.classify:1", "g.yes:1", "g.audit:1"}
    assert all(runs[c].parent_run_id == "g" and runs[c].status == "finished" for c in children)
    again = branching("approve")
    again.store = SQLiteStore(tmp_path / "runs.db")
    resumed = again.resume("g")  # finished: the stored result, nothing runs
    assert resumed.execution_order == result.execution_order and str(resumed) == str(result)


def test_a_failed_node_fails_the_graph_and_resume_retries_it() -> None:
    attempts: list[int] = []

    def flaky(prompt: Any) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("boom")
        return "recovered"

    builder = GraphBuilder()
    builder.add_node(lambda p: "first", "first")
    builder.add_node(flaky)
    builder.add_edge("first", "flaky")
    graph = builder.build(store=MemoryStore())
    with pytest.raises(RuntimeError, match="boom"):
        graph("task", run_id="f")
    assert graph.take_snapshot()["state"]["status"] == "failed"
    result = graph.resume("f")
    assert result.status == "completed" and str(result) == "recovered"
    assert result.execution_order == ["first", "flaky"]


# -- bad input ---------------------------------------------------------------------------------------


def test_bad_graphs_are_configuration_errors_naming_the_problem() -> None:
    builder = GraphBuilder()
    builder.add_node(lambda p: "a", "a")
    with pytest.raises(ConfigurationError, match="'a' already exists"):
        builder.add_node(lambda p: "a", "a")
    with pytest.raises(ConfigurationError, match="to_node 'nowhere' is not a node"):
        builder.add_edge("a", "nowhere")
    with pytest.raises(ConfigurationError, match="from_node 'ghost' is not a node"):
        builder.add_edge("ghost", "a")
    with pytest.raises(ConfigurationError, match="set_entry_point: 'ghost'"):
        builder.set_entry_point("ghost")
    with pytest.raises(ConfigurationError, match="pass node_id"):
        builder.add_node(lambda p: "x")
    with pytest.raises(ConfigurationError, match="an Agent, a Graph or a callable"):
        builder.add_node(42, "n")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="positive int"):
        builder.set_max_node_executions(0)
    with pytest.raises(ConfigurationError, match="no nodes"):
        GraphBuilder().build()
    loop = GraphBuilder()
    loop.add_node(lambda p: "a", "a")
    loop.add_node(lambda p: "b", "b")
    loop.add_edge("a", "b")
    loop.add_edge("b", "a")
    with pytest.raises(ConfigurationError, match="no entry point"):
        loop.build()
    loop.set_entry_point("a")
    with pytest.raises(ConfigurationError, match=r"cycle \(a -> b -> a\).*set_max_node_executions"):
        loop.build()
    loop.set_max_node_executions(4)
    assert loop.build().entry_points == ["a"]


def test_bad_runs_are_clear_errors() -> None:
    graph = counted_pipeline({})
    with pytest.raises(PromptError, match="no task"):
        graph()
    with pytest.raises(PromptError, match="string or a list of content blocks"):
        graph(42)
    graph.store = MemoryStore()
    with pytest.raises(RunNotFoundError, match="'missing'"):
        graph.resume("missing")
    graph("task", run_id="r")
    with pytest.raises(PromptError, match="already exists"):
        graph("again", run_id="r")
    agent = Agent(model=ScriptedModel(["hi"]), store=graph.store)
    agent("hello", run_id="plain")
    with pytest.raises(Exception, match=r"not a tether\.graph run"):
        graph.resume("plain")


def test_a_durable_nested_graph_is_a_nested_run_of_nested_runs() -> None:
    inner = GraphBuilder()
    inner.add_node(answering("inner"), "inner")
    outer = GraphBuilder()
    outer.add_node(answering("first"), "first")
    outer.add_node(inner.build(), "sub")
    outer.add_edge("first", "sub")
    store = MemoryStore()
    graph = outer.build(store=store)
    result = graph("task", run_id="o")
    assert str(result).startswith("inner<Original task:")
    parents = {r.run_id: r.parent_run_id for r in store.list_runs()}
    assert parents == {"o": None, "o.first:1": "o", "o.sub:1": "o", "o.sub:1.inner:1": "o.sub:1"}
    assert str(graph.resume("o")) == str(result)


def test_an_interrupt_in_a_node_stops_the_graph_as_interrupted() -> None:
    @tool
    def approve(ctx: ToolContext) -> str:
        """Ask a human."""
        return str(ctx.interrupt("approval", "ok?"))

    asking = Agent(model=ScriptedModel([tool_call("approve", {}), "approved"], stateful=True), tools=[approve], name="ask")
    builder = GraphBuilder()
    builder.add_node(asking, "ask")
    builder.add_node(lambda p: "after", "after")
    builder.add_edge("ask", "after")
    result = builder.build()("task")
    assert result.status == "interrupted"
    assert result.results["ask"].status == "interrupted" and "after" not in result.results
    assert isinstance(result.results["ask"].result, AgentResult) and result.results["ask"].result.stop_reason == "interrupt"


def test_resuming_a_graph_stopped_by_its_limit_keeps_the_outcome() -> None:
    graph, calls = counting_loop(limit=3, stop_after=100)
    graph.store = MemoryStore()
    first = graph("loop", run_id="limited")
    assert first.status == "failed"
    again = graph.resume("limited")
    assert (again.status, again.error, again.execution_count) == ("failed", first.error, 3)
    assert len(calls) == 2  # nothing ran again
    graph.load_snapshot(graph.take_snapshot())
    assert graph().status == "failed" and len(calls) == 2


def test_a_graph_takes_the_input_of_nodes_started_by_others_from_its_caller() -> None:
    built = GraphBuilder()
    built.add_node(lambda task: f"A({task})", "a")
    built.add_node(lambda task: f"B got {task}", "b")
    built.add_edge("a", "b")
    plain = built.build()
    seen: list[Any] = []

    def node_input(task: Any, sources: list[tuple[str, Any]]) -> Any:
        seen.append((task, sources))
        return [{"text": f"{task} <- " + ", ".join(f"{s}={r}" for s, r in sources)}]

    graph = Graph(plain.nodes, plain.edges, plain.entry_points, None, None, node_input=node_input)
    result = graph("t")
    assert seen == [("t", [("a", "A(t)")])]
    assert result.results["b"].result == "B got [{'text': 't <- a=A(t)'}]"
    assert str(plain("t").results["b"].result).startswith("B got Original task: t")  # the default is unchanged
