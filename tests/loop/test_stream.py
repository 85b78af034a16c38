"""`StreamAccumulator`: folding normalized model stream events into one assistant message."""

from __future__ import annotations

from typing import Any

import pytest

from tether import ModelResponseError
from tether.loop.stream import StreamAccumulator
from tether.types import StreamEvent


def fold(events: list[Any]) -> StreamAccumulator:
    acc = StreamAccumulator()
    for event in events:
        acc.add(event)
    return acc


def tool_start(tool_use_id: str, name: str) -> StreamEvent:
    return {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}


def tool_delta(chunk: str) -> StreamEvent:
    return {"contentBlockDelta": {"delta": {"toolUse": {"input": chunk}}}}


def test_text_deltas_are_joined_per_block() -> None:
    acc = fold(
        [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"delta": {"text": "Hel"}}},
            {"contentBlockDelta": {"delta": {"text": "lo"}}},
            {"contentBlockStop": {}},
            {"contentBlockDelta": {"delta": {"text": "second"}}},
            {"messageStop": {"stopReason": "end_turn"}},
        ]
    )
    assert acc.message() == {"role": "assistant", "content": [{"text": "Hello"}, {"text": "second"}]}
    assert acc.stop_reason == "end_turn"


def test_defaults() -> None:
    acc = StreamAccumulator()
    assert acc.message() == {"role": "assistant", "content": []}
    assert acc.stop_reason == "end_turn" and acc.usage == {} and acc.model_state is None


def test_tool_input_is_streamed_json() -> None:
    acc = fold(
        [
            {"contentBlockDelta": {"delta": {"text": "Let me check."}}},
            tool_start("t1", "lookup"),
            tool_delta('{"city": "Os'),
            tool_delta('lo", "days": 3}'),
            {"contentBlockStop": {}},
            tool_start("t2", "noargs"),
            {"contentBlockStop": {}},
            {"messageStop": {"stopReason": "tool_use"}},
        ]
    )
    assert acc.message()["content"] == [
        {"text": "Let me check."},
        {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"city": "Oslo", "days": 3}}},
        {"toolUse": {"toolUseId": "t2", "name": "noargs", "input": {}}},
    ]
    assert acc.stop_reason == "tool_use"


def test_invalid_tool_json_is_an_error_naming_the_call() -> None:
    acc = fold([tool_start("t9", "broken"), tool_delta('{"a": '), {"contentBlockStop": {}}, {"messageStop": {"stopReason": "tool_use"}}])
    with pytest.raises(ModelResponseError, match=r"'broken' \(t9\) has invalid JSON"):
        acc.message()


def test_invalid_tool_json_is_dropped_when_truncated_by_max_tokens() -> None:
    acc = fold(
        [
            {"contentBlockDelta": {"delta": {"text": "partial"}}},
            {"contentBlockStop": {}},
            tool_start("t9", "cut"),
            tool_delta('{"a": '),
            {"messageStop": {"stopReason": "max_tokens"}},
        ]
    )
    assert acc.message()["content"] == [{"text": "partial"}]
    assert acc.stop_reason == "max_tokens"


def test_reasoning_with_signature_and_redacted_content() -> None:
    acc = fold(
        [
            {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "think "}}}},
            {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "hard"}}}},
            {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "sig"}}}},
            {"contentBlockStop": {}},
            {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"\x01"}}}},
            {"contentBlockStop": {}},
            {"contentBlockDelta": {"delta": {"text": "answer"}}},
        ]
    )
    assert acc.message()["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "think hard", "signature": "sig"}}},
        {"reasoningContent": {"redactedContent": b"\x01"}},
        {"text": "answer"},
    ]


def test_metadata_and_model_state() -> None:
    acc = fold(
        [
            {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}, "metrics": {"latencyMs": 40}}},
            {"modelState": {"response_id": "r1"}},
        ]
    )
    assert acc.usage == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    assert acc.metrics == {"latencyMs": 40}
    assert acc.model_state == {"response_id": "r1"}


def test_message_is_idempotent() -> None:
    acc = fold([{"contentBlockDelta": {"delta": {"text": "x"}}}])
    assert acc.message() == acc.message() == {"role": "assistant", "content": [{"text": "x"}]}
