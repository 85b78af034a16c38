"""The core always makes progress: from any run state, valid or edited, every effect advances the
run or the core raises a TetherError; no state makes a driver loop forever.

Hypothesis builds run states by driving the core through a random script and stopping anywhere
(mid-cycle, with partial results, at a pause, at an interrupt), then edits them the way forks,
rolled-back rows and hand-edited snapshots do (tool calls removed, foreign or complete results,
a phase that does not match the messages, stray interrupts). A scripted driver then resumes
each state and must reach a final stop within a fixed number of effects.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.errors import TetherError
from tether.loop.core import CoreConfig, LoopCore, ModelOutcome, tool_uses_of
from tether.loop.effects import CallModel, CloseCycle, Pause, RunTools, Stop
from tether.loop.state import RunState
from tether.types import Message

BOUND = 200
"""Effects a resumed run may take at most (max_cycles=6 keeps the honest runs far below it)."""


def reply(spec: int, index: int) -> Message:
    """An assistant message: text when ``spec`` is 0, else ``spec`` tool calls."""
    if spec == 0:
        return {"role": "assistant", "content": [{"text": f"answer {index}"}]}
    uses: Any = [{"toolUse": {"toolUseId": f"t{index}_{k}", "name": "f", "input": {"k": k}}} for k in range(spec)]
    return {"role": "assistant", "content": uses}


def result(tool_use_id: str) -> Any:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": "ok"}]}


def step(core: LoopCore, effect: Any, script: list[int], counter: list[int], interrupt_first: bool) -> None:
    """Perform one effect the way a driver does, with scripted outcomes."""
    run = core.run
    if isinstance(effect, CallModel):
        spec = script.pop(0) if script else 0
        counter[0] += 1
        core.model_done(ModelOutcome(reply(spec, counter[0]), "tool_use" if spec else "end_turn", {"inputTokens": 1}))
    elif isinstance(effect, RunTools):
        assert effect.tool_uses, "RunTools with nothing to run is a spin"
        for use in effect.tool_uses:
            tool_use_id = use["toolUseId"]
            core.tool_started(tool_use_id)
            table = run.interrupt_state.get("interrupts") or {}
            answered = any(item.get("tool_use_id") == tool_use_id and "response" in item for item in table.values())
            if interrupt_first and not answered:
                interrupt = {"id": f"int_{tool_use_id}", "name": "ask", "reason": None, "source": "tool", "tool_use_id": tool_use_id}
                core.tool_interrupted([interrupt])
                return
            core.tool_done(tool_use_id, result(tool_use_id))
    else:
        assert isinstance(effect, CloseCycle | Pause)


def drive(core: LoopCore, script: list[int], interrupt_first: bool = False) -> Stop:
    """Resume ``core`` and run it to a final stop, answering interrupts; fails past BOUND effects."""
    counter = [100]
    core.resume()
    for _ in range(BOUND):
        effect = core.next_effect()
        if isinstance(effect, Stop):
            if effect.reason != "interrupt":
                return effect
            table = core.run.interrupt_state.get("interrupts") or {}
            for item in table.values():
                item.setdefault("response", "yes")
            core.resume()
            continue
        step(core, effect, script, counter, interrupt_first)
    raise AssertionError(f"no final stop after {BOUND} effects: the core does not make progress")


EDITS = ["none", "drop_calls", "drop_some_calls", "foreign", "all_results", "phase_tools", "phase_model", "stray", "empty"]


@st.composite
def run_states(draw: st.DrawFn) -> RunState:
    """A run stopped at a random point of a random script, then maybe edited."""
    script = draw(st.lists(st.integers(0, 3), max_size=6))
    positions = draw(st.sampled_from([frozenset(), frozenset({"after_model"}), frozenset({"after_tools"})]))
    core = LoopCore(RunState(run_id="r"), CoreConfig(checkpoint_positions=positions, max_cycles=6))
    core.start([{"role": "user", "content": [{"text": "go"}]}])
    stop_after = draw(st.integers(0, 12))
    counter = [0]
    interrupt_first = draw(st.booleans())
    for _ in range(stop_after):
        effect = core.next_effect()
        if isinstance(effect, Stop):
            break
        step(core, effect, script, counter, interrupt_first)
    run = core.run
    edit = draw(st.sampled_from(EDITS))
    apply_edit(run, edit, draw(st.integers(0, 5)))
    return run


def apply_edit(run: RunState, edit: str, seed: int) -> None:
    last = run.messages[-1] if run.messages else None
    if edit == "drop_calls" and last is not None:
        last["content"] = [block for block in last["content"] if "toolUse" not in block] or [{"text": "edited"}]
    elif edit == "drop_some_calls" and last is not None:
        uses = [i for i, block in enumerate(last["content"]) if "toolUse" in block]
        if uses:
            del last["content"][uses[seed % len(uses)]]
            if not last["content"]:
                last["content"] = [{"text": "edited"}]
    elif edit == "foreign":
        run.cursor.results[f"foreign_{seed}"] = result(f"foreign_{seed}")
    elif edit == "all_results" and last is not None:
        for use in tool_uses_of(last):
            run.cursor.results[use["toolUseId"]] = result(use["toolUseId"])
    elif edit == "phase_tools":
        run.cursor.phase = "tools"
    elif edit == "phase_model":
        run.cursor.phase = "model"
    elif edit == "stray":
        table = run.interrupt_state.setdefault("interrupts", {})
        ident = f"int_stray{seed}"
        table[ident] = {"id": ident, "name": "ask", "reason": None, "source": "tool", "tool_use_id": f"gone{seed}"}
        run.interrupt_state["activated"] = True
    elif edit == "empty":
        run.messages.clear()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=run_states(), script=st.lists(st.integers(0, 3), max_size=8), interrupt_first=st.booleans())
def test_every_state_reaches_a_final_stop_or_a_clear_error(run: RunState, script: list[int], interrupt_first: bool) -> None:
    positions = frozenset({"after_model", "after_tools"})
    core = LoopCore(copy.deepcopy(run), CoreConfig(checkpoint_positions=positions, max_cycles=6))
    try:
        stop = drive(core, list(script), interrupt_first)
    except TetherError:
        return  # an inconsistent state is refused with a clear error: fine, as long as it never spins
    assert stop.reason in ("end_turn", "limit_cycles", "max_tokens", "cancelled", "tool_use")


def test_a_tool_cycle_whose_results_are_all_in_closes_instead_of_spinning() -> None:
    run = RunState(messages=[{"role": "user", "content": [{"text": "go"}]}, reply(2, 1)])
    run.cursor.phase = "tools"
    run.cursor.results = {"t1_0": result("t1_0"), "t1_1": result("t1_1")}
    core = LoopCore(run, CoreConfig())
    effect = core.next_effect()
    assert isinstance(effect, CloseCycle) and effect.messages[0]["role"] == "user"
    assert [b["toolResult"]["toolUseId"] for b in effect.messages[0]["content"]] == ["t1_0", "t1_1"]  # type: ignore[typeddict-item]
    assert isinstance(core.next_effect(), CallModel)


def test_a_foreign_result_never_counts_toward_closing_the_cycle() -> None:
    run = RunState(messages=[{"role": "user", "content": [{"text": "go"}]}, reply(2, 1)])
    run.cursor.phase = "tools"
    core = LoopCore(run, CoreConfig())
    assert core.tool_done("stranger", result("stranger")) == []
    assert core.tool_done("t1_0", result("t1_0")) == []  # two results recorded, one of them foreign: still open
    closed = core.tool_done("t1_1", result("t1_1"))
    assert [b["toolResult"]["toolUseId"] for b in closed[0]["content"]] == ["t1_0", "t1_1"]  # type: ignore[typeddict-item]


def test_a_tool_phase_without_tool_calls_is_a_clear_error() -> None:
    run = RunState(messages=[{"role": "user", "content": [{"text": "go"}]}], run_id="r9")
    run.cursor.phase = "tools"
    try:
        LoopCore(run, CoreConfig()).next_effect()
    except TetherError as exc:
        assert "run r9 is in phase 'tools' but its last message calls no tool" in str(exc)
    else:
        raise AssertionError("an inconsistent tool phase must be refused")
