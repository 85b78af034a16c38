"""The manager base: turn boundaries, JSON state with a kind tag, and the default overflow answer."""

from __future__ import annotations

import asyncio
import json

import pytest

from tether import (
    ContextWindowExhaustedError,
    NullConversationManager,
    ScriptedModel,
    SlidingWindowConversationManager,
    SnapshotError,
    SummarizingConversationManager,
)
from tether.conversation import ConversationManager, trim_point
from tether.loop.state import RunState

from .helpers import conversation


def test_trim_point_only_at_user_turn_starts() -> None:
    messages = conversation([2, 0, 1])  # indexes: turn0 0..5, turn1 6..7, turn2 8..11
    assert trim_point(messages, 0) == 6  # never index 0: that would trim nothing
    assert trim_point(messages, 1) == 6
    assert trim_point(messages, 6) == 6
    assert trim_point(messages, 7) == 8
    assert trim_point(messages, 9) is None


@pytest.mark.parametrize(
    "manager",
    [NullConversationManager(), SlidingWindowConversationManager(), SummarizingConversationManager()],
    ids=lambda m: type(m).__name__,
)
def test_state_is_json_tagged_and_restores(manager: ConversationManager) -> None:
    run = RunState()
    run.conversation_manager_state = {"removed_message_count": 4}
    state = manager.state(run)
    assert state["kind"] == manager.kind
    restored = RunState()
    manager.restore(restored, json.loads(json.dumps(state)))
    assert restored.conversation_manager_state == {"removed_message_count": 4}
    assert manager.state(restored) == state
    # the returned state is a copy
    state["removed_message_count"] = 0
    assert run.conversation_manager_state["removed_message_count"] == 4


def test_restore_refuses_another_kind_of_state() -> None:
    state = SlidingWindowConversationManager().state(RunState())
    with pytest.raises(SnapshotError, match="'sliding_window' manager but this agent uses 'summarizing'"):
        SummarizingConversationManager().restore(RunState(), state)


def test_restore_accepts_untagged_state() -> None:
    run = RunState()
    NullConversationManager().restore(run, {"x": 1})
    assert run.conversation_manager_state == {"x": 1}


def test_kinds_are_distinct() -> None:
    kinds = {NullConversationManager.kind, SlidingWindowConversationManager.kind, SummarizingConversationManager.kind}
    assert len(kinds) == 3


def test_default_reduce_context_refuses() -> None:
    run = RunState(messages=conversation([0, 0]))
    with pytest.raises(ContextWindowExhaustedError, match="NullConversationManager cannot reduce"):
        asyncio.run(NullConversationManager().reduce_context(run, ScriptedModel([])))
    assert len(run.messages) == 4
