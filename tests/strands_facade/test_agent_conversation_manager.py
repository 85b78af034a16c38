"""``tether.strands.agent.conversation_manager``: Strands' arguments on Tether's managers."""

from __future__ import annotations

from typing import Any

import pytest

import tether.strands as ts
from tether.errors import ConfigurationError
from tether.strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager

from .test_agent import TetherFake, plain, strands_fake


def test_sliding_window_trims_as_strands_and_counts_removed_messages() -> None:
    import strands

    script: list[Any] = [[{"text": f"answer {n}"}] for n in range(3)]
    window = strands.agent.SlidingWindowConversationManager(window_size=4)
    theirs = strands.Agent(model=strands_fake(script), conversation_manager=window, callback_handler=None)
    ours = ts.Agent(model=TetherFake(script), conversation_manager=SlidingWindowConversationManager(window_size=4), callback_handler=None)
    for n in range(3):
        theirs(f"question {n}")
        ours(f"question {n}")
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]
    assert len(ours.messages) == 4
    state = ours.take_snapshot(preset="session").data["conversation_manager_state"]
    assert state == theirs.take_snapshot(preset="session").data["conversation_manager_state"]
    assert state["removed_message_count"] == 2


@pytest.mark.parametrize("argument", [{"per_turn": True}, {"pin_first": 1}, {"proactive_compression": True}])
def test_sliding_window_arguments_tether_lacks_are_refused_by_name(argument: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match=next(iter(argument))):
        SlidingWindowConversationManager(**argument)


def test_sliding_window_keeps_strands_defaults() -> None:
    manager = SlidingWindowConversationManager()
    assert (manager.window_size, manager.should_truncate_results) == (40, True)


def test_summarizing_state_in_snapshots_is_strands_shape() -> None:
    import strands

    theirs = strands.Agent(
        model=strands_fake([]), conversation_manager=strands.agent.SummarizingConversationManager(), callback_handler=None
    ).take_snapshot(preset="session")
    ours = ts.Agent(model=TetherFake([]), conversation_manager=SummarizingConversationManager(), callback_handler=None)
    assert ours.take_snapshot(preset="session").data["conversation_manager_state"] == theirs.data["conversation_manager_state"]


def test_summarizing_uses_the_summarization_agents_model_and_clamps_the_ratio() -> None:
    summarizer = ts.Agent(model=TetherFake([]), callback_handler=None)
    manager = SummarizingConversationManager(summary_ratio=0.95, summarization_agent=summarizer, summarization_system_prompt="Summarize.")
    assert manager.summarization_model is summarizer.model
    assert manager.summary_ratio == 0.8
    assert manager.summary_prompt == "Summarize."
    assert SummarizingConversationManager(summary_ratio=0.01).summary_ratio == 0.1


def test_a_state_written_by_another_manager_is_refused() -> None:
    from tether.errors import SnapshotError

    sliding = ts.Agent(model=TetherFake([]), callback_handler=None)
    summarizing = ts.Agent(model=TetherFake([]), conversation_manager=SummarizingConversationManager(), callback_handler=None)
    with pytest.raises(SnapshotError, match="SlidingWindowConversationManager"):
        summarizing.load_snapshot(sliding.take_snapshot(preset="session"))
