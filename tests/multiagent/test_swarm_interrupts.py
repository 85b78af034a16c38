"""A swarm member's interrupts: the swarm waits, the answers continue the member's turn where it
stopped (in memory, from a snapshot, and in a durable run), and no finished turn runs again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether import Agent, ToolContext, tool
from tether.durable import MemoryStore
from tether.errors import PromptError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Swarm
from tether.types import Message


def build(calls: list[str], store: MemoryStore | None = None) -> Swarm:
    @tool
    def publish(title: str, context: ToolContext) -> str:
        """Publish a title once a human approves it."""
        calls.append(f"ask {title}")
        verdict = context.interrupt("approve", {"title": title})
        return f"published {title} ({verdict})"

    def logged(name: str, response: Any) -> Any:
        def respond(messages: list[Message]) -> Any:
            calls.append(f"{name} model {len(messages)}")
            return response(messages) if callable(response) else response

        return respond

    def published(messages: list[Message]) -> str:
        return "done: " + str(messages[-1]["content"][0]["toolResult"]["content"][0]["text"])

    drafter = Agent(
        model=ScriptedModel(
            [logged("drafter", tool_call("handoff_to_agent", {"agent_name": "publisher", "message": "go"})), "sent"], stateful=True
        ),
        name="drafter",
    )
    publisher = Agent(
        model=ScriptedModel([logged("publisher", tool_call("publish", {"title": "tides"})), logged("publisher", published)], stateful=True),
        name="publisher",
        tools=[publish],
    )
    return Swarm([drafter, publisher], store=store)


def answer(result: Any, response: str = "yes") -> list[dict[str, Any]]:
    [interrupt] = result.interrupts
    return [{"interruptResponse": {"interruptId": interrupt.id, "response": response}}]


def test_the_answers_continue_the_interrupted_member_in_memory() -> None:
    calls: list[str] = []
    swarm = build(calls)
    paused = swarm("publish something")
    assert paused.status == "interrupted"
    assert [i.name for i in paused.interrupts] == ["approve"]
    assert swarm.take_snapshot()["state"]["running"]["paused"]["data"]["messages"]  # the member agent as it stopped
    result = swarm(answer(paused))
    assert result.status == "completed"
    assert str(result) == "done: published tides (yes)"
    assert calls == ["drafter model 1", "publisher model 1", "ask tides", "ask tides", "publisher model 3"]


def test_an_unanswered_or_wrongly_answered_swarm_keeps_waiting() -> None:
    calls: list[str] = []
    swarm = build(calls)
    paused = swarm("publish something")
    with pytest.raises(PromptError, match="waits on interrupt 'nope'"):
        swarm([{"interruptResponse": {"interruptId": "nope", "response": "yes"}}])
    again = swarm()  # nothing answers: it still waits, and nothing ran again
    assert again.status == "interrupted" and again.node_history == paused.node_history
    assert str(swarm(answer(paused))) == "done: published tides (yes)"
    assert calls.count("drafter model 1") == 1


def test_a_snapshot_of_an_interrupted_swarm_is_answered_in_a_fresh_swarm() -> None:
    calls: list[str] = []
    swarm = build(calls)
    paused = swarm("publish something")
    snapshot = json.loads(json.dumps(swarm.take_snapshot()))
    fresh = build(calls)
    fresh.load_snapshot(snapshot)
    result = fresh(answer(paused, "ok"))
    assert str(result) == "done: published tides (ok)"
    assert calls == ["drafter model 1", "publisher model 1", "ask tides", "ask tides", "publisher model 3"]


def test_a_durable_swarm_run_resumes_with_the_answers() -> None:
    calls: list[str] = []
    store = MemoryStore()
    paused = build(calls, store)("publish something", run_id="s")
    assert paused.status == "interrupted"
    waiting = build(calls, store).resume("s")  # no answers: it still waits
    assert waiting.status == "interrupted" and waiting.node_history == paused.node_history
    with pytest.raises(PromptError, match="interruptResponse"):
        build(calls, store).resume("s", [{"text": "yes"}])
    result = build(calls, store).resume("s", answer(paused))
    assert result.status == "completed" and str(result) == "done: published tides (yes)"
    assert calls.count("drafter model 1") == 1 and calls.count("publisher model 1") == 1
