"""Swarms: handoffs with shared context, limits, the repetitive handoff check, snapshots, bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether import Agent
from tether.durable import MemoryStore
from tether.errors import ConfigurationError, SnapshotError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Swarm
from tether.multiagent.state import GraphRunState
from tether.multiagent.swarm import handoff_targets, record_handoff
from tether.tools import ToolContext, tool
from tether.types import Message


def member(name: str, *script: Any) -> Agent:
    return Agent(model=ScriptedModel(list(script), stateful=True), name=name, description=f"the {name}")


def handoff(to: str, message: str = "over to you", context: dict[str, Any] | None = None) -> Message:
    args: dict[str, Any] = {"agent_name": to, "message": message}
    if context is not None:
        args["context"] = context
    return tool_call("handoff_to_agent", args)


def first_text(messages: list[Message]) -> str:
    return str(messages[0]["content"][0]["text"])


def test_handoffs_carry_the_message_and_shared_context() -> None:
    researcher = member("researcher", handoff("writer", "write it up", {"facts": ["a", "b"]}), "handed off")
    writer = member("writer", lambda messages: "final: " + first_text(messages))
    result = Swarm([researcher, writer], max_handoffs=3)("explain graphs")
    assert result.status == "completed"
    assert result.node_history == ["researcher", "writer"]
    assert result.context == {"facts": ["a", "b"]}
    answer = str(result)
    assert answer.startswith("final: explain graphs")
    assert "Handoff from researcher: write it up" in answer
    assert 'Shared context: {"facts": ["a", "b"]}' in answer
    assert "- researcher: the researcher" in answer  # the members it may hand off to


def test_a_handoff_to_an_unknown_agent_is_an_error_tool_result() -> None:
    seen: list[str] = []

    def after_error(messages: list[Message]) -> Any:
        result = messages[-1]["content"][0]["toolResult"]
        seen.append(f"{result['status']}: {result['content'][0]['text']}")
        return handoff("b")

    a = member("a", handoff("nobody"), after_error, "done")
    b = member("b", "b answers")
    result = Swarm([a, b])("task")
    assert seen and seen[0].startswith("error") and "unknown agent 'nobody'" in seen[0] and "['b']" in seen[0]
    assert result.node_history == ["a", "b"] and str(result) == "b answers"


def ping_pong() -> list[Agent]:
    return [member("ping", *[handoff("pong"), "sent"] * 10), member("pong", *[handoff("ping"), "sent"] * 10)]


def test_the_handoff_limit_fails_the_run() -> None:
    result = Swarm(ping_pong(), max_handoffs=3)("task")
    assert result.status == "failed"
    assert result.error is not None and "max handoffs (3)" in result.error
    assert result.node_history == ["ping", "pong", "ping", "pong"]


def test_the_iteration_limit_fails_the_run() -> None:
    result = Swarm(ping_pong(), max_iterations=2)("task")
    assert result.status == "failed" and result.error is not None and "max iterations (2)" in result.error


def test_a_repetitive_handoff_loop_is_detected() -> None:
    swarm = Swarm(ping_pong(), repetitive_handoff_detection_window=4, repetitive_handoff_min_unique_agents=3)
    result = swarm("task")
    assert result.status == "failed"
    assert result.error is not None and "repetitive handoffs" in result.error and "fewer than 3 agents" in result.error
    assert len(result.node_history) == 3


async def test_a_snapshot_restores_into_a_fresh_swarm() -> None:
    def build() -> Swarm:
        return Swarm([member("a", handoff("b", "go"), "sent"), member("b", lambda m: "b: " + first_text(m)[:30])])

    reference = build()("task")
    swarm = build()
    events = swarm.stream_async("task")
    async for event in events:
        if event["type"] == "handoff":
            snapshot = json.loads(json.dumps(swarm.take_snapshot()))
            break
    await events.aclose()
    fresh = build()
    fresh.load_snapshot(snapshot)
    result = await fresh.invoke_async()
    assert result.node_history == ["a", "b"] and str(result) == str(reference)
    assert "a" in result.results and result.results["a"].executions == 1  # "a" was not run again
    with pytest.raises(SnapshotError, match="members"):
        Swarm([member("x", "x")]).load_snapshot(snapshot)


def test_a_durable_swarm_run_nests_member_turns() -> None:
    store = MemoryStore()
    swarm = Swarm([member("a", handoff("b"), "sent"), member("b", "done")], store=store)
    result = swarm("task", run_id="s")
    assert str(result) == "done"
    runs = {r.run_id: r.parent_run_id for r in store.list_runs()}
    assert runs == {"s": None, "s.a:1": "s", "s.b:2": "s"}
    assert str(swarm.resume("s")) == "done"


def test_bad_swarms_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="empty"):
        Swarm([])
    with pytest.raises(ConfigurationError, match="named 'agent'"):
        Swarm([Agent(model=ScriptedModel([])), Agent(model=ScriptedModel([]))])
    with pytest.raises(ConfigurationError, match=r"nodes\[0\] is a str"):
        Swarm(["agent"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="entry_point"):
        Swarm([member("a")], entry_point=member("b"))
    with pytest.raises(ConfigurationError, match="max_handoffs"):
        Swarm([member("a")], max_handoffs=0)


def test_resuming_a_swarm_stopped_by_its_limit_keeps_the_outcome() -> None:
    swarm = Swarm(ping_pong(), max_handoffs=2, store=MemoryStore())
    first = swarm("task", run_id="limited")
    assert first.status == "failed"
    again = swarm.resume("limited")
    assert (again.status, again.error, again.node_history) == ("failed", first.error, first.node_history)


def test_a_swarm_takes_its_member_prompt_handoff_tool_and_stop_check_from_its_caller() -> None:
    @tool(name="handoff_to_agent")
    def own_handoff(agent_name: str, message: str, tool_context: ToolContext) -> str:
        """Hand off.

        Args:
            agent_name: To whom.
            message: What to do.
        """
        record_handoff(tool_context, agent_name, message, {"by": "own tool"})
        return f"passing to {agent_name} (of {handoff_targets(tool_context)})"

    seen: list[str] = []

    def after_tool(messages: list[Message]) -> Any:
        seen.append(messages[-1]["content"][0]["toolResult"]["content"][0]["text"])
        return "sent"

    def prompt(run: GraphRunState, name: str) -> Any:
        return [{"text": f"{name} after {run.order}: {run.data['message']}"}]

    stops: list[list[str]] = []

    def stop_check(run: GraphRunState) -> str | None:
        stops.append(list(run.order))
        return "enough" if len(run.order) >= 2 else None

    a = member("a", handoff("b", "go"), after_tool)
    b = member("b", lambda messages: "b saw " + first_text(messages), handoff("a"), "never")
    swarm = Swarm([a, b], turn_input=prompt, handoff_tool=own_handoff, stop_check=stop_check)
    result = swarm("task")
    assert seen == ["passing to b (of ['b'])"]
    assert result.results["b"].result is not None and str(result.results["b"].result) == "b saw b after ['a']: go"
    assert result.context == {"by": "own tool"}
    assert stops == [[], ["a"]] and result.status == "completed"  # b answered: no third turn to check
    ping = Swarm([member("a", handoff("b"), "x"), member("b", handoff("a"), "y")], stop_check=stop_check)("task")
    assert ping.status == "failed" and ping.node_history == ["a", "b"] and "enough" in (ping.error or "")
