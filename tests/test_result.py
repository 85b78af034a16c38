"""`AgentResult`: stop reason, final message and text, metrics, state, structured output."""

from __future__ import annotations

import pydantic
import pytest

from tether import Agent, AgentResult, Limits, ScriptedModel, tool
from tether.loop.state import new_metrics
from tether.metrics import Metrics
from tether.tools.decorator import FunctionTool

from .conftest import call


def test_fields_and_defaults() -> None:
    result = AgentResult("end_turn", None, Metrics(new_metrics()))
    assert result.state == {}
    assert result.interrupts == []
    assert result.checkpoint is None
    assert result.structured_output is None
    assert result.text == "" and str(result) == ""


def test_str_is_the_text_of_the_final_message_without_other_blocks() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "thinking"}}},
            {"text": "line one"},
            {"toolUse": {"toolUseId": "t", "name": "x", "input": {}}},
            {"text": "line two"},
        ],
    }
    result = AgentResult("end_turn", message, Metrics(new_metrics()))  # type: ignore[arg-type]
    assert str(result) == "line one\nline two"
    assert result.text == str(result)


def test_result_of_a_real_run() -> None:
    agent = Agent(model=ScriptedModel(["The answer."]), state={"k": "v"})
    result = agent("q")
    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "The answer."}]}
    assert result.message is agent.messages[-1]
    assert result.state == {"k": "v"}
    assert result.metrics.cycle_count == 1
    assert result.interrupts == [] and result.checkpoint is None


def test_max_tokens_stop_reason_drops_a_truncated_tool_call(add_tool: FunctionTool) -> None:
    truncated = {
        "role": "assistant",
        "content": [{"text": "partial"}, {"toolUse": {"name": "add", "input": {"a": 1}}}],
        "stopReason": "max_tokens",
    }
    agent = Agent(model=ScriptedModel([truncated]), tools=[add_tool])
    result = agent("q")
    assert result.stop_reason == "max_tokens"
    assert str(result) == "partial"
    assert agent.messages[-1] == {"role": "assistant", "content": [{"text": "partial"}]}


def test_limit_stop_reason_message_is_the_last_assistant_message(add_tool: FunctionTool) -> None:
    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 2})] * 3), tools=[add_tool], limits=Limits(max_cycles=2))
    result = agent("q")
    assert result.stop_reason == "limit_cycles"
    assert result.message is agent.messages[-2]
    assert result.message is not None and result.message["role"] == "assistant"


@pytest.mark.parametrize("reason", ["stop_sequence", "content_filtered", "guardrail_intervened"])
def test_other_provider_stop_reasons_pass_through(reason: str) -> None:
    message = {"role": "assistant", "content": [{"text": "stopped"}], "stopReason": reason}
    result = Agent(model=ScriptedModel([message]))("q")
    assert result.stop_reason == reason


def test_structured_output_is_an_instance_of_the_model() -> None:
    class Answer(pydantic.BaseModel):
        value: int

    @tool
    def noop() -> str:
        return ""

    result = Agent(model=ScriptedModel([call("Answer", {"value": 42})]), tools=[noop])("q", output_model=Answer)
    assert isinstance(result.structured_output, Answer)
    assert result.structured_output.value == 42
