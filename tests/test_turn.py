"""`turn.py`: the turn protocol on its own — triage, interrupt answers, finishing, stored results.

No Agent here: a RunState, a LoopCore and the protocol's functions, as the local, durable and
Temporal drivers use them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tether import SlidingWindowConversationManager
from tether._prompt import Prompt, normalize_prompt
from tether.errors import CheckpointError, InterruptError, PromptError
from tether.interrupts import Interrupt
from tether.loop.core import CoreConfig, LoopCore, ModelOutcome
from tether.loop.effects import Pause, Stop
from tether.loop.state import RunState
from tether.turn import (
    begin_turn,
    copy_metrics,
    finish_turn,
    is_waiting,
    last_assistant,
    resume_interrupt,
    stored_result,
)

from .conftest import assistant, call, user


def interrupted_run() -> RunState:
    """A run stopped inside a tool cycle for one interrupt of tool call ``t1``."""
    run = RunState(messages=[user("book"), call("book", {}, "t1")])
    core = LoopCore(run, CoreConfig())
    core.start([])
    core.run.cursor.phase = "tools"
    core.tool_started("t1")
    interrupt = Interrupt("int_1", "approve", {"city": "Lisbon"}, "tool", "t1")
    core.tool_interrupted([interrupt.to_dict()])
    effect = core.next_effect()
    assert effect == Stop("interrupt")
    return run


def test_a_new_prompt_starts_a_call_and_appends_after_the_hooks() -> None:
    run = RunState()
    prompt = normalize_prompt("hi")
    turn = begin_turn(run, prompt)
    assert turn.resumed_from is None and not turn.resumed
    assert run.messages == []  # nothing appended before BeforeInvocation hooks run
    core = LoopCore(run, CoreConfig())
    assert turn.start(core, prompt) == [user("hi")] and run.messages == [user("hi")]


def test_a_refused_prompt_leaves_the_interrupted_run_unchanged() -> None:
    run = interrupted_run()
    before = copy.deepcopy(run)
    with pytest.raises(InterruptError, match="waiting for answers to interrupts int_1"):
        begin_turn(run, normalize_prompt("another question"))
    with pytest.raises(InterruptError, match="unknown interrupt id"):
        begin_turn(run, normalize_prompt([{"interruptResponse": {"interruptId": "nope", "response": 1}}]))
    with pytest.raises(InterruptError):
        begin_turn(run, Prompt("continue"))  # a local agent refuses None while interrupted
    assert run == before


def test_continue_waits_for_answers_when_the_driver_can_wait() -> None:
    run = interrupted_run()
    assert is_waiting(run)
    turn = begin_turn(run, Prompt("continue"), continue_waits=True)
    assert turn.resumed_from == "continue"


def test_answers_put_the_cursor_back_and_restore_the_metrics_of_the_interrupt() -> None:
    run = interrupted_run()
    run.interrupt_state["metrics"] = copy_metrics(run.metrics) | {"cycle_count": 7}
    run.cursor.phase = "idle"  # e.g. a snapshot taken at the interrupt, loaded elsewhere
    turn = begin_turn(run, normalize_prompt([{"interruptResponse": {"interruptId": "int_1", "response": "yes"}}]))
    assert turn.resumed_from == "interrupt"
    assert run.cursor.phase == "tools" and run.metrics["cycle_count"] == 7
    assert "metrics" not in run.interrupt_state  # consumed, never stale
    assert not is_waiting(run)


def test_resume_interrupt_refuses_a_different_output_model() -> None:
    run = interrupted_run()
    run.interrupt_state["output_tool"] = "Answer"
    with pytest.raises(InterruptError, match="structured-output call for 'Answer'"):
        resume_interrupt(run, [{"interruptId": "int_1", "response": "yes"}], None)


def test_a_checkpoint_needs_checkpointing_and_a_prompt_cannot_skip_pending_tools() -> None:
    run = RunState(messages=[user("go"), call("add", {}, "t1")])
    run.cursor.phase = "tools"
    with pytest.raises(CheckpointError, match="checkpointing=False"):
        begin_turn(run, Prompt("checkpoint", checkpoint={}))
    with pytest.raises(PromptError, match="tool calls pending"):
        begin_turn(run, normalize_prompt("next"))
    assert begin_turn(run, Prompt("continue")).resumed_from == "continue"


def finished(run: RunState, stop_reason: str = "end_turn") -> LoopCore:
    core = LoopCore(run, CoreConfig())
    core.start([user("q")])
    core.model_done(ModelOutcome(assistant("a"), stop_reason, {"inputTokens": 3, "outputTokens": 2}))
    return core


def test_finish_turn_builds_the_result_of_its_own_call() -> None:
    run = RunState(state={"k": 1})
    turn = begin_turn(run, normalize_prompt("q"))
    core = finished(run)
    result = finish_turn(run, core.next_effect(), turn, manager=SlidingWindowConversationManager())
    assert result.stop_reason == "end_turn" and result.message == assistant("a")
    assert result.metrics.invocation.usage["total_tokens"] == 5
    result.state["k"] = 2
    assert run.state == {"k": 1}  # the result holds a copy


def test_finish_turn_at_a_pause_returns_a_checkpoint_and_at_an_interrupt_marks_the_run() -> None:
    run = RunState(messages=[user("go"), call("add", {}, "t1")])
    turn = begin_turn(run, Prompt("continue"))
    manager = SlidingWindowConversationManager()
    paused = finish_turn(run, Pause("after_model", 0), turn, manager=manager)
    assert paused.stop_reason == "checkpoint" and paused.checkpoint is not None
    assert paused.checkpoint.position == "after_model"
    run = interrupted_run()
    result = finish_turn(run, Stop("interrupt"), begin_turn(run, Prompt("continue"), continue_waits=True), manager=manager, output_tool="X")
    assert result.stop_reason == "interrupt" and [i.id for i in result.interrupts] == ["int_1"]
    assert run.interrupt_state["output_tool"] == "X" and run.interrupt_state["metrics"] == run.metrics


def test_last_assistant_stops_at_a_prompt() -> None:
    assert last_assistant([assistant("old"), user("new")]) is None
    results: Any = {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": []}}]}
    assert last_assistant([call("x", {}, "t"), results]) == call("x", {}, "t")


def test_stored_result_of_a_finished_run_costs_no_model_call() -> None:
    run = RunState()
    finished(run, "max_tokens")
    result = stored_result(run)
    assert result.stop_reason == "max_tokens" and result.text == "a"
    assert result.metrics.invocation.cycle_count == 0
    waiting = stored_result(interrupted_run())
    assert waiting.stop_reason == "interrupt" and waiting.interrupts[0].name == "approve"
