"""The summarizing manager replaces the oldest part of the conversation with a model summary."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether import (
    Agent,
    ConfigurationError,
    ContextWindowExhaustedError,
    ContextWindowOverflowError,
    ScriptedModel,
    SummarizingConversationManager,
    tool,
)
from tether.loop.state import RunState
from tether.types import Message

from ..conftest import call
from .helpers import assert_well_formed, conversation


def test_validation() -> None:
    with pytest.raises(ConfigurationError, match="summary_ratio"):
        SummarizingConversationManager(summary_ratio=0)
    with pytest.raises(ConfigurationError, match="preserve_recent_messages"):
        SummarizingConversationManager(preserve_recent_messages=0)


def test_summarizes_the_oldest_part_with_the_model() -> None:
    summarizer = ScriptedModel(["They talked about q0 and q1."])
    summarizer.record_requests = True
    messages = conversation([0, 1, 0, 0, 0])  # 2 + 4 + 2 + 2 + 2 = 12
    run = RunState(messages=list(messages))
    manager = SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=4)
    asyncio.run(manager.reduce_context(run, summarizer))
    # 30% of 12 → at least index 3; the first assistant message from there is index 3
    assert run.messages[0] == {"role": "user", "content": [{"text": "Summary of the earlier conversation:\nThey talked about q0 and q1."}]}
    assert run.messages[1:] == messages[3:]
    assert_well_formed(run.messages)
    state = manager.state(run)
    assert state["removed_message_count"] == 3
    assert state["summary_message"] == run.messages[0]
    assert json.loads(json.dumps(state)) == state
    request = summarizer.calls[0]
    assert request["tool_specs"] == [] and request["system_prompt"] is None
    assert request["messages"][:-1] == messages[:2]
    # the instruction joins the last summarized user message, so roles alternate
    last = request["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][:-1] == messages[2]["content"]
    assert "Summarize" in last["content"][-1]["text"]


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(min_value=0, max_value=4), min_size=2, max_size=10),
    ratio=st.floats(min_value=0.05, max_value=0.95),
    keep=st.integers(min_value=1, max_value=6),
)
def test_result_is_always_well_formed_or_refused(shape: list[int], ratio: float, keep: int) -> None:
    messages = conversation(shape)
    run = RunState(messages=list(messages))
    manager = SummarizingConversationManager(summary_ratio=ratio, preserve_recent_messages=keep)
    try:
        asyncio.run(manager.reduce_context(run, ScriptedModel(["summary"])))
    except ContextWindowExhaustedError:
        assert run.messages == messages
        return
    assert_well_formed(run.messages)
    assert len(run.messages) < len(messages)
    kept = run.messages[1:]
    assert kept == messages[len(messages) - len(kept) :]
    assert len(kept) >= keep


def test_a_separate_summarization_model_is_used() -> None:
    main = ScriptedModel([])
    summarizer = ScriptedModel(["short"])
    run = RunState(messages=conversation([0, 0, 0, 0]))
    asyncio.run(SummarizingConversationManager(summarization_model=summarizer, preserve_recent_messages=2).reduce_context(run, main))
    assert summarizer.index == 1 and main.index == 0
    assert "short" in run.messages[0]["content"][0]["text"]


def test_summaries_nest() -> None:
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2)
    run = RunState(messages=conversation([0] * 6))
    model = ScriptedModel(["first summary", "second summary"])
    model.record_requests = True
    asyncio.run(manager.reduce_context(run, model))
    asyncio.run(manager.reduce_context(run, model))
    assert "second summary" in run.messages[0]["content"][0]["text"]
    assert "first summary" in model.calls[1]["messages"][0]["content"][0]["text"]
    assert_well_formed(run.messages)


def test_a_second_summary_does_not_count_the_first_as_removed() -> None:
    # removed_message_count counts the original messages gone from the conversation (Strands'
    # session restore lists the stored messages from that offset): an earlier summary that a
    # later summary replaces is not one of them.
    messages = conversation([0] * 6)
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2)
    run = RunState(messages=list(messages))
    model = ScriptedModel(["first summary", "second summary"])
    asyncio.run(manager.reduce_context(run, model))
    assert manager.state(run)["removed_message_count"] == 7
    asyncio.run(manager.reduce_context(run, model))
    kept = run.messages[1:]
    assert kept == messages[len(messages) - len(kept) :]
    assert manager.state(run)["removed_message_count"] == len(messages) - len(kept) == 9
    assert manager.state(run)["summary_message"] == run.messages[0]


def test_refuses_when_everything_is_preserved() -> None:
    run = RunState(messages=conversation([0, 0]))
    with pytest.raises(ContextWindowExhaustedError, match="preserve_recent_messages"):
        asyncio.run(SummarizingConversationManager(preserve_recent_messages=10).reduce_context(run, ScriptedModel(["x"])))


def test_refuses_an_empty_summary() -> None:
    run = RunState(messages=conversation([0, 0, 0, 0]))
    before = list(run.messages)
    with pytest.raises(ContextWindowExhaustedError, match="no text"):
        asyncio.run(SummarizingConversationManager(preserve_recent_messages=2).reduce_context(run, ScriptedModel(["   "])))
    assert run.messages == before


def test_overflow_in_an_agent_summarizes_and_retries() -> None:
    def answer(messages: list[Message]) -> str:
        return f"answer with {len(messages)} messages in context"

    model = ScriptedModel([ContextWindowOverflowError("full"), "the summary", answer])
    agent = Agent(
        model=model,
        messages=conversation([0, 1, 0, 0]),
        conversation_manager=SummarizingConversationManager(preserve_recent_messages=3),
    )
    result = agent("next")
    assert str(result) == f"answer with {len(agent.messages) - 1} messages in context"
    assert agent.messages[0]["content"][0]["text"].endswith("the summary")
    assert_well_formed(agent.messages)


def test_overflow_inside_one_long_tool_turn_is_summarized() -> None:
    @tool(run_in_thread=False)
    def step() -> str:
        return "ok"

    model = ScriptedModel([call("step")] * 6 + [ContextWindowOverflowError("full"), "summary of steps", "done"])
    agent = Agent(model=model, tools=[step], conversation_manager=SummarizingConversationManager(preserve_recent_messages=4))
    assert str(agent("go")) == "done"
    assert_well_formed(agent.messages)
    assert "summary of steps" in agent.messages[0]["content"][0]["text"]
