"""`StreamAccumulator`: folding normalized model stream events into one assistant message."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether import ModelResponseError
from tether._json import is_json
from tether._messages import check_message
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


# -- malformed events: only ModelResponseError ------------------------------------------------

_DROP = object()
anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70), st.floats(), st.text(max_size=4), st.binary(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=3), inner, max_size=2)),
    max_leaves=4,
)
VALID: list[Any] = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "lookup"}}}},
    {"contentBlockStart": {"start": {}}},
    {"contentBlockDelta": {"delta": {"text": "Hi"}}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a": 1}'}}}},
    {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "hm", "signature": "s", "redactedContent": b"\x01"}}}},
    {"contentBlockStop": {}},
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}, "metrics": {"latencyMs": 4}}},
    {"modelState": {"response_id": "r1"}},
]


def damaged(value: Any) -> st.SearchStrategy[Any]:
    """``value`` with any part replaced by anything, or dropped (a key of an object)."""
    if isinstance(value, dict) and value:
        keys = list(value)
        parts = [st.one_of(st.just(value[key]), st.just(_DROP), damaged(value[key])) for key in keys]
        rebuilt = st.tuples(*parts).map(lambda got: {key: part for key, part in zip(keys, got, strict=True) if part is not _DROP})
        return st.one_of(rebuilt, anything)
    return st.one_of(st.just(value), anything)


events = st.lists(st.one_of(st.sampled_from(VALID), st.sampled_from(VALID).flatmap(damaged), anything), max_size=8)


@settings(max_examples=300, deadline=None)
@given(events)
def test_malformed_stream_events_raise_only_model_response_error(stream: list[Any]) -> None:
    """Whatever a model streams, folding it gives a valid message or a ModelResponseError."""
    acc = StreamAccumulator()
    try:
        for event in stream:
            acc.add(event)
        message = acc.message()
    except ModelResponseError:
        return
    check_message(message, ["message"])  # what was accepted is a valid message...
    assert isinstance(acc.stop_reason, str)
    assert all(type(count) is int and count >= 0 for count in acc.usage.values())  # ...with usable figures
    assert isinstance(acc.metrics, dict)
    assert acc.model_state is None or is_json(acc.model_state)


@pytest.mark.parametrize(
    ("event", "match"),
    [
        ({"metadata": {"usage": None}}, r"metadata\.usage must be an object of token counts, got NoneType"),
        ({"metadata": {"usage": {"inputTokens": "many"}}}, r"metadata\.usage\.inputTokens must be a non-negative integer"),
        ({"contentBlockDelta": {"delta": {"text": 5}}}, r"contentBlockDelta\.delta\.text must be a string, got int"),
        ({"contentBlockDelta": {}}, r"contentBlockDelta\.delta must be an object, got NoneType"),
        ({"messageStop": {}}, r"messageStop\.stopReason must be a string, got NoneType"),
        ({"contentBlockStart": {"start": {"toolUse": {"name": "x"}}}}, r"contentBlockStart\.start\.toolUse\.toolUseId must be a string"),
        ({"contentBlockDelta": {"delta": {"toolUse": {"input": {"a": 1}}}}}, r"contentBlockDelta\.delta\.toolUse\.input must be a string"),
        ({"modelState": [1]}, r"modelState must be an object, got list"),
        ("text", r"a model stream event must be an object, got str"),
    ],
)
def test_a_malformed_event_is_a_response_error_naming_the_field(event: Any, match: str) -> None:
    with pytest.raises(ModelResponseError, match=match):
        fold([event]).message()


def test_tool_input_nested_1000_deep_is_a_response_error() -> None:
    acc = fold([tool_start("t1", "deep"), tool_delta("[" * 1_000 + "]" * 1_000), {"contentBlockStop": {}}])
    with pytest.raises(ModelResponseError, match=r"'deep' \(t1\) has invalid JSON input: nested more than 512 levels deep"):
        acc.message()
