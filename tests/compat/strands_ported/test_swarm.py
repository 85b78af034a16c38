"""Ported from strands-agents/sdk-python ``tests/strands/multiagent/test_swarm.py``: ``Swarm``
through the public API.

Upstream's agents are ``unittest.mock`` objects whose handoffs call the private
``swarm._handle_handoff``; here every node is a real ``Agent`` on the ported
``MockedModelProvider`` and hands off the way a model does in Strands: by calling the
``handoff_to_agent`` tool the swarm gives each agent.

Excluded upstream tests (name — reason):
- test_shared_context, test_swarm_state_should_continue — drive SharedContext / SwarmState (internal state objects) by hand
- test_swarm_handoff_functionality's second half — calls the private _handle_handoff on a completed swarm; the handoff
  itself is ported as test_swarm_handoff_functionality
- test_swarm_tool_creation_and_execution — calls the private _create_handoff_tool; the tool's observable behaviour
  (unknown agent name) is ported as test_handoff_to_unknown_agent_is_an_error_result
- test_swarm_failure_handling, test_swarm_metrics_handling — Mock agents with Mock metrics
- test_swarm_validate_unsupported_features — sets a Mock(spec=SessionManager) on the private _session_manager
- test_swarm_builder_validation's tool-conflict case — writes a Mock into the private tool_registry.registry dict;
  ported with a real conflicting tool
- test_swarm_kwargs_passing*, test_swarm_single_invocation_no_double_execution,
  test_swarm_handoff_single_invocation_per_node, test_swarm_invoke_async_no_result_event,
  test_swarm_stream_async_exception_in_execute_swarm, test_swarm_streaming_* — count calls of Mock agents' stream_async
  / patch the private _execute_swarm; streaming is ported as test_swarm_stream_async_events
- test_swarm_timeout_with_streaming, test_swarm_node_timeout_with_mocked_streaming,
  test_swarm_timeout_cleanup_on_exception, test_swarm_streaming_timeout_behavior — sleep-based timing
- test_swarm_persistence — Mock session manager asserting repository calls
- test_swarm_handle_handoff, test_swarm_cancel_node, test_swarm_interrupt_* — private _handle_handoff, node-cancel and
  interrupt hooks on Mock agents
"""

from __future__ import annotations

from typing import Any

import pytest

from tether.strands import Agent, tool
from tether.strands.agent import AgentResult
from tether.strands.multiagent import MultiAgentResult, Status, Swarm, SwarmResult

from .mocked_model_provider import MockedModelProvider, text, tool_call


def handoff(to: str, message: str, context: dict[str, Any] | None = None, tool_use_id: str = "h1") -> dict[str, Any]:
    """An assistant message handing off to ``to`` through the swarm's tool."""
    return tool_call("handoff_to_agent", {"agent_name": to, "message": message, "context": context or {}}, tool_use_id)


def make_agent(name: str, *responses: dict[str, Any]) -> tuple[Agent, MockedModelProvider]:
    model = MockedModelProvider(list(responses) or [text(f"{name} response")])
    return Agent(name=name, model=model, callback_handler=None), model


def sent_text(model: MockedModelProvider, call: int = 0) -> str:
    return "\n".join(block.get("text", "") for message in model.calls[call]["messages"] for block in message["content"])


def test_swarm_structure_and_nodes() -> None:
    coordinator, _ = make_agent("coordinator")
    specialist, _ = make_agent("specialist")
    swarm = Swarm(nodes=[coordinator, specialist])

    assert list(swarm.nodes) == ["coordinator", "specialist"]
    assert swarm.nodes["coordinator"].node_id == "coordinator"
    assert swarm.nodes["coordinator"].executor is coordinator
    assert swarm.max_handoffs == 20
    assert swarm.max_iterations == 20
    assert "handoff_to_agent" in coordinator.tool_names
    assert "handoff_to_agent" in specialist.tool_names


def test_swarm_builder_validation_unnamed_node() -> None:
    unnamed = Agent(model=MockedModelProvider([]), callback_handler=None)
    unnamed.name = None  # type: ignore[assignment]
    coordinator, _ = make_agent("coordinator")
    swarm = Swarm(nodes=[unnamed, coordinator])
    assert "node_0" in swarm.nodes
    assert "coordinator" in swarm.nodes


def test_swarm_duplicate_agent_names() -> None:
    with pytest.raises(ValueError, match="Node ID 'duplicate_name' is not unique"):
        Swarm([make_agent("duplicate_name")[0], make_agent("duplicate_name")[0]])


def test_swarm_duplicate_agent_instances() -> None:
    same, _ = make_agent("coordinator")
    with pytest.raises(ValueError, match="Duplicate node instance detected"):
        Swarm(nodes=[same, same])


def test_swarm_tool_name_conflict() -> None:
    @tool
    def handoff_to_agent(agent_name: str) -> str:
        """A user tool with the swarm's reserved name."""
        return agent_name

    conflicting = Agent(name="conflicting", model=MockedModelProvider([]), tools=[handoff_to_agent], callback_handler=None)
    with pytest.raises(ValueError, match="already has tools with names that conflict"):
        Swarm(nodes=[conflicting])


def test_swarm_invalid_entry_point() -> None:
    agent1, _ = make_agent("agent1")
    agent2, _ = make_agent("agent2")
    outsider, _ = make_agent("agent3")
    with pytest.raises(ValueError, match="Entry point agent not found in swarm nodes"):
        Swarm([agent1, agent2], entry_point=outsider)


def test_swarm_entry_point_same_name_different_object() -> None:
    agent1, _ = make_agent("agent1")
    agent2, _ = make_agent("agent2")
    lookalike, _ = make_agent("agent1")
    with pytest.raises(ValueError, match="Entry point agent not found in swarm nodes"):
        Swarm([agent1, agent2], entry_point=lookalike)


def test_swarm_auto_completion_without_handoff() -> None:
    agent, model = make_agent("no_handoff_agent", text("Task completed without handoff"))
    result = Swarm(nodes=[agent])("Test auto-completion without handoff")

    assert isinstance(result, SwarmResult)
    assert isinstance(result, MultiAgentResult)
    assert result.status == Status.COMPLETED
    assert result.execution_count == 1
    assert [node.node_id for node in result.node_history] == ["no_handoff_agent"]
    assert len(model.calls) == 1
    assert "Test auto-completion without handoff" in sent_text(model)
    node_result = result.results["no_handoff_agent"]
    assert node_result.status == Status.COMPLETED
    assert [str(r) for r in node_result.get_agent_results()] == ["Task completed without handoff\n"]


def test_swarm_configurable_entry_point() -> None:
    agent1, model1 = make_agent("agent1")
    agent2, _ = make_agent("agent2", text("Agent 2 response"))
    agent3, _ = make_agent("agent3")
    swarm = Swarm([agent1, agent2, agent3], entry_point=agent2)
    assert swarm.entry_point is agent2

    result = swarm("Test task")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.node_history] == ["agent2"]
    assert model1.calls == []


def test_swarm_default_entry_point() -> None:
    agent1, _ = make_agent("agent1", text("Agent 1 response"))
    agent2, model2 = make_agent("agent2")
    swarm = Swarm([agent1, agent2])
    assert swarm.entry_point is None

    result = swarm("Test task")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.node_history] == ["agent1"]
    assert model2.calls == []


def test_swarm_handoff_functionality() -> None:
    first, _ = make_agent(
        "handoff_agent",
        handoff("completion_agent", "Please finish this", {"handoff_context": "test_data"}),
        text("Handing off"),
    )
    second, second_model = make_agent("completion_agent", text("Task completed"))
    swarm = Swarm(nodes=[first, second], max_handoffs=10, max_iterations=10)

    result = swarm("Test handoff during execution")

    assert result.status == Status.COMPLETED
    assert result.execution_count == 2
    assert [node.node_id for node in result.node_history] == ["handoff_agent", "completion_agent"]
    handoff_result = first.messages[2]["content"][0]["toolResult"]
    assert handoff_result["status"] == "success"
    assert handoff_result["content"] == [{"text": "Handing off to completion_agent: Please finish this"}]
    received = sent_text(second_model)
    assert "Handoff Message: Please finish this" in received
    assert "User Request: Test handoff during execution" in received
    assert "Previous agents who worked on this: handoff_agent" in received
    assert "handoff_context" in received and "test_data" in received
    assert [str(r) for r in result.results["completion_agent"].get_agent_results()] == ["Task completed\n"]


def test_handoff_to_unknown_agent_is_an_error_result() -> None:
    first, _ = make_agent("first", handoff("nobody", "help"), text("I could not hand off"))
    second, second_model = make_agent("second")
    result = Swarm(nodes=[first, second])("go")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.node_history] == ["first"]
    tool_result = first.messages[2]["content"][0]["toolResult"]
    assert tool_result["status"] == "error"
    assert tool_result["content"] == [{"text": "Error: Agent 'nobody' not found in swarm"}]
    assert second_model.calls == []


def test_swarm_handoff_chain_and_back() -> None:
    a, _ = make_agent("a", handoff("b", "to b", tool_use_id="h1"), text("a hands off"), text("a finishes"))
    b, _ = make_agent("b", handoff("a", "back to a", tool_use_id="h2"), text("b hands back"))
    result = Swarm(nodes=[a, b])("ping pong")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.node_history] == ["a", "b", "a"]
    assert result.execution_count == 3
    assert str(result.results["a"].result) == "a finishes\n"


def test_swarm_max_handoffs_stops_the_swarm() -> None:
    a, _ = make_agent("a", *[m for _ in range(5) for m in (handoff("b", "to b"), text("a"))])
    b, _ = make_agent("b", *[m for _ in range(5) for m in (handoff("a", "to a"), text("b"))])
    result = Swarm(nodes=[a, b], max_handoffs=3)("loop")

    assert result.status == Status.FAILED
    assert [node.node_id for node in result.node_history] == ["a", "b", "a"]


def test_swarm_repetitive_handoff_detection() -> None:
    a, _ = make_agent("a", *[m for _ in range(5) for m in (handoff("b", "to b"), text("a"))])
    b, _ = make_agent("b", *[m for _ in range(5) for m in (handoff("a", "to a"), text("b"))])
    result = Swarm(nodes=[a, b], repetitive_handoff_detection_window=4, repetitive_handoff_min_unique_agents=3)("loop")

    assert result.status == Status.FAILED
    assert len(result.node_history) == 4


def test_swarm_failure_in_node() -> None:
    a, _ = make_agent("a", RuntimeError("node exploded"))  # type: ignore[arg-type]
    swarm = Swarm(nodes=[a])

    result = swarm("go")

    assert result.status == Status.FAILED
    assert swarm.state.completion_status == Status.FAILED
    assert result.results["a"].status == Status.FAILED


def test_swarm_usage_is_accumulated() -> None:
    usage = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
    a, _ = make_agent("a", {**handoff("b", "go on"), "usage": usage}, {**text("a"), "usage": usage})
    b, _ = make_agent("b", {**text("b done"), "usage": usage})
    result = Swarm(nodes=[a, b])("count tokens")

    assert result.accumulated_usage["inputTokens"] == 9
    assert result.accumulated_usage["outputTokens"] == 12
    assert result.accumulated_usage["totalTokens"] == 21


def test_swarm_synchronous_execution() -> None:
    a, _ = make_agent("a", handoff("b", "finish"), text("a"))
    b, _ = make_agent("b", text("b done"))
    result = Swarm(nodes=[a, b])("sync task")

    assert result.status == Status.COMPLETED
    assert result.execution_count == 2
    assert str(result.results["b"].result) == "b done\n"


async def test_swarm_execution_async() -> None:
    a, _ = make_agent("a", handoff("b", "finish"), text("a"))
    b, _ = make_agent("b", text("b done"))
    result = await Swarm(nodes=[a, b]).invoke_async("async task")

    assert result.status == Status.COMPLETED
    assert [node.node_id for node in result.node_history] == ["a", "b"]
    assert isinstance(result.results["b"].result, AgentResult)


async def test_swarm_stream_async_events() -> None:
    a, _ = make_agent("a", handoff("b", "finish"), text("a"))
    b, _ = make_agent("b", text("b done"))
    events = [event async for event in Swarm(nodes=[a, b]).stream_async("stream it")]

    starts = [event["node_id"] for event in events if event.get("type") == "multiagent_node_start"]
    stops = [event["node_id"] for event in events if event.get("type") == "multiagent_node_stop"]
    assert starts == ["a", "b"]
    assert stops == ["a", "b"]
    handoffs = [event for event in events if event.get("type") == "multiagent_handoff"]
    assert len(handoffs) == 1
    assert isinstance(events[-1]["result"], SwarmResult)
    assert events[-1]["result"].status == Status.COMPLETED
