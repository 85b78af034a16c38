"""Ported from strands-agents/sdk-python ``tests/strands/agent/test_agent_result.py``: ``AgentResult``.

Upstream passes ``Mock(spec=EventLoopMetrics)`` as ``metrics``; here a plain ``Mock`` (the
metrics class itself is Strands' telemetry internals), and the last tests check the fields of a
result a real invocation returns.

Excluded upstream tests (name — reason):
- test_context_size_delegates_to_metrics, test_context_size_none_when_no_data,
  test_projected_context_size_delegates_to_metrics, test_projected_context_size_none_when_no_data — delegate to
  attributes of the EventLoopMetrics telemetry class (latest_context_size, projected_context_size)
"""

from __future__ import annotations

import unittest.mock
from typing import Any

import pytest
from pydantic import BaseModel

from tether.strands import Agent
from tether.strands.agent import AgentResult
from tether.strands.types.interrupt import Interrupt

from .mocked_model_provider import MockedModelProvider, text


@pytest.fixture
def mock_metrics() -> Any:
    return unittest.mock.Mock()


SIMPLE = {"role": "assistant", "content": [{"text": "Hello world!"}]}
COMPLEX = {
    "role": "assistant",
    "content": [
        {"text": "First paragraph"},
        {"text": "Second paragraph"},
        {"non_text_content": "This should be ignored"},
        {"text": "Third paragraph"},
    ],
}
EMPTY: dict[str, Any] = {"role": "assistant", "content": []}


class StructuredOutputModel(BaseModel):
    name: str
    value: int
    optional_field: str | None = None


def test_same_class_from_both_paths() -> None:
    from tether.strands.agent.agent_result import AgentResult as AgentResultFromModule

    assert AgentResult is AgentResultFromModule


def test__init__(mock_metrics: Any) -> None:
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={"key": "value"})
    assert result.stop_reason == "end_turn"
    assert result.message == SIMPLE
    assert result.metrics is mock_metrics
    assert result.state == {"key": "value"}
    assert result.structured_output is None


def test__str__simple(mock_metrics: Any) -> None:
    assert str(AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={})) == "Hello world!\n"


def test__str__complex(mock_metrics: Any) -> None:
    result = AgentResult(stop_reason="end_turn", message=COMPLEX, metrics=mock_metrics, state={})
    assert str(result) == "First paragraph\nSecond paragraph\nThird paragraph\n"


def test__str__empty(mock_metrics: Any) -> None:
    assert str(AgentResult(stop_reason="end_turn", message=EMPTY, metrics=mock_metrics, state={})) == ""


def test__str__no_content(mock_metrics: Any) -> None:
    result = AgentResult(stop_reason="end_turn", message={"role": "assistant"}, metrics=mock_metrics, state={})  # type: ignore[typeddict-item]
    assert str(result) == ""


def test__str__non_dict_content(mock_metrics: Any) -> None:
    message = {"role": "assistant", "content": [{"text": "Valid text"}, "Not a dictionary", {"text": "More valid text"}]}
    result = AgentResult(stop_reason="end_turn", message=message, metrics=mock_metrics, state={})  # type: ignore[arg-type]
    assert str(result) == "Valid text\nMore valid text\n"


def test_to_dict(mock_metrics: Any) -> None:
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={"key": "value"})
    assert result.to_dict() == {"type": "agent_result", "message": SIMPLE, "stop_reason": "end_turn", "checkpoint": None}


def test_from_dict() -> None:
    data = {
        "type": "agent_result",
        "message": {"role": "assistant", "content": [{"text": "Test response"}]},
        "stop_reason": "end_turn",
    }
    result = AgentResult.from_dict(data)
    assert result.message == data["message"]
    assert result.stop_reason == "end_turn"
    assert result.metrics is not None
    assert result.state == {}
    assert str(result) == "Test response\n"


def test_roundtrip_serialization(mock_metrics: Any) -> None:
    original = AgentResult(stop_reason="max_tokens", message=COMPLEX, metrics=mock_metrics, state={"test": "data"})
    restored = AgentResult.from_dict(original.to_dict())
    assert restored.message == original.message
    assert restored.stop_reason == "max_tokens"
    assert restored.state == {}


def test__init__with_structured_output(mock_metrics: Any) -> None:
    output = StructuredOutputModel(name="test", value=42)
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={"key": "value"}, structured_output=output)
    assert result.structured_output == output
    assert isinstance(result.structured_output, StructuredOutputModel)
    assert result.structured_output.name == "test"
    assert result.structured_output.value == 42


def test__init__structured_output_defaults_to_none(mock_metrics: Any) -> None:
    assert AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={}).structured_output is None


def test__str__with_structured_output(mock_metrics: Any) -> None:
    output = StructuredOutputModel(name="test", value=42)
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={}, structured_output=output)
    assert str(result) == output.model_dump_json()


def test__str__empty_message_with_structured_output(mock_metrics: Any) -> None:
    output = StructuredOutputModel(name="example", value=123, optional_field="optional")
    result = AgentResult(stop_reason="end_turn", message=EMPTY, metrics=mock_metrics, state={}, structured_output=output)
    assert str(result) == output.model_dump_json()


def test__str__with_citations_content(mock_metrics: Any) -> None:
    message = {
        "role": "assistant",
        "content": [
            {
                "citationsContent": {
                    "citations": [
                        {
                            "title": "Source Document",
                            "location": {"document": {"pageNumber": 1}},
                            "sourceContent": [{"text": "source text"}],
                        }
                    ],
                    "content": [{"text": "This is cited text from the document."}],
                }
            }
        ],
    }
    result = AgentResult(stop_reason="end_turn", message=message, metrics=mock_metrics, state={})  # type: ignore[arg-type]
    assert str(result) == "This is cited text from the document.\n"


def test__str__mixed_text_and_citations_content(mock_metrics: Any) -> None:
    message = {
        "role": "assistant",
        "content": [
            {"text": "Introduction paragraph"},
            {
                "citationsContent": {
                    "citations": [{"title": "Doc", "location": {}, "sourceContent": []}],
                    "content": [{"text": "Cited content here."}],
                }
            },
            {"text": "Conclusion paragraph"},
        ],
    }
    result = AgentResult(stop_reason="end_turn", message=message, metrics=mock_metrics, state={})  # type: ignore[arg-type]
    assert str(result) == "Introduction paragraph\nCited content here.\nConclusion paragraph\n"


def test__str__with_interrupts(mock_metrics: Any) -> None:
    interrupts = [
        Interrupt(id="int-1", name="approval", reason="Need user approval"),
        Interrupt(id="int-2", name="input", reason="Need more info"),
    ]
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={}, interrupts=interrupts)
    rendered = str(result)
    for part in ("int-1", "approval", "Need user approval", "int-2", "input", "Need more info"):
        assert part in rendered
    assert result.interrupts == interrupts


def test__str__interrupts_priority_over_structured_output(mock_metrics: Any) -> None:
    result = AgentResult(
        stop_reason="end_turn",
        message=SIMPLE,
        metrics=mock_metrics,
        state={},
        interrupts=[Interrupt(id="int-1", name="approval", reason="Needs approval")],
        structured_output=StructuredOutputModel(name="test", value=42),
    )
    rendered = str(result)
    assert "int-1" in rendered
    assert "approval" in rendered
    assert '"value":42' not in rendered


def test__str__interrupts_priority_over_text_content(mock_metrics: Any) -> None:
    result = AgentResult(
        stop_reason="end_turn",
        message=SIMPLE,
        metrics=mock_metrics,
        state={},
        interrupts=[Interrupt(id="int-1", name="confirm", reason="Please confirm")],
    )
    rendered = str(result)
    assert "int-1" in rendered
    assert "confirm" in rendered
    assert "Hello world!" not in rendered


def test__str__empty_interrupts_returns_agent_message(mock_metrics: Any) -> None:
    result = AgentResult(stop_reason="end_turn", message=SIMPLE, metrics=mock_metrics, state={}, interrupts=[])
    assert str(result) == "Hello world!\n"


# --- a result from a real invocation ------------------------------------------------------


def test_invocation_result_fields() -> None:
    usage = {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}
    agent = Agent(
        model=MockedModelProvider([{**text("First\n"), "usage": usage}]),
        callback_handler=None,
        state={"k": "v"},
    )
    result = agent("hi")

    assert isinstance(result, AgentResult)
    assert result.stop_reason == "end_turn"
    assert result.message["role"] == "assistant"
    assert result.message["content"] == [{"text": "First\n"}]
    assert result.message is agent.messages[-1] or result.message == agent.messages[-1]
    assert result.metrics.accumulated_usage["inputTokens"] == 7
    assert result.metrics.accumulated_usage["outputTokens"] == 3
    assert result.metrics.accumulated_usage["totalTokens"] == 10
    assert result.structured_output is None
    assert not result.interrupts
    assert str(result) == "First\n\n"
    assert result.to_dict() == {"type": "agent_result", "message": result.message, "stop_reason": "end_turn", "checkpoint": None}


def test_invocation_result_max_tokens_stop_reason() -> None:
    from tether.strands.types.exceptions import MaxTokensReachedException

    agent = Agent(model=MockedModelProvider([{**text("cut"), "stopReason": "max_tokens"}]), callback_handler=None)
    with pytest.raises(MaxTokensReachedException):
        agent("hi")
