"""Graphs and swarms of ``tether.strands.Agent``: nodes report through their own callback
handlers while they run (a default agent prints its text, as in Strands), are told what Strands
tells them, and hold their conversation afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from tether import ScriptedModel
from tether.models.scripted import tool_call
from tether.strands import Agent
from tether.strands.multiagent import GraphBuilder, Status, Swarm
from tether.types import Message

pytestmark = pytest.mark.filterwarnings("ignore:graph has no max_node_executions")


def texts(message: Message) -> list[str]:
    return [str(block["text"]) for block in message["content"] if "text" in block]


def test_graph_nodes_report_through_their_own_callback_handlers(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []

    def record(**event: Any) -> None:
        seen.extend(key for key in ("data", "message", "result") if key in event)

    printing = Agent(name="a", model=ScriptedModel(["alpha says hi"]))  # Strands' default: PrintingCallbackHandler
    silent = Agent(name="b", model=ScriptedModel(["beta replies"]), callback_handler=None)
    recorded = Agent(name="c", model=ScriptedModel(["gamma"]), callback_handler=record)
    builder = GraphBuilder()
    for node in (printing, silent, recorded):
        builder.add_node(node, node.name)
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    result = builder.build()("go")
    assert result.status == Status.COMPLETED
    assert capsys.readouterr().out == "alpha says hi"  # b prints nothing, c's handler is its own
    assert seen[-2:] == ["message", "result"] and "data" in seen


def test_a_graph_node_is_told_what_strands_tells_it_and_keeps_its_conversation() -> None:
    told: list[list[str]] = []

    def writer(messages: list[Message]) -> str:
        told.append(texts(messages[-1]))
        return "written"

    research = Agent(name="research", model=ScriptedModel(["facts"]), callback_handler=None)
    write = Agent(name="write", model=ScriptedModel([writer]), callback_handler=None)
    builder = GraphBuilder()
    builder.add_node(research, "research")
    builder.add_node(write, "write")
    builder.add_edge("research", "write")
    builder.build()("the task")
    assert told == [["Original Task: the task", "\nInputs from previous nodes:", "\nFrom research:", "  - Agent: facts\n"]]
    assert [m["role"] for m in write.messages] == ["user", "assistant"] and texts(write.messages[1]) == ["written"]
    assert texts(research.messages[0]) == ["the task"]


def test_swarm_members_get_the_handoff_tool_strands_texts_and_their_conversation() -> None:
    results: list[str] = []
    prompts: list[str] = []

    def after_handoff(messages: list[Message]) -> str:
        results.append(messages[-1]["content"][0]["toolResult"]["content"][0]["text"])
        return "handed"

    def worker(messages: list[Message]) -> str:
        prompts.extend(texts(messages[-1]))
        return "work done"

    hand_off = tool_call("handoff_to_agent", {"agent_name": "worker", "message": "do it", "context": {"k": 1}})
    triage = Agent(name="triage", description="Routes.", model=ScriptedModel([hand_off, after_handoff]), callback_handler=None)
    member = Agent(name="worker", model=ScriptedModel([worker]), callback_handler=None)
    result = Swarm([triage, member])("the task")
    assert result.status == Status.COMPLETED and [n.node_id for n in result.node_history] == ["triage", "worker"]
    assert "handoff_to_agent" in triage.tool_names and "handoff_to_agent" in member.tool_names
    assert results == ["Handing off to worker: do it"]
    assert prompts == [
        "Context:\nHandoff Message: do it\n\nUser Request: the task\n\nPrevious agents who worked on this: triage\n\n"
        "Shared knowledge from previous agents:\n• triage: {'k': 1}\n\n"
        "Other agents available for collaboration:\nAgent name: triage. Agent description: Routes.\n\n"
        "You have access to swarm coordination tools if you need help from other agents. "
        "If you don't hand off to another agent, the swarm will consider the task complete.\n\n"
    ]
    assert len(triage.messages) == 4 and len(member.messages) == 2  # each holds its latest turn


def test_strands_swarm_limits_count_member_turns() -> None:
    def ping(to: str) -> Agent:
        turns: list[Any] = [tool_call("handoff_to_agent", {"agent_name": to, "message": "yours"}), f"sent to {to}"] * 5
        return Agent(name="a" if to == "b" else "b", model=ScriptedModel(turns), callback_handler=None)

    swarm = Swarm([ping("b"), ping("a")], max_handoffs=3)
    result = swarm("loop")
    assert result.status == Status.FAILED and [n.node_id for n in result.node_history] == ["a", "b", "a"]
    assert swarm.state.completion_status == Status.FAILED
