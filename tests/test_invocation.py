"""`invocation.py` (and the turn protocol it runs): new call vs resume, the hooks that see it, and the result it builds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether import AfterInvocation, Agent, BeforeInvocation, Checkpoint, CheckpointError, ScriptedModel, ToolContext, tool
from tether.models.scripted import tool_call
from tether.tools.base import Tool
from tether.turn import abandon_interrupts


def tools() -> list[Tool]:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def ask(context: ToolContext) -> Any:
        """Ask a human."""
        return context.interrupt("ok?")

    return [add, ask]


class Recorder:
    """Records what BeforeInvocation and AfterInvocation saw."""

    def __init__(self) -> None:
        self.before: list[tuple[bool, str | None]] = []
        self.after: list[tuple[bool, str | None, str | None]] = []

    def on_before(self, event: BeforeInvocation) -> None:
        self.before.append((event.resumed, event.resumed_from))

    def on_after(self, event: AfterInvocation) -> None:
        self.after.append((event.resumed, event.resumed_from, event.result.stop_reason if event.result else None))


def recorded_agent(script: list[Any], recorder: Recorder, **kwargs: Any) -> Agent:
    return Agent(model=ScriptedModel(script, stateful=True), tools=tools(), hooks=[recorder.on_before, recorder.on_after], **kwargs)


def test_hooks_tell_new_calls_from_each_kind_of_resume() -> None:
    recorder = Recorder()
    script = [tool_call("add", {"a": 1, "b": 2}), tool_call("ask", {}), "done", "again"]
    agent = recorded_agent(script, recorder, checkpointing=True)
    first = agent("go")  # pauses after_model
    assert first.checkpoint is not None
    second = agent({"checkpointResume": {"checkpoint": first.checkpoint.to_dict()}})  # after_tools
    assert second.checkpoint is not None
    third = agent(None)  # continue on the same agent: model, then pause after_model (ask)
    assert third.checkpoint is not None and third.checkpoint.position == "after_model"
    interrupted = agent({"checkpointResume": {"checkpoint": third.checkpoint.to_dict()}})
    assert interrupted.stop_reason == "interrupt"
    paused = agent([{"interruptResponse": {"interruptId": interrupted.interrupts[0].id, "response": "y"}}])
    assert paused.checkpoint is not None and paused.checkpoint.position == "after_tools"
    fresh_recorder = Recorder()
    fresh = recorded_agent(script, fresh_recorder, checkpointing=True)
    assert fresh({"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}}).text == "done"
    assert fresh("new question").text == "again"
    assert recorder.before == [
        (False, None),
        (True, "checkpoint:after_model"),
        (True, "continue"),
        (True, "checkpoint:after_model"),
        (True, "interrupt"),
    ]
    assert [(r, f) for r, f, _ in recorder.after] == recorder.before
    assert [stop for _, _, stop in recorder.after] == ["checkpoint", "checkpoint", "checkpoint", "interrupt", "checkpoint"]
    assert fresh_recorder.before == [(True, "checkpoint:after_tools"), (False, None)]


def test_after_invocation_sees_a_failed_resume_as_resumed_without_result() -> None:
    recorder = Recorder()
    agent = recorded_agent([tool_call("add", {"a": 1, "b": 1})], recorder, checkpointing=["after_tools"])
    cp = agent("go").checkpoint
    assert cp is not None
    with pytest.raises(Exception, match="ran out of responses"):
        agent({"checkpointResume": {"checkpoint": cp.to_dict()}})
    assert recorder.after[-1] == (True, "checkpoint:after_tools", None)


def test_a_result_keeps_its_own_metrics_after_the_run_goes_on() -> None:
    agent = Agent(model=ScriptedModel([tool_call("add", {"a": 1, "b": 1}), "done"]), tools=tools(), checkpointing=["after_tools"])
    first = agent("go")
    assert first.metrics.cycle_count == 1
    last = agent(None)
    assert last.metrics.cycle_count == 2
    assert first.metrics.cycle_count == 1 and first.metrics.invocation.cycle_count == 1
    assert first.checkpoint is not None and first.checkpoint.metrics["cycle_count"] == 1


def test_a_checkpoint_object_is_accepted_in_the_resume_block() -> None:
    script = [tool_call("add", {"a": 2, "b": 3}), "five"]
    cp = Agent(model=ScriptedModel(script, stateful=True), tools=tools(), checkpointing=["after_model"])("go").checkpoint
    assert isinstance(cp, Checkpoint)
    fresh = Agent(model=ScriptedModel(script, stateful=True), tools=tools(), checkpointing=["after_model"])
    assert fresh({"checkpointResume": {"checkpoint": cp}}).text == "five"
    assert cp.snapshot["data"]["messages"][-1]["role"] == "assistant"  # the checkpoint object was not modified


def test_a_new_prompt_after_an_after_tools_checkpoint_keeps_counting_cycles() -> None:
    script = [tool_call("add", {"a": 1, "b": 1}), tool_call("add", {"a": 2, "b": 2}), "done"]
    agent = Agent(model=ScriptedModel(script), tools=tools(), checkpointing=True)
    assert agent("go").checkpoint is not None
    paused = agent(None)
    assert paused.checkpoint is not None and (paused.checkpoint.position, paused.checkpoint.cycle_index) == ("after_tools", 0)
    nudged = agent("also add 2 and 2")
    assert nudged.checkpoint is not None and (nudged.checkpoint.position, nudged.checkpoint.cycle_index) == ("after_model", 1)
    assert agent.messages[-2] == {"role": "user", "content": [{"text": "also add 2 and 2"}]}


def test_resume_restores_metrics_from_the_checkpoint_not_from_the_target_agent() -> None:
    script = [tool_call("add", {"a": 1, "b": 1}), "done"]
    cp = Agent(model=ScriptedModel(script, stateful=True), tools=tools(), checkpointing=["after_tools"])("go").checkpoint
    assert cp is not None
    busy = Agent(model=ScriptedModel(["warmed up", "done"]), tools=tools(), checkpointing=["after_tools"])
    assert busy("warm up").metrics.cycle_count == 1  # this agent already has metrics of its own
    result = busy({"checkpointResume": {"checkpoint": json.loads(cp.to_json())}})
    assert result.text == "done"
    assert (result.metrics.cycle_count, result.metrics.tool_call_count) == (2, 1)
    assert result.metrics.invocation.cycle_count == 1


def test_abandon_interrupts_does_nothing_when_not_interrupted() -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    agent("hello")
    before = list(agent.messages)
    assert abandon_interrupts(agent.run_state) == []
    agent.cancel()  # idle and not interrupted: nothing changes
    assert agent.messages == before


def test_interrupt_state_without_context_outside_a_tool_cycle_is_refused() -> None:
    agent = Agent(model=ScriptedModel([tool_call("ask", {}), "ok"]), tools=tools())
    result = agent("go")
    snapshot = agent.take_snapshot(preset="all").to_dict()
    del snapshot["data"]["interrupt_state"]["context"]
    fresh = Agent(model=ScriptedModel(["ok"]), tools=tools())
    fresh.load_snapshot(snapshot)
    with pytest.raises(Exception, match="no context"):
        fresh([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": 1}}])


def test_checkpoint_resume_errors_are_checkpoint_errors() -> None:
    agent = Agent(model=ScriptedModel(["x"]), checkpointing=True)
    with pytest.raises(CheckpointError, match="checkpoint must be an object"):
        agent({"checkpointResume": {"checkpoint": "cp.json"}})


def test_cancel_on_a_fresh_agent_that_loaded_an_interrupted_snapshot() -> None:
    agent = Agent(model=ScriptedModel([tool_call("ask", {}), "ok"]), tools=tools())
    assert agent("go").stop_reason == "interrupt"
    fresh = Agent(model=ScriptedModel(["after cancel"]), tools=tools())
    fresh.load_snapshot(json.loads(agent.take_snapshot(preset="all").to_json()))
    fresh.cancel()
    last = fresh.messages[-1]
    assert last["role"] == "user" and last["content"][0]["toolResult"]["status"] == "error"
    assert fresh.run_state.interrupt_state == {}
    result = fresh("next")
    assert result.text == "after cancel"
    assert result.metrics.cycle_count == 2  # the interrupted run's cycle is still counted
