"""Interrupts: tools and hooks stop the run for a human answer and resume with it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pydantic
import pytest

from tether import (
    Agent,
    BeforeToolCall,
    Interrupt,
    InterruptError,
    PromptError,
    ScriptedModel,
    SequentialToolExecutor,
    TetherError,
    ToolContext,
    tool,
)
from tether.interrupts import InterruptRaiser, InterruptSignal, apply_responses, interrupt_id, pending_interrupts
from tether.models.scripted import tool_call, tool_calls
from tether.tools.base import Tool


class Calls:
    """Counts how often each tool body ran (the part before and after its interrupt)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.finished: list[str] = []


def make_tools(calls: Calls) -> list[Tool]:
    """``ask(question)`` interrupts once; ``work(n)`` just works; ``ask_twice`` asks two questions."""

    @tool
    def ask(question: str, context: ToolContext) -> str:
        """Ask a human."""
        calls.started.append("ask")
        answer = context.interrupt("confirm", reason={"question": question})
        calls.finished.append("ask")
        return f"human said {answer}"

    @tool
    def work(n: int) -> int:
        """Do some work."""
        calls.started.append("work")
        calls.finished.append("work")
        return n * 10

    @tool
    def ask_twice(context: ToolContext) -> str:
        """Ask two different questions, one after the other."""
        calls.started.append("ask_twice")
        first = context.interrupt("first", reason="one?")
        second = context.interrupt("second", reason="two?")
        calls.finished.append("ask_twice")
        return f"{first}+{second}"

    return [ask, work, ask_twice]


def scripted(script: list[Any]) -> ScriptedModel:
    model = ScriptedModel(script, stateful=True)
    model.record_requests = True
    return model


def answer(*pairs: tuple[str, Any]) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": ident, "response": value}} for ident, value in pairs]


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    return [block["toolResult"] for block in agent.messages[-2]["content"]]


# -- a tool interrupts --------------------------------------------------------------------


def test_tool_interrupt_stops_then_returns_the_answer_without_rerunning_finished_tools() -> None:
    calls = Calls()
    model = scripted([tool_calls([("ask", {"question": "deploy?"}), ("work", {"n": 4})]), "deployed"])
    agent = Agent(model=model, tools=make_tools(calls))
    result = agent("deploy it")
    assert result.stop_reason == "interrupt"
    assert len(result.interrupts) == 1
    interrupt = result.interrupts[0]
    ask_id = agent.messages[-1]["content"][0]["toolUse"]["toolUseId"]
    assert (interrupt.name, interrupt.reason, interrupt.source, interrupt.tool_use_id) == (
        "confirm",
        {"question": "deploy?"},
        "tool",
        ask_id,
    )
    assert interrupt.id == interrupt_id("tool", ask_id, "confirm")
    assert sorted(calls.started) == ["ask", "work"] and calls.finished == ["work"]
    assert len(model.calls) == 1

    resumed = agent(answer((interrupt.id, "yes")))
    assert resumed.stop_reason == "end_turn" and resumed.text == "deployed"
    assert calls.started.count("work") == 1  # the finished tool did not run again
    assert calls.finished.count("ask") == 1
    assert len(model.calls) == 2  # one call for the answer after the tools, none to redo the cycle
    results = tool_results(agent)
    assert [r["content"] for r in results] == [[{"text": "human said yes"}], [{"json": 40}]]
    assert agent.run_state.interrupt_state == {}  # cleared with the cycle


def test_interrupt_ids_are_deterministic_across_runs_and_resumes() -> None:
    def run() -> list[str]:
        calls = Calls()
        agent = Agent(model=scripted([tool_call("ask_twice", {}), "ok"]), tools=make_tools(calls))
        first = agent("go")
        second = agent(answer((first.interrupts[0].id, "a")))
        return [first.interrupts[0].id, second.interrupts[0].id]

    assert run() == run()
    assert len(set(run())) == 2


def test_same_tool_interrupts_again_with_another_name_after_its_first_answer() -> None:
    calls = Calls()
    model = scripted([tool_call("ask_twice", {}), "ok"])
    agent = Agent(model=model, tools=make_tools(calls))
    first = agent("go")
    assert [i.name for i in first.interrupts] == ["first"]
    second = agent(answer((first.interrupts[0].id, "A")))
    assert second.stop_reason == "interrupt"
    assert [(i.name, i.reason) for i in second.interrupts] == [("second", "two?")]
    with pytest.raises(InterruptError, match="already answered"):
        agent(answer((first.interrupts[0].id, "again")))
    third = agent(answer((second.interrupts[0].id, "B")))
    assert third.stop_reason == "end_turn"
    assert tool_results(agent)[0]["content"] == [{"text": "A+B"}]
    assert calls.started == ["ask_twice"] * 3 and calls.finished == ["ask_twice"]
    assert len(model.calls) == 2


def test_concurrent_interrupts_are_collected_into_one_stop_in_tool_call_order() -> None:
    @tool
    async def slow_ask(context: ToolContext) -> Any:
        """Asks after a while."""
        await asyncio.sleep(0.02)
        return context.interrupt("slow")

    @tool
    async def fast_ask(context: ToolContext) -> Any:
        """Asks at once."""
        return context.interrupt("fast")

    model = scripted([tool_calls([("slow_ask", {}), ("fast_ask", {})]), "ok"])
    agent = Agent(model=model, tools=[slow_ask, fast_ask])
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert [i.name for i in result.interrupts] == ["slow", "fast"]  # call order, not raise order
    slow, fast = result.interrupts

    # A partial answer is recorded; the run stops again for the rest without calling the model.
    partial = agent(answer((fast.id, 2)))
    assert partial.stop_reason == "interrupt"
    assert [i.id for i in partial.interrupts] == [slow.id]
    done = agent(answer((slow.id, 1)))
    assert done.stop_reason == "end_turn"
    assert [r["content"] for r in tool_results(agent)] == [[{"json": 1}], [{"json": 2}]]
    assert len(model.calls) == 2


def test_sequential_executor_stops_at_the_first_interrupt() -> None:
    calls = Calls()
    model = scripted([tool_calls([("work", {"n": 1}), ("ask", {"question": "q"}), ("work", {"n": 2})]), "ok"])
    agent = Agent(model=model, tools=make_tools(calls), tool_executor=SequentialToolExecutor())
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert calls.started == ["work", "ask"]  # the third call never started
    agent(answer((result.interrupts[0].id, "fine")))
    assert calls.started == ["work", "ask", "ask", "work"]
    assert [r["content"] for r in tool_results(agent)] == [[{"json": 10}], [{"text": "human said fine"}], [{"json": 20}]]


def test_interrupted_call_is_not_left_counted_as_started() -> None:
    calls = Calls()
    agent = Agent(model=scripted([tool_calls([("ask", {"question": "q"}), ("work", {"n": 1})]), "ok"]), tools=make_tools(calls))
    agent("go")
    cursor = agent.run_state.cursor
    work_id = agent.messages[-1]["content"][1]["toolUse"]["toolUseId"]
    assert cursor.started == [work_id]  # the interrupted ask is not "in doubt"
    assert list(cursor.results) == [work_id]


# -- a BeforeToolCall hook interrupts ----------------------------------------------------


def test_hook_interrupt_guards_a_tool_and_gets_the_answer_on_resume() -> None:
    calls = Calls()
    seen: list[Any] = []

    def approve(event: BeforeToolCall) -> None:
        assert event.tool_use is not None
        if event.tool_use["name"] != "work":
            return
        verdict = event.interrupt("approve_work", reason={"n": event.tool_use["input"]["n"]})
        seen.append(verdict)
        if verdict != "yes":
            event.cancel_tool = f"denied: {verdict}"

    model = scripted([tool_calls([("work", {"n": 1}), ("work", {"n": 2})]), "ok"])
    agent = Agent(model=model, tools=make_tools(calls), hooks=[approve])
    result = agent("go")
    assert result.stop_reason == "interrupt"
    assert [(i.source, i.name, i.reason) for i in result.interrupts] == [
        ("hook", "approve_work", {"n": 1}),
        ("hook", "approve_work", {"n": 2}),
    ]
    assert calls.started == []  # the hook stopped both before they ran
    first, second = result.interrupts
    assert first.id == interrupt_id("hook", first.tool_use_id or "", "approve_work") != second.id
    done = agent(answer((first.id, "yes"), (second.id, "no")))
    assert done.stop_reason == "end_turn"
    assert sorted(seen) == ["no", "yes"]
    assert calls.started == ["work"]  # only the approved one ran
    results = tool_results(agent)
    assert results[0]["content"] == [{"json": 10}]
    assert results[1]["status"] == "error" and results[1]["content"] == [{"text": "denied: no"}]


# -- snapshots, fresh agents and checkpoints ----------------------------------------------


def test_interrupt_state_travels_in_a_snapshot_to_a_fresh_agent() -> None:
    calls = Calls()
    script = [tool_calls([("ask", {"question": "q"}), ("work", {"n": 3})]), "thanks"]
    agent = Agent(model=scripted(script), tools=make_tools(calls))
    result = agent("go")
    text = json.dumps(agent.take_snapshot(preset="all").to_dict())

    other_calls = Calls()
    fresh = Agent(model=scripted(script), tools=make_tools(other_calls))
    fresh.load_snapshot(json.loads(text))
    cursor = fresh.run_state.cursor
    assert cursor.phase == "tools" and len(cursor.results) == 1  # restored from interrupt_state["context"]
    with pytest.raises(InterruptError, match="waiting for answers"):
        fresh("a new question")
    done = fresh(answer((result.interrupts[0].id, "ok")))
    assert done.stop_reason == "end_turn" and done.text == "thanks"
    assert other_calls.started == ["ask"]  # work finished before the snapshot: not re-run
    # metrics keep counting from the interrupted run, not from the fresh agent's zero
    assert (done.metrics.cycle_count, done.metrics.tool_call_count, done.metrics.usage["total_tokens"]) == (2, 2, 30)
    assert (done.metrics.invocation.cycle_count, done.metrics.invocation.tool_call_count) == (1, 1)
    assert "metrics" not in fresh.run_state.interrupt_state
    assert [r["content"] for r in tool_results(fresh)] == [[{"text": "human said ok"}], [{"json": 30}]]


def test_interrupts_inside_a_checkpointed_run() -> None:
    calls = Calls()
    script = [tool_call("ask", {"question": "q"}), "end"]

    def fresh() -> Agent:
        return Agent(model=scripted(script), tools=make_tools(calls), checkpointing=True)

    first = fresh()("go")
    assert first.checkpoint is not None and first.checkpoint.position == "after_model"
    agent = fresh()
    interrupted = agent({"checkpointResume": {"checkpoint": json.loads(json.dumps(first.checkpoint.to_dict()))}})
    assert interrupted.stop_reason == "interrupt"
    snapshot = json.loads(json.dumps(agent.take_snapshot(preset="all").to_dict()))
    other = fresh()
    other.load_snapshot(snapshot)
    paused = other(answer((interrupted.interrupts[0].id, "sure")))
    assert paused.stop_reason == "checkpoint"
    assert paused.checkpoint is not None and paused.checkpoint.position == "after_tools"
    empty = {"interrupts": {}, "context": {}, "activated": False}  # Strands' shape of an empty state
    assert paused.checkpoint.snapshot["data"]["interrupt_state"] == empty
    assert paused.metrics.invocation.tool_call_count == 1
    end = fresh()({"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}})
    assert end.text == "end"
    assert calls.started == ["ask", "ask"] and calls.finished == ["ask"]


# -- cancel ----------------------------------------------------------------------------------


def test_cancel_while_interrupted_gives_up_on_the_answers() -> None:
    calls = Calls()
    model = scripted([tool_calls([("ask", {"question": "q"}), ("work", {"n": 5})]), "moving on"])
    agent = Agent(model=model, tools=make_tools(calls))
    assert agent("go").stop_reason == "interrupt"
    agent.cancel()
    assert agent.messages[-1]["role"] == "user"
    results = [block["toolResult"] for block in agent.messages[-1]["content"]]
    assert results[0]["status"] == "error" and "cancelled" in results[0]["content"][0]["text"]
    assert results[1]["content"] == [{"json": 50}]  # the finished call keeps its result
    assert agent.run_state.interrupt_state == {}
    with pytest.raises(InterruptError, match="nothing is interrupted"):
        agent(answer(("int_whatever", 1)))
    assert agent("next question").text == "moving on"
    assert calls.started.count("work") == 1


def test_cancel_requested_by_an_interrupting_tool_wins() -> None:
    @tool
    def bail(context: ToolContext) -> Any:
        """Cancels the run, then asks."""
        context.agent.cancel()
        return context.interrupt("never-answered")

    agent = Agent(model=scripted([tool_call("bail", {}), "after"]), tools=[bail])
    result = agent("go")
    assert result.stop_reason == "cancelled"
    assert result.interrupts == []
    assert agent.run_state.interrupt_state == {}
    assert agent("again").text == "after"


# -- errors ----------------------------------------------------------------------------------


@pytest.fixture
def interrupted() -> tuple[Agent, Interrupt]:
    calls = Calls()
    agent = Agent(model=scripted([tool_call("ask", {"question": "q"}), "ok"]), tools=make_tools(calls))
    result = agent("go")
    return agent, result.interrupts[0]


@pytest.mark.parametrize(
    ("prompt", "error", "match"),
    [
        (answer(("int_nope", 1)), InterruptError, r"unknown interrupt id 'int_nope'; pending interrupts: int_"),
        ([{"interruptResponse": {"interruptId": "x", "response": 1}}, {"text": "hi"}], PromptError, "cannot be mixed"),
        ("a new prompt", InterruptError, "waiting for answers to interrupts int_.*confirm"),
        (None, InterruptError, "waiting for answers"),
        (
            [{"interruptResponse": {"interruptId": 5, "response": 1}}],
            InterruptError,
            r"prompt\[0\]\.interruptResponse\.interruptId must be a string",
        ),
        ([{"interruptResponse": {"interruptId": "x"}}], InterruptError, r"prompt\[0\]\.interruptResponse\.response is missing"),
        ([{"interruptResponse": "yes"}], InterruptError, r"prompt\[0\]\.interruptResponse must be an object"),
    ],
)
def test_bad_prompts_while_interrupted_are_refused_and_change_nothing(
    interrupted: tuple[Agent, Interrupt], prompt: Any, error: type[Exception], match: str
) -> None:
    agent, interrupt = interrupted
    before = json.dumps(agent.take_snapshot(preset="all").data)
    with pytest.raises(error, match=match):
        agent(prompt)
    assert issubclass(error, TetherError)
    assert json.dumps(agent.take_snapshot(preset="all").data) == before
    assert agent(answer((interrupt.id, "still works"))).stop_reason == "end_turn"


def test_answering_the_same_interrupt_twice_in_one_prompt_is_refused(interrupted: tuple[Agent, Interrupt]) -> None:
    agent, interrupt = interrupted
    with pytest.raises(InterruptError, match="already answered"):
        agent(answer((interrupt.id, 1), (interrupt.id, 2)))
    assert pending_interrupts(agent.run_state.interrupt_state) == [interrupt]


def test_non_json_response_is_refused(interrupted: tuple[Agent, Interrupt]) -> None:
    agent, interrupt = interrupted
    with pytest.raises(InterruptError, match=r"prompt\[0\]\.interruptResponse\.response is not JSON"):
        agent(answer((interrupt.id, object())))


def test_responses_when_nothing_is_interrupted_are_refused() -> None:
    agent = Agent(model=scripted(["hi"]))
    with pytest.raises(InterruptError, match="nothing is interrupted"):
        agent(answer(("int_x", "yes")))
    assert agent.messages == []


def test_structured_output_call_must_be_resumed_with_its_output_model() -> None:
    class Verdict(pydantic.BaseModel):
        ok: bool

    calls = Calls()
    agent = Agent(model=scripted([tool_call("ask", {"question": "q"}), tool_call("Verdict", {"ok": True})]), tools=make_tools(calls))
    result = agent("go", output_model=Verdict)
    assert result.stop_reason == "interrupt"
    with pytest.raises(InterruptError, match="output_model=Verdict"):
        agent(answer((result.interrupts[0].id, "y")))
    done = agent(answer((result.interrupts[0].id, "y")), output_model=Verdict)
    assert done.structured_output == Verdict(ok=True)


# -- the building blocks ----------------------------------------------------------------------


def test_raiser_validates_name_and_reason() -> None:
    raiser = InterruptRaiser({}, "tool", "t1")
    with pytest.raises(InterruptError, match="non-empty string"):
        raiser("")
    with pytest.raises(InterruptError, match=r"interrupt 'x' reason\.when is not JSON \(object\)"):
        raiser("x", reason={"when": object()})
    with pytest.raises(InterruptSignal) as caught:
        raiser("x", reason=[1, "two"])
    assert caught.value.interrupt == Interrupt(interrupt_id("tool", "t1", "x"), "x", [1, "two"], "tool", "t1")


def test_raiser_returns_a_recorded_answer() -> None:
    ident = interrupt_id("hook", "t1", "x")
    state: dict[str, Any] = {"interrupts": {ident: {"id": ident, "name": "x", "response": {"ok": 1}}}, "activated": True}
    assert InterruptRaiser(state, "hook", "t1")("x") == {"ok": 1}
    with pytest.raises(InterruptSignal):
        InterruptRaiser(state, "tool", "t1")("x")  # another source is another interrupt


def test_interrupt_dict_round_trip_and_signal_is_not_an_exception() -> None:
    item = Interrupt("int_1", "confirm", {"a": [1]}, "hook", "t9")
    assert Interrupt.from_dict(json.loads(json.dumps(item.to_dict()))) == item
    assert not issubclass(InterruptSignal, Exception)  # a tool's `except Exception` cannot swallow it


def test_apply_responses_checks_everything_before_recording() -> None:
    state: dict[str, Any] = {"activated": True, "interrupts": {"a": {"id": "a", "name": "A"}, "b": {"id": "b", "name": "B"}}}
    with pytest.raises(InterruptError, match="unknown interrupt id 'c'"):
        apply_responses(state, [{"interruptId": "a", "response": 1}, {"interruptId": "c", "response": 2}])
    assert [i.id for i in pending_interrupts(state)] == ["a", "b"]
    with pytest.raises(InterruptError, match="is not an interruptResponse key"):
        apply_responses(state, [{"interruptId": "a", "response": 1, "extra": True}])
    apply_responses(state, [{"interruptId": "b", "response": None}])
    assert [i.id for i in pending_interrupts(state)] == ["a"]
    assert state["interrupts"]["b"]["response"] is None


def test_malformed_metrics_in_the_interrupt_state_are_refused(interrupted: tuple[Agent, Interrupt]) -> None:
    agent, interrupt = interrupted
    snapshot = agent.take_snapshot(preset="all").to_dict()
    snapshot["data"]["interrupt_state"]["metrics"]["cycle_count"] = "one"
    fresh = Agent(model=scripted(["ok"]), tools=make_tools(Calls()))
    fresh.load_snapshot(snapshot)
    with pytest.raises(InterruptError, match=r"interrupt_state\.metrics\.cycle_count must be a non-negative integer"):
        fresh(answer((interrupt.id, "y")))
    assert pending_interrupts(fresh.run_state.interrupt_state) == [interrupt]
