"""Interop with the real ``strands-agents`` package (pinned in the ``dev`` extra).

Snapshots, checkpoints and results go both ways: Strands -> Tether (and the conversation goes
on), Tether -> Strands (Strands sees the same messages, state and prompt) and Strands -> Tether
-> Strands without loss. Strands agents here never call a model (taking and loading snapshots
needs none): their model refuses to be called, so nothing can reach the network.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tether import Agent, AgentResult, Checkpoint, ScriptedModel, Snapshot, SnapshotError, SummarizingConversationManager, ToolContext, tool
from tether.models.scripted import tool_call

strands = pytest.importorskip("strands", reason="strands-agents is in the dev extra")
from strands import Agent as StrandsAgent  # noqa: E402
from strands.agent.agent_result import AgentResult as StrandsResult  # noqa: E402
from strands.agent.conversation_manager import SummarizingConversationManager as StrandsSummarizing  # noqa: E402
from strands.experimental.checkpoint import Checkpoint as StrandsCheckpoint  # noqa: E402
from strands.interrupt import Interrupt as StrandsInterrupt  # noqa: E402
from strands.interrupt import _InterruptState  # noqa: E402
from strands.models.model import Model as StrandsModel  # noqa: E402
from strands.telemetry.metrics import EventLoopMetrics  # noqa: E402
from strands.types._snapshot import Snapshot as StrandsSnapshot  # noqa: E402
from strands.types.exceptions import SnapshotException as StrandsSnapshotException  # noqa: E402

SYSTEM = [{"text": "You are a weather bot."}, {"cachePoint": {"type": "default"}}]


class NoModel(StrandsModel):
    """A Strands model that refuses every call (the tests never need one)."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("no model call is expected")
        yield  # pragma: no cover

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("no model call is expected")
        yield  # pragma: no cover


def strands_messages() -> list[dict[str, Any]]:
    """A conversation with a tool call, as a Strands agent holds it (tracking ids, metadata)."""
    return [
        {"role": "user", "content": [{"text": "Weather in Lyon?"}], "tracking_id": "m-1"},
        {
            "role": "assistant",
            "content": [{"text": "Checking."}, {"toolUse": {"toolUseId": "tu_1", "name": "forecast", "input": {"city": "Lyon"}}}],
            "tracking_id": "m-2",
            "metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}},
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "tu_1", "status": "success", "content": [{"json": {"sky": "sun"}}]}}],
            "tracking_id": "m-3",
        },
        {"role": "assistant", "content": [{"text": "Sunny all week."}], "tracking_id": "m-4"},
    ]


def strands_agent(**kwargs: Any) -> Any:
    options: dict[str, Any] = {"model": NoModel(), "callback_handler": None}
    options.update(kwargs)
    return StrandsAgent(**options)


def full_strands_snapshot(**agent_kwargs: Any) -> Any:
    """A Strands snapshot of every field, with non-default manager counters and app data."""
    agent = strands_agent(messages=strands_messages(), state={"user": {"id": 7}}, system_prompt=copy.deepcopy(SYSTEM), **agent_kwargs)
    agent.conversation_manager.restore_from_session(
        {**agent.conversation_manager.get_state(), "removed_message_count": 2, "model_call_count": 3}
    )
    agent._model_state = {"response_id": "resp_9"}
    return agent.take_snapshot(preset="session", include=["system_prompt"], app_data={"ticket": "T-1"})


@tool(run_in_thread=False)
def forecast(city: str) -> dict[str, Any]:
    """The forecast of a city.

    Args:
        city: The city.
    """
    return {"sky": "sun", "city": city}


def tether_agent_after_a_run(**kwargs: Any) -> Agent:
    agent = Agent(
        model=ScriptedModel([tool_call("forecast", {"city": "Lyon"}, tool_use_id="tu_1", text="Checking."), "Sunny all week."]),
        tools=[forecast],
        system_prompt=copy.deepcopy(SYSTEM),  # type: ignore[arg-type]
        state={"user": {"id": 7}},
        **kwargs,
    )
    agent("Weather in Lyon?")
    return agent


# -- Strands -> Tether -> continue --------------------------------------------------------


@pytest.mark.parametrize("form", ["dict", "json", "object"])
def test_a_strands_snapshot_loads_into_tether_and_the_conversation_continues(form: str) -> None:
    snapshot = full_strands_snapshot()
    given: Any = {"dict": snapshot.to_dict(), "json": json.loads(json.dumps(snapshot.to_dict())), "object": snapshot}[form]
    model = ScriptedModel(["Rain tomorrow."])
    model.record_requests = True
    agent = Agent(model=model, tools=[forecast])
    agent.load_snapshot(given)
    assert agent.messages == strands_messages()
    assert agent.state.get() == {"user": {"id": 7}}
    assert agent.system_prompt_content == SYSTEM
    assert agent.run_state.model_state == {"response_id": "resp_9"}
    assert agent.run_state.conversation_manager_state == {"removed_message_count": 2, "model_call_count": 3}

    result = agent("And tomorrow?")
    assert result.stop_reason == "end_turn" and result.text == "Rain tomorrow."
    request = model.calls[0]
    assert request["system_prompt"] == SYSTEM
    assert [m["content"] for m in request["messages"]] == [m["content"] for m in strands_messages()] + [[{"text": "And tomorrow?"}]]


def test_a_strands_snapshot_with_a_plain_string_prompt_and_no_prompt() -> None:
    text_prompt = strands_agent(system_prompt="Be terse.").take_snapshot(include=["system_prompt"]).to_dict()
    assert text_prompt["data"]["system_prompt"] == [{"text": "Be terse."}]  # Strands stores blocks...
    text_prompt["data"]["system_prompt"] = "Be terse."  # ...and also accepts a plain string
    agent = Agent(system_prompt="old")
    agent.load_snapshot(text_prompt)
    assert agent.system_prompt == "Be terse." and agent.system_prompt_content == [{"text": "Be terse."}]
    agent.load_snapshot(strands_agent().take_snapshot(include=["system_prompt"]).to_dict())
    assert agent.system_prompt is None


def test_a_strands_summarizing_managers_state_and_strands_bytes_load() -> None:
    summary = {"role": "user", "content": [{"text": "Summary: sunny."}]}
    source = strands_agent(conversation_manager=StrandsSummarizing(), messages=[summary])
    source.conversation_manager.restore_from_session(
        {"__name__": "SummarizingConversationManager", "removed_message_count": 5, "summary_message": summary}
    )
    image = {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00"}}}]}
    source.messages.append(image)
    snapshot = source.take_snapshot(preset="session")  # in memory: Strands keeps raw bytes
    agent = Agent(conversation_manager=SummarizingConversationManager())
    agent.load_snapshot(snapshot)
    assert agent.run_state.conversation_manager_state == {"removed_message_count": 5, "summary_message": summary}
    assert agent.messages[-1]["content"][0]["image"]["source"]["bytes"] == b"\x89PNG\x00"


# -- Tether -> Strands --------------------------------------------------------------------


@pytest.mark.parametrize("with_prompt", [False, True], ids=["session", "session+system_prompt"])
def test_a_tether_snapshot_loads_into_strands_which_sees_the_same_conversation(with_prompt: bool) -> None:
    source = tether_agent_after_a_run()
    snap = source.take_snapshot(preset="session", include=["system_prompt"] if with_prompt else None, app_data={"k": 1})
    wire = json.loads(snap.to_json())
    target = strands_agent(system_prompt="Strands' own prompt")
    target.load_snapshot(StrandsSnapshot.from_dict(wire))
    assert target.messages == source.messages
    assert target.state.get() == source.state.get()
    assert target.conversation_manager.removed_message_count == 0
    assert target._interrupt_state.to_dict() == {"interrupts": {}, "context": {}, "activated": False}
    if with_prompt:
        assert target.system_prompt == source.system_prompt == "You are a weather bot."
        assert target._system_prompt_content == SYSTEM
    else:
        assert target.system_prompt == "Strands' own prompt"
    again = target.take_snapshot(preset="session", include=["system_prompt"] if with_prompt else None, app_data={"k": 1})
    assert again.data == wire["data"], "Strands writes back exactly what Tether wrote"


def test_a_tether_interrupted_snapshot_loads_into_strands() -> None:
    @tool(run_in_thread=False)
    def approve(amount: int, context: ToolContext) -> str:
        """Ask before paying.

        Args:
            amount: How much.
        """
        return str(context.interrupt("approval", {"amount": amount}))

    agent = Agent(model=ScriptedModel([tool_call("approve", {"amount": 5}, tool_use_id="tu_9")]), tools=[approve])
    result = agent("pay")
    assert result.stop_reason == "interrupt"
    wire = agent.take_snapshot(preset="session").to_dict()
    state = _InterruptState.from_dict(wire["data"]["interrupt_state"])
    assert state.activated is True
    (interrupt,) = result.interrupts
    assert state.interrupts[interrupt.id].name == "approval" and state.interrupts[interrupt.id].response is None
    # ...and back into Tether: the Tether-only fields came along where Strands ignores them.
    fresh = Agent(model=ScriptedModel(["paid"]), tools=[approve])
    fresh.load_snapshot(wire)
    assert fresh.run_state.interrupt_state == agent.run_state.interrupt_state
    done = fresh([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert done.stop_reason == "end_turn" and done.text == "paid"


def test_strands_interrupt_records_load_into_tether() -> None:
    strands_state = _InterruptState(interrupts={"v1:x": StrandsInterrupt(id="v1:x", name="confirm", reason={"why": 1})}, activated=True)
    agent = Agent()
    agent.load_snapshot(
        {
            "schema_version": "1.0",
            "scope": "agent",
            "created_at": "2026-01-01T00:00:00Z",
            "data": {"interrupt_state": strands_state.to_dict()},
        }
    )
    assert agent.run_state.interrupt_state == {
        "interrupts": {"v1:x": {"id": "v1:x", "name": "confirm", "reason": {"why": 1}}},
        "activated": True,
    }
    again = agent.take_snapshot(include=["interrupt_state"]).data["interrupt_state"]
    assert again == strands_state.to_dict()


# -- Strands -> Tether -> Strands ---------------------------------------------------------


def test_strands_to_tether_to_strands_is_lossless() -> None:
    original = full_strands_snapshot()
    wire = json.loads(json.dumps(original.to_dict()))
    # The document itself: Tether writes back exactly what it read.
    assert Snapshot.from_dict(copy.deepcopy(wire)).to_dict() == wire
    assert json.loads(Snapshot.from_json(json.dumps(wire)).to_json()) == wire
    # Through a Tether agent and into a new Strands agent.
    agent = Agent()
    agent.load_snapshot(wire)
    back = agent.take_snapshot(preset="session", include=["system_prompt"], app_data={"ticket": "T-1"}).to_dict()
    assert back["data"] == wire["data"] and back["schema_version"] == "1.0" and back["scope"] == "agent"
    target = strands_agent()
    target.load_snapshot(StrandsSnapshot.from_dict(back))
    final = target.take_snapshot(preset="session", include=["system_prompt"], app_data={"ticket": "T-1"}).to_dict()
    assert final["data"] == wire["data"]
    assert final["app_data"] == wire["app_data"]


def test_strands_refuses_what_tether_refuses_the_same_way() -> None:
    """Behaviour 1 on both sides: a bad version or scope is refused before anything is applied."""
    for change in ({"schema_version": "99"}, {"scope": "unknown"}):
        bad = {**full_strands_snapshot().to_dict(), **change}
        with pytest.raises(StrandsSnapshotException, match=r"Unsupported snapshot schema version|Invalid snapshot scope"):
            StrandsSnapshot.from_dict(bad)
        with pytest.raises(SnapshotError, match=r"newer than this Tether supports|scope must be one of"):
            Snapshot.from_dict(bad)


# -- checkpoints and results ----------------------------------------------------------------


def test_the_released_strands_checkpoint_class_reads_tether_checkpoints(caplog: pytest.LogCaptureFixture) -> None:
    agent = Agent(
        model=ScriptedModel([tool_call("forecast", {"city": "Lyon"}, tool_use_id="tu_1"), "Sunny."]), tools=[forecast], checkpointing=True
    )
    paused = agent("Weather?")
    assert paused.stop_reason == "checkpoint" and paused.checkpoint is not None
    wire = json.loads(paused.checkpoint.to_json())
    assert wire["schema_version"] == StrandsCheckpoint(position="after_model").schema_version == "1.0"
    with caplog.at_level(logging.WARNING):
        theirs = StrandsCheckpoint.from_dict(wire)
    assert (theirs.position, theirs.cycle_index) == ("after_model", 0)
    assert "ignoring unknown fields" in caplog.text  # Tether's extra fields, ignored by Strands


def test_a_released_strands_checkpoint_resumes_a_tether_agent_from_its_state() -> None:
    """Strands 1.62's checkpoint is a marker (position, cycle) whose state lives in a session:
    a Tether agent that loaded the session's snapshot resumes from it."""
    session = strands_agent(messages=strands_messages()[:3]).take_snapshot(preset="session")
    marker = StrandsCheckpoint(position="after_tools", cycle_index=0).to_dict()
    assert set(marker) == {"position", "cycle_index", "schema_version"}
    model = ScriptedModel(["Sunny all week."])
    model.record_requests = True
    agent = Agent(model=model, tools=[forecast], checkpointing=True)
    agent.load_snapshot(session)
    ours = Checkpoint.from_dict(marker)
    assert (ours.position, ours.cycle_index, ours.snapshot, ours.app_data) == ("after_tools", 0, {}, {})
    result = agent({"checkpointResume": {"checkpoint": marker}})
    assert result.stop_reason == "end_turn" and result.text == "Sunny all week."
    assert len(model.calls) == 1 and model.calls[0]["messages"][-1]["content"][0]["toolResult"]["toolUseId"] == "tu_1"


def test_agent_results_go_both_ways() -> None:
    agent = Agent(model=ScriptedModel([tool_call("forecast", {"city": "Lyon"}, tool_use_id="tu_1")]), tools=[forecast], checkpointing=True)
    paused = agent("Weather?")
    data = json.loads(json.dumps(paused.to_dict()))
    theirs = StrandsResult.from_dict(data)
    assert theirs.stop_reason == "checkpoint" and theirs.message == paused.message
    assert theirs.checkpoint is not None and theirs.checkpoint.position == "after_model"
    message = {"role": "assistant", "content": [{"text": "hi"}, {"reasoningContent": {"redactedContent": b"\x00secret"}}]}
    strands_result = StrandsResult(stop_reason="end_turn", message=message, metrics=EventLoopMetrics(), state={})  # type: ignore[arg-type]
    ours = AgentResult.from_dict(json.loads(json.dumps(strands_result.to_dict())))
    assert ours.stop_reason == "end_turn" and ours.message == message and ours.checkpoint is None
    assert StrandsResult.from_dict(ours.to_dict()).message == message
