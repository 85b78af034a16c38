"""The null manager keeps everything; an overflow is an error for the caller."""

from __future__ import annotations

import pytest

from tether import Agent, ContextWindowExhaustedError, ContextWindowOverflowError, NullConversationManager, ScriptedModel
from tether.loop.state import RunState

from .helpers import conversation


def test_never_trims() -> None:
    run = RunState(messages=conversation([1] * 30))
    NullConversationManager().apply_management(run)
    assert len(run.messages) == 30 * 4
    assert run.conversation_manager_state == {}


def test_overflow_is_exhausted_at_once() -> None:
    model = ScriptedModel([ContextWindowOverflowError("too long"), "unreached"])
    agent = Agent(model=model, conversation_manager=NullConversationManager(), messages=conversation([0, 0]))
    with pytest.raises(ContextWindowExhaustedError) as info:
        agent("more")
    assert isinstance(info.value.__cause__, ContextWindowOverflowError)
    assert model.index == 1
    assert len(agent.messages) == 5


def test_agent_with_null_manager_keeps_long_histories() -> None:
    agent = Agent(model=ScriptedModel([f"a{i}" for i in range(30)]), conversation_manager=NullConversationManager())
    for i in range(30):
        agent(f"q{i}")
    assert len(agent.messages) == 60
