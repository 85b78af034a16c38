"""`AgentResult`: stop reason, final message and text, metrics, state, structured output."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from tether import Agent, AgentResult, CheckpointError, Limits, ResultError, ScriptedModel, tool
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


# -- to_dict / from_dict (Strands' serialized shape) ----------------------------------------


class Weather(pydantic.BaseModel):
    city: str
    high_c: float


def test_to_dict_is_json_in_strands_shape_and_round_trips() -> None:
    message = {
        "role": "assistant",
        "content": [{"text": "done"}, {"reasoningContent": {"redactedContent": b"\x00\xffsecret"}}],
    }
    totals = new_metrics()
    totals["cycle_count"] = 2
    result = AgentResult(
        "end_turn",
        message,  # type: ignore[arg-type]
        Metrics(totals, new_metrics()),
        state={"k": [1, None]},
        structured_output=Weather(city="Lyon", high_c=21.5),
    )
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert data["type"] == "agent_result" and data["stop_reason"] == "end_turn" and data["checkpoint"] is None
    redacted = data["message"]["content"][1]["reasoningContent"]["redactedContent"]
    assert redacted == {"__bytes_encoded__": True, "data": "AP9zZWNyZXQ="}, "bytes as Strands encodes them"
    again = AgentResult.from_dict(json.loads(text))
    assert again.message == message
    assert again.state == {"k": [1, None]}
    assert again.structured_output == {"city": "Lyon", "high_c": 21.5}
    assert again.metrics.cycle_count == 2 and again.metrics.invocation.cycle_count == 0
    assert again.to_dict() == data


def test_interrupts_survive_the_round_trip() -> None:
    from tether.interrupts import Interrupt

    interrupt = Interrupt("int_1", "approve", {"amount": 5}, "hook", "tu_1")
    result = AgentResult("interrupt", None, Metrics(new_metrics()), interrupts=[interrupt])
    again = AgentResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.interrupts == [interrupt] and again.message is None


def test_a_strands_minimal_dict_reads_with_defaults() -> None:
    data = {
        "type": "agent_result",
        "message": {"role": "assistant", "content": [{"text": "hi"}]},
        "stop_reason": "end_turn",
        "checkpoint": None,
    }
    result = AgentResult.from_dict(data)
    assert result.text == "hi" and result.state == {} and result.interrupts == [] and result.metrics.cycle_count == 0


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"type": "other"}, "unexpected type 'other'"),
        ([], "unexpected type 'list'"),
        ({"type": "agent_result", "stop_reason": 3}, "result.stop_reason must be a string"),
        ({"type": "agent_result", "stop_reason": "x", "message": {"role": "robot", "content": []}}, r"result\.message\[0\]\.role"),
        ({"type": "agent_result", "stop_reason": "x", "state": [1]}, r"result\.state: must be an object"),
        ({"type": "agent_result", "stop_reason": "x", "interrupts": [{"name": "n"}]}, r"result\.interrupts"),
        ({"type": "agent_result", "stop_reason": "x", "metrics": {"cycle_count": -1}}, r"result\.metrics\.cycle_count"),
        (
            {"type": "agent_result", "stop_reason": "x", "message": {"role": "user", "content": [{"text": "a"}], "x": 1}},
            "unexpected key in a message",
        ),
    ],
)
def test_bad_dicts_are_result_errors_and_type_errors(data: Any, match: str) -> None:
    with pytest.raises(ResultError, match=match) as info:
        AgentResult.from_dict(data)
    assert isinstance(info.value, TypeError)


def test_a_bad_checkpoint_inside_is_a_checkpoint_error() -> None:
    with pytest.raises(CheckpointError, match=r"checkpoint\.position"):
        AgentResult.from_dict(
            {"type": "agent_result", "stop_reason": "checkpoint", "checkpoint": {"schema_version": "1.0", "position": "x"}}
        )
