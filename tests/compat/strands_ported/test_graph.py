"""Ported from strands-agents/sdk-python ``tests/strands/multiagent/test_graph.py``: ``GraphBuilder``
and a built graph, run through the public API.

Upstream's nodes are ``unittest.mock`` agents (``create_mock_agent``) with a mocked tracer and
``use_span``; here every node is a real ``Agent`` on the ported ``MockedModelProvider``, and the
tests assert what the graph returns and what each node's model was sent.

Excluded upstream tests (name — reason):
- test_graph_execution's tracer/span assertions (mock_strands_tracer, mock_use_span) — telemetry internals; the rest of
  it is ported as test_graph_execution
- test_graph_unsupported_node_type — an executor that is neither agent nor multi-agent, checked inside Strands' private node runner
- test_graph_node_timeout, test_graph_node_timeout_with_mocked_streaming, test_graph_timeout_cleanup_on_exception —
  sleep-based timing (the brief forbids asserting on timing)
- test_node_reset_executor_state, test_reset_on_revisit_*, test_state_reset_only_with_cycles_enabled,
  test_self_loop_state_reset — read GraphNode private reset snapshots (_initial_messages, _initial_state)
- test_graph_dataclasses_and_enums — constructs internal GraphNode/GraphEdge/GraphState dataclasses by hand
- test_graph_validate_unsupported_features — session-manager restriction checked through a Mock(spec=SessionManager) on a private attribute
- test_graph_streaming_* , test_graph_parallel_* , test_graph_single_invocation_* , test_graph_agent_no_result_event,
  test_graph_multiagent_no_result_event — count calls of Mock agents' stream_async and exact internal stream event
  dicts; parallel order is ported as test_parallel_branches_both_run
- test_graph_persisted — a Mock session manager asserting repository calls
- test_graph_cancel_node, test_graph_interrupt_* — BeforeNodeCallEvent cancel/interrupt hooks with Mock agents
  (interrupts are in the corpus programs)
- test_graph_with_agentbase_implementation — a custom AgentBase protocol implementation
- test_find_newly_ready_nodes_only_evaluates_outbound_edges — calls the private _find_newly_ready_nodes
- test_graph_kwargs_passing_* — assert the kwargs of Mock stream_async calls; ported as test_invocation_state_reaches_edge_conditions
- test_controlled_cyclic_execution — a hand-written Agent subclass overriding invoke_async/stream_async and setting private
  attributes; the cyclic behaviour is ported as test_cyclic_graph_execution
- test_infinite_loop_prevention_self_loops — a Mock multi-agent node; the self-loop limit is ported in
  test_infinite_loop_prevention
- Graph(...) constructor with a duplicated executor in test_graph_builder_validation — builds Graph from internal
  GraphNode objects; the builder checks are ported
"""

from __future__ import annotations

from typing import Any

import pytest

from tether.strands import Agent
from tether.strands.agent import AgentResult
from tether.strands.multiagent import GraphBuilder, GraphResult, MultiAgentResult, Status

from .mocked_model_provider import MockedModelProvider, text


def make_agent(name: str, *answers: str) -> tuple[Agent, MockedModelProvider]:
    model = MockedModelProvider([text(a) for a in answers] or [text(f"{name} response")])
    return Agent(name=name, model=model, callback_handler=None), model


def sent_text(model: MockedModelProvider, call: int = 0) -> str:
    """All text the model was sent in one call (its messages' text blocks)."""
    return "\n".join(block.get("text", "") for message in model.calls[call]["messages"] for block in message["content"])


# --- builder ------------------------------------------------------------------------------


def test_graph_builder_empty() -> None:
    with pytest.raises(ValueError, match="Graph must contain at least one node"):
        GraphBuilder().build()


def test_graph_builder_duplicate_node_id() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("agent1")[0], "duplicate_id")
    with pytest.raises(ValueError, match="Node 'duplicate_id' already exists"):
        builder.add_node(make_agent("agent2")[0], "duplicate_id")


def test_graph_builder_duplicate_node_instance() -> None:
    builder = GraphBuilder()
    same, _ = make_agent("same_agent")
    builder.add_node(same, "node1")
    with pytest.raises(ValueError, match="Duplicate node instance detected"):
        builder.add_node(same, "node2")


def test_graph_builder_edges_to_unknown_nodes() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("agent1")[0], "node1")
    with pytest.raises(ValueError, match="Target node 'nonexistent' not found"):
        builder.add_edge("node1", "nonexistent")
    with pytest.raises(ValueError, match="Source node 'nonexistent' not found"):
        builder.add_edge("nonexistent", "node1")
    with pytest.raises(ValueError, match="Node 'invalid_entry' not found"):
        builder.set_entry_point("invalid_entry")


def test_graph_builder_cycles_allowed_with_entry_point() -> None:
    builder = GraphBuilder()
    for name in ("a", "b", "c"):
        builder.add_node(make_agent(name)[0], name)
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", "a")
    builder.set_entry_point("a")
    graph = builder.build()
    assert [node.node_id for node in graph.entry_points] == ["a"]


def test_graph_builder_auto_detects_entry_points() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("entry")[0], "entry")
    builder.add_node(make_agent("dependent")[0], "dependent")
    builder.add_edge("entry", "dependent")
    graph = builder.build()
    assert [node.node_id for node in graph.entry_points] == ["entry"]


def test_graph_builder_no_entry_points() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("a")[0], "a")
    builder.add_node(make_agent("b")[0], "b")
    builder.add_edge("a", "b")
    builder.add_edge("b", "a")
    with pytest.raises(ValueError, match="No entry points found - all nodes have dependencies"):
        builder.build()


def test_graph_builder_limits() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("a")[0], "test_node")
    graph = builder.set_max_node_executions(10).set_execution_timeout(300.0).set_node_timeout(60.0).reset_on_revisit().build()
    assert graph.max_node_executions == 10
    assert graph.execution_timeout == 300.0
    assert graph.node_timeout == 60.0
    assert graph.reset_on_revisit is True

    builder = GraphBuilder()
    builder.add_node(make_agent("b")[0], "test_node")
    graph = builder.build()
    assert graph.max_node_executions is None
    assert graph.execution_timeout is None
    assert graph.node_timeout is None
    assert graph.reset_on_revisit is False


def test_add_node_defaults_id_to_agent_name() -> None:
    builder = GraphBuilder()
    node = builder.add_node(make_agent("researcher")[0])
    assert node.node_id == "researcher"


# --- execution ----------------------------------------------------------------------------


def diamond() -> tuple[Any, dict[str, MockedModelProvider]]:
    models: dict[str, MockedModelProvider] = {}
    builder = GraphBuilder()
    for name in ("start", "left", "right", "final"):
        agent, models[name] = make_agent(name, f"{name} says hi")
        builder.add_node(agent, name)
    builder.add_edge("start", "left")
    builder.add_edge("start", "right")
    builder.add_edge("left", "final")
    builder.add_edge("right", "final")
    return builder.build(), models


async def test_graph_execution() -> None:
    graph, models = diamond()
    assert len(graph.nodes) == 4
    assert len(graph.edges) == 4
    assert [node.node_id for node in graph.entry_points] == ["start"]
    assert graph.nodes["start"].execution_status == Status.PENDING
    assert len(graph.nodes["start"].dependencies) == 0

    result = await graph.invoke_async("Test comprehensive execution")

    assert isinstance(result, GraphResult)
    assert isinstance(result, MultiAgentResult)
    assert result.status == Status.COMPLETED
    assert result.total_nodes == 4
    assert result.completed_nodes == 4
    assert result.failed_nodes == 0
    assert result.execution_order[0].node_id == "start"
    assert [node.node_id for node in result.execution_order][-1] == "final"
    assert sorted(node.node_id for node in result.execution_order) == ["final", "left", "right", "start"]
    assert result.execution_count == 4
    assert set(result.results) == {"start", "left", "right", "final"}
    assert all(len(model.calls) == 1 for model in models.values())

    start_result = result.results["start"]
    assert start_result.status == Status.COMPLETED
    agent_results = start_result.get_agent_results()
    assert len(agent_results) == 1
    assert isinstance(agent_results[0], AgentResult)
    assert str(agent_results[0]) == "start says hi\n"
    assert graph.state.status == Status.COMPLETED
    assert len(graph.state.completed_nodes) == 4
    assert len(graph.state.failed_nodes) == 0
    assert len(result.edges) == 4
    assert [node.node_id for node in result.entry_points] == ["start"]


def test_graph_synchronous_execution() -> None:
    graph, _ = diamond()
    result = graph("Test synchronous execution")
    assert result.status == Status.COMPLETED
    assert result.completed_nodes == 4


def test_entry_node_gets_the_task_and_dependents_get_inputs() -> None:
    graph, models = diamond()
    graph("Plan a trip")

    assert sent_text(models["start"]) == "Plan a trip"
    left = sent_text(models["left"])
    assert "Plan a trip" in left
    assert "start says hi" in left
    final = sent_text(models["final"])
    assert "Plan a trip" in final
    assert "left says hi" in final
    assert "right says hi" in final
    assert "start says hi" not in final


def test_parallel_branches_both_run() -> None:
    graph, models = diamond()
    result = graph("go")
    order = [node.node_id for node in result.execution_order]
    assert set(order[1:3]) == {"left", "right"}
    assert len(models["left"].calls) == 1 and len(models["right"].calls) == 1


def test_conditional_edges() -> None:
    builder = GraphBuilder()
    router, _ = make_agent("router", "technical question")
    tech, tech_model = make_agent("tech", "tech answer")
    sales, sales_model = make_agent("sales", "sales answer")
    builder.add_node(router, "router")
    builder.add_node(tech, "tech")
    builder.add_node(sales, "sales")

    def says(word: str) -> Any:
        def condition(state: Any) -> bool:
            node_result = state.results.get("router")
            return node_result is not None and word in str(node_result.result)

        return condition

    builder.add_edge("router", "tech", condition=says("technical"))
    builder.add_edge("router", "sales", condition=says("sales"))
    graph = builder.build()

    result = graph("I have a question")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.execution_order] == ["router", "tech"]
    assert "sales" not in result.results
    assert len(tech_model.calls) == 1
    assert sales_model.calls == []
    assert result.completed_nodes == 2
    assert result.total_nodes == 3


def test_invocation_state_reaches_edge_conditions() -> None:
    seen: list[Any] = []
    builder = GraphBuilder()
    builder.add_node(make_agent("a")[0], "a")
    builder.add_node(make_agent("b")[0], "b")

    def condition(state: Any, *, invocation_state: dict[str, Any], **kwargs: Any) -> bool:
        seen.append(invocation_state.get("tenant"))
        return True

    builder.add_edge("a", "b", condition=condition)
    result = builder.build()("go", invocation_state={"tenant": "t-1"})

    assert result.status == Status.COMPLETED
    assert seen and set(seen) == {"t-1"}


def test_linear_graph_behavior() -> None:
    builder = GraphBuilder()
    models = {}
    for name in ("a", "b", "c"):
        agent, models[name] = make_agent(name, f"{name} done")
        builder.add_node(agent, name)
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    result = builder.build()("go")

    assert [node.node_id for node in result.execution_order] == ["a", "b", "c"]
    assert str(result.results["c"].result) == "c done\n"
    assert "b done" in sent_text(models["c"])


def test_graph_execution_with_failures() -> None:
    builder = GraphBuilder()
    failing = Agent(name="failing", model=MockedModelProvider([RuntimeError("Simulated failure")]), callback_handler=None)
    after, after_model = make_agent("after")
    builder.add_node(failing, "fail_node")
    builder.add_node(after, "after_node")
    builder.add_edge("fail_node", "after_node")
    graph = builder.build()

    with pytest.raises(RuntimeError, match="Simulated failure"):
        graph("go")

    assert graph.state.status == Status.FAILED
    assert [node.node_id for node in graph.state.failed_nodes] == ["fail_node"]
    assert after_model.calls == []


def test_graph_execution_limits_with_cyclic_graph() -> None:
    builder = GraphBuilder()
    a, _ = make_agent("a", *["a again"] * 10)
    b, _ = make_agent("b", *["b again"] * 10)
    builder.add_node(a, "a")
    builder.add_node(b, "b")
    builder.add_edge("a", "b")
    builder.add_edge("b", "a")
    builder.set_entry_point("a")
    graph = builder.set_max_node_executions(3).build()

    result = graph("loop")

    assert result.status == Status.FAILED
    assert [node.node_id for node in result.execution_order] == ["a", "b", "a"]


def test_self_loop_functionality() -> None:
    builder = GraphBuilder()
    looper, model = make_agent("looper", "first pass", "second pass", "done")

    def again(state: Any) -> bool:
        return len([n for n in state.execution_order if n.node_id == "loop"]) < 3

    builder.add_node(looper, "loop")
    builder.add_edge("loop", "loop", condition=again)
    builder.set_entry_point("loop")
    result = builder.set_max_node_executions(10).build()("iterate")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.execution_order] == ["loop", "loop", "loop"]
    assert len(model.calls) == 3
    assert str(result.results["loop"].result) == "done\n"


def test_nested_graph_as_node() -> None:
    inner_builder = GraphBuilder()
    inner_agent, _ = make_agent("inner", "inner result")
    inner_builder.add_node(inner_agent, "inner")
    inner_graph = inner_builder.build()

    outer = GraphBuilder()
    first, _ = make_agent("first", "first result")
    last, last_model = make_agent("last", "last result")
    outer.add_node(first, "first")
    outer.add_node(inner_graph, "nested")
    outer.add_node(last, "last")
    outer.add_edge("first", "nested")
    outer.add_edge("nested", "last")
    result = outer.build()("go")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.execution_order] == ["first", "nested", "last"]
    nested = result.results["nested"]
    assert isinstance(nested.result, MultiAgentResult)
    assert [str(r) for r in nested.get_agent_results()] == ["inner result\n"]
    assert "inner result" in sent_text(last_model)


def test_graph_result_usage_is_accumulated() -> None:
    usage = {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}
    builder = GraphBuilder()
    for name in ("a", "b"):
        builder.add_node(Agent(name=name, model=MockedModelProvider([{**text(name), "usage": usage}]), callback_handler=None), name)
    builder.add_edge("a", "b")
    result = builder.build()("go")

    assert result.accumulated_usage["inputTokens"] == 20
    assert result.accumulated_usage["outputTokens"] == 40
    assert result.accumulated_usage["totalTokens"] == 60
    assert result.results["a"].accumulated_usage["totalTokens"] == 30


async def test_graph_stream_async_events() -> None:
    graph, _ = diamond()
    events = [event async for event in graph.stream_async("go")]

    types = [event.get("type") for event in events]
    assert types.count("multiagent_node_start") == 4
    assert types.count("multiagent_node_stop") == 4
    starts = [event["node_id"] for event in events if event.get("type") == "multiagent_node_start"]
    assert starts[0] == "start" and starts[-1] == "final"
    assert isinstance(events[-1]["result"], GraphResult)
    assert events[-1]["result"].status == Status.COMPLETED


async def test_graph_edge_cases() -> None:
    """A single entry node given a content-block task."""
    agent, model = make_agent("entry_agent", "Entry response")
    builder = GraphBuilder()
    builder.add_node(agent, "entry_only")
    result = await builder.build().invoke_async([{"text": "Original task"}])

    assert result.status == Status.COMPLETED
    assert len(model.calls) == 1
    assert model.calls[0]["messages"][0]["content"] == [{"text": "Original task"}]


def test_graph_single_node_optimization() -> None:
    agent, model = make_agent("single_agent", "Single response")
    builder = GraphBuilder()
    builder.add_node(agent, "single")
    result = builder.build()("Test single node")

    assert result.status == Status.COMPLETED
    assert result.completed_nodes == 1
    assert len(model.calls) == 1


def linear(limit: int | None = None) -> Any:
    builder = GraphBuilder()
    for name in ("a", "b", "c"):
        builder.add_node(make_agent(name, f"Response {name.upper()}")[0], name)
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.set_entry_point("a")
    if limit is not None:
        builder.set_max_node_executions(limit).set_execution_timeout(900.0).set_node_timeout(300.0)
    return builder.build()


def test_graph_execution_limits() -> None:
    result = linear()("Test execution")
    assert result.status == Status.COMPLETED
    assert len(result.execution_order) == 3

    result = linear(5)("Test execution")
    assert result.status == Status.COMPLETED
    assert len(result.execution_order) == 3

    result = linear(2)("Test execution limit")
    assert result.status == Status.FAILED
    assert [node.node_id for node in result.execution_order] == ["a", "b"]


def test_backward_compatibility_no_limits() -> None:
    builder = GraphBuilder()
    builder.add_node(make_agent("a")[0], "a")
    builder.add_node(make_agent("b")[0], "b")
    builder.add_edge("a", "b")
    builder.set_entry_point("a")
    graph = builder.build()
    assert graph.max_node_executions is None
    assert graph.execution_timeout is None
    assert graph.node_timeout is None
    result = graph("Test backward compatibility")
    assert result.status == Status.COMPLETED
    assert len(result.execution_order) == 2


def count(state: Any, node_id: str) -> int:
    return sum(1 for node in state.execution_order if node.node_id == node_id)


def test_cyclic_graph_execution() -> None:
    builder = GraphBuilder()
    models = {}
    for name in ("a", "b", "c"):
        agent, models[name] = make_agent(name, f"{name} 1", f"{name} 2", f"{name} 3")
        builder.add_node(agent, name)
    builder.add_edge("a", "b", condition=lambda state: count(state, "b") == 0)
    builder.add_edge("b", "c", condition=lambda state: True)
    builder.add_edge("c", "a", condition=lambda state: count(state, "a") < 2)
    builder.set_entry_point("a")
    builder.reset_on_revisit(True)
    builder.set_max_node_executions(10)
    builder.set_execution_timeout(30.0)
    result = builder.build()("Test cyclic graph execution")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.execution_order] == ["a", "b", "c", "a"]
    assert len(models["a"].calls) == 2
    assert len(models["b"].calls) == 1
    assert len(models["c"].calls) == 1


def test_complex_self_loop() -> None:
    builder = GraphBuilder()
    start, start_model = make_agent("start_agent", "Start")
    loop, loop_model = make_agent("loop_agent", "Loop 1", "Loop 2")
    end, end_model = make_agent("end_agent", "End")
    builder.add_node(start, "start_node")
    builder.add_node(loop, "loop_node")
    builder.add_node(end, "end_node")
    builder.add_edge("start_node", "loop_node")
    builder.add_edge("loop_node", "loop_node", condition=lambda state: count(state, "loop_node") < 2)
    builder.add_edge("loop_node", "end_node", condition=lambda state: count(state, "loop_node") >= 2)
    builder.set_entry_point("start_node")
    builder.reset_on_revisit(True)
    builder.set_max_node_executions(10)
    result = builder.build()("Test complex graph with self loops")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.execution_order] == ["start_node", "loop_node", "loop_node", "end_node"]
    assert (len(start_model.calls), len(loop_model.calls), len(end_model.calls)) == (1, 2, 1)


def test_multiple_nodes_with_self_loops() -> None:
    builder = GraphBuilder()
    a, a_model = make_agent("agent_a", "A 1", "A 2")
    b, b_model = make_agent("agent_b", "B 1", "B 2")
    builder.add_node(a, "a")
    builder.add_node(b, "b")
    builder.add_edge("a", "a", condition=lambda state: count(state, "a") < 2)
    builder.add_edge("b", "b", condition=lambda state: count(state, "b") < 2)
    builder.add_edge("a", "b")
    builder.set_entry_point("a")
    builder.reset_on_revisit(True)
    builder.set_max_node_executions(15)
    result = builder.build()("Test multiple self loops")

    assert result.status == Status.COMPLETED
    assert len(result.execution_order) == 4
    assert len(a_model.calls) == 2
    assert len(b_model.calls) == 2


def test_infinite_loop_prevention() -> None:
    builder = GraphBuilder()
    agent, model = make_agent("infinite_agent", *["Infinite loop"] * 10)
    builder.add_node(agent, "infinite_node")
    builder.add_edge("infinite_node", "infinite_node", condition=lambda state: True)
    builder.set_entry_point("infinite_node")
    builder.reset_on_revisit(True)
    builder.set_max_node_executions(5)
    result = builder.build()("Test infinite loop prevention")

    assert result.status == Status.FAILED
    assert len(result.execution_order) == 5
    assert len(model.calls) == 5


def test_self_loop_functionality_without_reset() -> None:
    calls: list[int] = []

    def twice(state: Any) -> bool:
        calls.append(1)
        return len(calls) <= 1

    builder = GraphBuilder()
    agent, model = make_agent("loop_agent", "Loop 1", "Loop 2")
    builder.add_node(agent, "loop_node")
    builder.add_edge("loop_node", "loop_node", condition=twice)
    builder.set_entry_point("loop_node")
    builder.reset_on_revisit(False)
    builder.set_max_node_executions(10)
    result = builder.build()("Test self loop without reset")

    assert result.status == Status.COMPLETED
    assert len(result.execution_order) == 2
    assert len(model.calls) == 2
    assert len(model.calls[1]["messages"]) > len(model.calls[0]["messages"])
