"""The sliding window keeps recent messages and never separates a toolUse from its toolResult."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether import (
    Agent,
    ConfigurationError,
    ContextWindowExhaustedError,
    ContextWindowOverflowError,
    Limits,
    ScriptedModel,
    SlidingWindowConversationManager,
    tool,
)
from tether.conversation import trim_point
from tether.loop.state import RunState

from ..conftest import call
from .helpers import assert_well_formed, conversation


def test_window_size_validation() -> None:
    with pytest.raises(ConfigurationError, match="window_size"):
        SlidingWindowConversationManager(window_size=1)
    assert SlidingWindowConversationManager().window_size == 40


def test_apply_management_trims_to_the_window_at_a_turn_start() -> None:
    run = RunState(messages=conversation([0, 0, 1, 0, 0]))  # sizes 2,2,4,2,2 = 12
    manager = SlidingWindowConversationManager(window_size=7)
    manager.apply_management(run)
    # excess 5 → the first turn start at or after index 5 is 8 (turn 3)
    assert [m["content"][0].get("text") for m in run.messages] == ["q3", "a3", "q4", "a4"]
    assert run.conversation_manager_state == {"removed_message_count": 8}
    manager.apply_management(run)
    assert len(run.messages) == 4
    assert run.conversation_manager_state["removed_message_count"] == 8


def test_apply_management_keeps_everything_when_no_boundary_fits() -> None:
    run = RunState(messages=conversation([10]))
    SlidingWindowConversationManager(window_size=4).apply_management(run)
    assert len(run.messages) == 22


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=12), window=st.integers(min_value=2, max_value=30))
def test_apply_management_never_splits_tool_pairs(shape: list[int], window: int) -> None:
    messages = conversation(shape)
    run = RunState(messages=list(messages))
    SlidingWindowConversationManager(window_size=window).apply_management(run)
    assert_well_formed(run.messages)
    assert run.messages == messages[len(messages) - len(run.messages) :]  # a suffix
    removed = run.conversation_manager_state.get("removed_message_count", 0)
    assert removed == len(messages) - len(run.messages)
    if len(run.messages) > window:  # only when no turn starts late enough to trim at
        assert run.messages == messages
        assert trim_point(messages, len(messages) - window) is None


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(min_value=0, max_value=4), min_size=2, max_size=12))
def test_reduce_context_drops_the_oldest_part_safely(shape: list[int]) -> None:
    messages = conversation(shape)
    run = RunState(messages=list(messages))
    asyncio.run(SlidingWindowConversationManager().reduce_context(run, ScriptedModel([])))
    assert_well_formed(run.messages)
    assert len(run.messages) < len(messages)
    assert run.messages == messages[len(messages) - len(run.messages) :]


def test_reduce_context_fails_when_only_one_turn_is_left() -> None:
    run = RunState(messages=conversation([3]))
    with pytest.raises(ContextWindowExhaustedError, match="no earlier turn"):
        asyncio.run(SlidingWindowConversationManager().reduce_context(run, ScriptedModel([])))


def test_agent_trims_after_each_invocation() -> None:
    agent = Agent(model=ScriptedModel([f"a{i}" for i in range(10)]), conversation_manager=SlidingWindowConversationManager(window_size=4))
    for i in range(10):
        agent(f"q{i}")
        assert len(agent.messages) <= 4
    assert agent.messages[-1]["content"][0]["text"] == "a9"
    assert agent.conversation_manager.state(agent.run_state)["removed_message_count"] == 16


def test_overflow_reduces_and_retries() -> None:
    model = ScriptedModel([ContextWindowOverflowError("too long"), "fits now"])
    model.record_requests = True
    agent = Agent(model=model, messages=conversation([1, 0, 2, 0]))
    result = agent("next")
    assert str(result) == "fits now"
    assert len(model.calls) == 2
    assert len(model.calls[1]["messages"]) < len(model.calls[0]["messages"])
    assert_well_formed(agent.messages)
    assert agent.messages[-2]["content"][0]["text"] == "next"


def test_overflow_reductions_are_bounded() -> None:
    model = ScriptedModel([ContextWindowOverflowError("too long")] * 10)
    agent = Agent(model=model, messages=conversation([0] * 20), limits=Limits(max_overflow_reductions=2))
    with pytest.raises(ContextWindowExhaustedError, match="max_overflow_reductions") as info:
        agent("next")
    assert isinstance(info.value.__cause__, ContextWindowOverflowError)
    assert model.index == 3  # two reductions, then the third overflow gives up


def test_overflow_in_a_tool_loop_keeps_pairs() -> None:
    @tool(run_in_thread=False)
    def step() -> str:
        return "ok"

    model = ScriptedModel([call("step"), ContextWindowOverflowError("full"), "done"])
    agent = Agent(model=model, tools=[step], messages=conversation([2, 2]))
    assert str(agent("go")) == "done"
    assert_well_formed(agent.messages)
