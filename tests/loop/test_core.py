"""The sans-I/O core, driven directly: for given outcomes, it asks for the right effects.

No model, no tools, no event loop: these tests feed outcomes (``model_done``, ``tool_done``...)
into a :class:`LoopCore` and check the effects it asks for and the state it leaves.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import tether.loop.core as core_module
from tether import StructuredOutputError
from tether.loop import CallModel, CoreConfig, LoopCore, ModelOutcome, RunState, RunTools, Stop
from tether.types import Message, ToolResult

from ..conftest import assistant, call, user

USAGE = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}


def tools_message(*names: str, ids: list[str] | None = None) -> Message:
    content: list[Any] = []
    for i, name in enumerate(names):
        use: dict[str, Any] = {"name": name, "input": {"i": i}}
        if ids is not None:
            use["toolUseId"] = ids[i]
        content.append({"toolUse": use})
    return {"role": "assistant", "content": content}


def ok(tool_use_id: str, text: str = "ok") -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def new_core(config: CoreConfig | None = None, messages: list[Message] | None = None) -> LoopCore:
    return LoopCore(RunState(messages=list(messages or [])), config or CoreConfig())


def test_a_text_answer() -> None:
    core = new_core()
    assert core.start([user("hi")]) == [user("hi")]
    assert core.run.cursor.phase == "model"
    assert core.next_effect() == CallModel(None)
    added = core.model_done(ModelOutcome(assistant("hello"), "end_turn", USAGE, latency_ms=12.5))
    assert added == [assistant("hello")]
    assert core.run.messages == [user("hi"), assistant("hello")]
    assert core.next_effect() == Stop("end_turn")
    assert core.next_effect() == Stop("end_turn")  # asking again changes nothing
    cursor = core.run.cursor
    assert cursor.phase == "idle" and cursor.cycle_index == 1
    metrics = core.run.metrics
    assert metrics["cycle_count"] == 1 and metrics["model_call_count"] == 1
    assert metrics["usage"] == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    assert metrics["model_latency_ms"] == 12.5


def test_a_tool_cycle_in_call_order_whatever_the_completion_order() -> None:
    core = new_core()
    core.start([user("go")])
    core.next_effect()
    message = tools_message("a", "b", "c", ids=["1", "2", "3"])
    core.model_done(ModelOutcome(message, "tool_use", USAGE))
    assert core.run.cursor.phase == "tools"
    effect = core.next_effect()
    assert isinstance(effect, RunTools)
    assert [use["toolUseId"] for use in effect.tool_uses] == ["1", "2", "3"]
    for tool_use_id in ("1", "2", "3"):
        core.tool_started(tool_use_id)
    assert core.run.cursor.started == ["1", "2", "3"]
    assert core.tool_done("3", ok("3", "c")) == []
    assert core.tool_done("1", ok("1", "a")) == []
    # a pending effect asks only for what has no result yet
    pending = core.next_effect()
    assert isinstance(pending, RunTools) and [u["toolUseId"] for u in pending.tool_uses] == ["2"]
    added = core.tool_done("2", ok("2", "b"))
    assert added == [{"role": "user", "content": [{"toolResult": ok(i, t)} for i, t in (("1", "a"), ("2", "b"), ("3", "c"))]}]
    cursor = core.run.cursor
    assert cursor.phase == "model" and cursor.cycle_index == 1
    assert cursor.results == {} and cursor.started == []
    assert core.next_effect() == CallModel(None)


def test_missing_tool_use_ids_are_derived_deterministically() -> None:
    def ids_after(prefix: list[Message]) -> list[str]:
        core = new_core(messages=prefix)
        core.start([user("go")])
        core.model_done(ModelOutcome(tools_message("a", "b"), "tool_use", USAGE))
        return [block["toolUse"]["toolUseId"] for block in core.run.messages[-1]["content"]]

    first = ids_after([])
    assert len(set(first)) == 2 and all(first)
    assert ids_after([]) == first
    later = ids_after([user("x"), assistant("y")])
    assert not set(later) & set(first)  # a different position gives different ids

    core = new_core()
    core.start([user("go")])
    core.model_done(ModelOutcome(tools_message("a", "b", ids=["keep", ""]), "tool_use", USAGE))
    ids = [b["toolUse"]["toolUseId"] for b in core.run.messages[-1]["content"]]
    assert ids[0] == "keep" and ids[1] and ids[1] != "keep"


def test_tool_uses_run_even_when_the_stop_reason_says_end_turn() -> None:
    core = new_core()
    core.start([user("go")])
    core.model_done(ModelOutcome(tools_message("a", ids=["1"]), "end_turn", USAGE))
    assert isinstance(core.next_effect(), RunTools)


def test_max_tokens_drops_truncated_tool_calls() -> None:
    core = new_core()
    core.start([user("go")])
    message: Message = {"role": "assistant", "content": [{"text": "partial"}, {"toolUse": {"toolUseId": "1", "name": "a", "input": {}}}]}
    added = core.model_done(ModelOutcome(message, "max_tokens", USAGE))
    assert added == [assistant("partial")]
    assert core.next_effect() == Stop("max_tokens")
    assert core.run.cursor.phase == "idle"

    only_tool = new_core()
    only_tool.start([user("go")])
    assert only_tool.model_done(ModelOutcome(tools_message("a", ids=["1"]), "max_tokens", USAGE)) == []
    assert only_tool.run.messages == [user("go")]
    assert only_tool.next_effect() == Stop("max_tokens")


@pytest.mark.parametrize("reason", ["stop_sequence", "content_filtered", "guardrail_intervened"])
def test_provider_stop_reasons_end_the_invocation(reason: str) -> None:
    core = new_core()
    core.start([user("go")])
    core.model_done(ModelOutcome(assistant("x"), reason, USAGE))
    assert core.next_effect() == Stop(reason)


def drive_tool_cycles(core: LoopCore, cycles: int) -> None:
    for _ in range(cycles):
        effect = core.next_effect()
        if not isinstance(effect, CallModel):
            return
        core.model_done(ModelOutcome(call("t"), "tool_use", USAGE))
        (use,) = core.next_effect().tool_uses  # type: ignore[union-attr]
        core.tool_done(use["toolUseId"], ok(use["toolUseId"]))


def test_cycle_limit() -> None:
    core = new_core(CoreConfig(max_cycles=3))
    core.start([user("go")])
    drive_tool_cycles(core, 10)
    assert core.run.metrics["cycle_count"] == 3
    assert core.next_effect() == Stop("limit_cycles")
    assert core.run.cursor.phase == "idle"
    # the limit counts per invocation
    core.start([user("more")])
    assert core.next_effect() == CallModel(None)


def test_token_limit() -> None:
    core = new_core(CoreConfig(max_tokens=31))
    core.start([user("go")])
    drive_tool_cycles(core, 10)
    assert core.run.cursor.invocation_tokens == 45
    assert core.next_effect() == Stop("limit_tokens")


def test_usage_without_total_is_summed() -> None:
    core = new_core()
    core.start([user("go")])
    core.model_done(ModelOutcome(assistant("x"), "end_turn", {"inputTokens": 7, "outputTokens": 2}))
    assert core.run.metrics["usage"] == {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}


def test_cycle_index_counts_over_the_whole_run() -> None:
    core = new_core()
    core.start([user("one")])
    drive_tool_cycles(core, 2)
    core.model_done(ModelOutcome(assistant("done"), "end_turn", USAGE))
    assert core.run.cursor.cycle_index == 3
    core.start([user("two")])
    assert core.run.cursor.cycle_index == 3
    assert core.run.cursor.invocation_cycles == 0


def test_structured_output_forces_the_tool_and_stops_when_recorded() -> None:
    core = new_core(CoreConfig(output_tool="Answer", has_other_tools=True))
    core.start([user("go")])
    assert core.next_effect() == CallModel({"any": {}})
    core.model_done(ModelOutcome(tools_message("Answer", ids=["1"]), "tool_use", USAGE))
    core.next_effect()
    core.tool_done("1", ok("1"), structured_output={"value": 1})
    assert core.run.cursor.structured_output == {"value": 1}
    assert core.next_effect() == Stop("end_turn")

    alone = new_core(CoreConfig(output_tool="Answer", has_other_tools=False))
    alone.start([user("go")])
    assert alone.next_effect() == CallModel({"tool": {"name": "Answer"}})


def test_structured_output_corrective_turn_then_error() -> None:
    core = new_core(CoreConfig(output_tool="Answer", has_other_tools=True))
    core.start([user("go")])
    core.next_effect()
    added = core.model_done(ModelOutcome(assistant("prose"), "end_turn", USAGE))
    assert added[0] == assistant("prose")
    assert added[1]["role"] == "user" and "`Answer`" in added[1]["content"][0]["text"]
    assert core.run.cursor.corrective_turn_used
    assert core.next_effect() == CallModel({"tool": {"name": "Answer"}})
    with pytest.raises(StructuredOutputError, match="Answer"):
        core.model_done(ModelOutcome(assistant("still prose"), "end_turn", USAGE))


def test_cancel_closes_the_cycle_with_error_results() -> None:
    core = new_core()
    core.start([user("go")])
    core.model_done(ModelOutcome(tools_message("a", "b", ids=["1", "2"]), "tool_use", USAGE))
    core.tool_done("1", ok("1"))
    added = core.cancel()
    results = [b["toolResult"] for b in added[0]["content"]]
    assert results[0] == ok("1")
    assert results[1]["toolUseId"] == "2" and results[1]["status"] == "error"
    assert core.next_effect() == Stop("cancelled")
    assert core.run.cursor.phase == "idle"

    idle = new_core()
    idle.start([user("go")])
    assert idle.cancel() == []
    assert idle.next_effect() == Stop("cancelled")


def test_resume_clears_the_stop_and_the_invocation_budget() -> None:
    core = new_core(CoreConfig(max_cycles=1))
    core.start([user("go")])
    drive_tool_cycles(core, 5)
    assert core.next_effect() == Stop("limit_cycles")
    core.resume()
    assert core.run.cursor.stop_reason is None and core.run.cursor.invocation_cycles == 0
    assert core.next_effect() == CallModel(None)


def scripted_run() -> RunState:
    """One fixed sequence of outcomes, folded into a fresh core."""
    core = new_core(CoreConfig(max_cycles=10))
    core.start([user("go")])
    core.next_effect()
    core.model_done(ModelOutcome(tools_message("a", "b"), "tool_use", USAGE, latency_ms=1.0))
    effect = core.next_effect()
    assert isinstance(effect, RunTools)
    for use in reversed(effect.tool_uses):
        core.tool_started(use["toolUseId"])
        core.tool_done(use["toolUseId"], ok(use["toolUseId"], use["name"]))
    core.next_effect()
    core.model_done(ModelOutcome(assistant("end"), "end_turn", USAGE, latency_ms=2.0))
    assert core.next_effect() == Stop("end_turn")
    return core.run


def test_round_budget_shares_what_is_left_among_the_nesting_calls_running_at_once() -> None:
    from tether.budget import Budget, BudgetPolicy

    budget = Budget(max_output_tokens=100, max_tool_calls=10, max_wall_s=60.0)
    core = new_core(CoreConfig(budget=BudgetPolicy(budget)))
    core.run.metrics["usage"]["output_tokens"] = 40
    core.run.metrics["tool_call_count"] = 3
    uses: list[Any] = [{"name": "agent_a"}, {"name": "plain"}, {"name": "agent_b"}]

    def nests(name: str) -> bool:
        return name.startswith("agent")

    # at once: 60 output tokens and 10 - 3 - 3 tool calls left, halved; wall time kept whole
    shared = core.round_budget(uses, nests, at_once=True)
    assert shared == Budget(max_output_tokens=30, max_tool_calls=2, max_wall_s=60.0)
    # one after another: all that is left, less the calls from this one on
    assert core.round_budget(uses[1:], nests, at_once=False) == Budget(max_output_tokens=60, max_tool_calls=5, max_wall_s=60.0)
    assert new_core().round_budget(uses, nests, at_once=True) is None  # no budget


def test_same_outcomes_give_the_same_state_and_it_is_json() -> None:
    first = dataclasses.asdict(scripted_run())
    second = dataclasses.asdict(scripted_run())
    assert first == second
    assert json.loads(json.dumps(first)) == first


def test_the_core_module_does_no_io() -> None:
    tree = ast.parse(Path(core_module.__file__).read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    forbidden = {"asyncio", "time", "random", "os", "socket", "uuid", "datetime", "threading", "subprocess", "io"}
    assert not imported & forbidden, imported & forbidden
