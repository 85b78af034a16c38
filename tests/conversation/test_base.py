"""The manager base: turn boundaries, JSON state tagged with the manager (Strands' shape), and the default overflow answer."""

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
    assert state["__name__"] == type(manager).__name__ and "kind" not in state  # Strands' shape
    restored = RunState()
    manager.restore(restored, json.loads(json.dumps(state)))
    assert restored.conversation_manager_state == {"removed_message_count": 4}
    assert manager.state(restored) == state
    # the returned state is a copy
    state["removed_message_count"] = 0
    assert run.conversation_manager_state["removed_message_count"] == 4


def test_restore_refuses_another_kind_of_state() -> None:
    state = SlidingWindowConversationManager().state(RunState())
    expected = "'SlidingWindowConversationManager' manager but this agent uses 'SummarizingConversationManager'"
    with pytest.raises(SnapshotError, match=expected):
        SummarizingConversationManager().restore(RunState(), state)
    with pytest.raises(SnapshotError, match="'sliding_window' manager but this agent uses 'SummarizingConversationManager'"):
        SummarizingConversationManager().restore(RunState(), {"kind": "sliding_window"})  # Tether's earlier shape


def test_subclasses_share_their_kinds_name_and_custom_kinds_use_their_own() -> None:
    class Wider(SlidingWindowConversationManager):
        pass

    class Mine(NullConversationManager):
        kind = "mine"

    assert Wider().state(RunState())["__name__"] == "SlidingWindowConversationManager"
    Wider().restore(RunState(), SlidingWindowConversationManager().state(RunState()))
    state = Mine().state(RunState())
    assert state == {"__name__": "Mine", "removed_message_count": 0}
    run = RunState()
    Mine().restore(run, state)
    Mine().restore(run, {"kind": "mine", "removed_message_count": 1})
    assert run.conversation_manager_state == {"removed_message_count": 1}
    with pytest.raises(SnapshotError, match="'Mine' manager"):
        NullConversationManager().restore(RunState(), state)


def test_strands_keys_survive_a_round_trip() -> None:
    """Keys Strands writes that Tether does not use are kept; defaults are not stored."""
    strands = {"__name__": "SlidingWindowConversationManager", "removed_message_count": 2, "model_call_count": 7}
    run = RunState()
    SlidingWindowConversationManager().restore(run, strands)
    assert run.conversation_manager_state == {"removed_message_count": 2, "model_call_count": 7}
    assert SlidingWindowConversationManager().state(run) == strands
    SlidingWindowConversationManager().restore(run, {**strands, "model_call_count": 0})
    assert run.conversation_manager_state == {"removed_message_count": 2}


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
