"""`ScriptedModel`: replays strings, messages, callables and exceptions as normalized stream events."""

from __future__ import annotations

from typing import Any

import pytest

from tether import (
    Agent,
    ConfigurationError,
    Model,
    ModelThrottledError,
    RetryPolicy,
    ScriptedModel,
    ScriptExhaustedError,
    TetherError,
)
from tether.loop.stream import StreamAccumulator
from tether.models import tool_call, tool_calls
from tether.types import Message, ModelRequest, StreamEvent


def request(messages: list[Message] | None = None, model_state: dict[str, Any] | None = None) -> ModelRequest:
    return {
        "messages": messages or [{"role": "user", "content": [{"text": "hi"}]}],
        "system_prompt": None,
        "tool_specs": [],
        "tool_choice": None,
        "model_state": model_state or {},
    }


async def events_of(model: ScriptedModel, req: ModelRequest | None = None) -> list[StreamEvent]:
    return [event async for event in model.stream(req or request())]


async def message_of(model: ScriptedModel, req: ModelRequest | None = None) -> tuple[Message, str, dict[str, int]]:
    acc = StreamAccumulator()
    for event in await events_of(model, req):
        acc.add(event)
    return acc.message(), acc.stop_reason, acc.usage


def test_is_a_model() -> None:
    model = ScriptedModel([], model_id="fake")
    assert isinstance(model, Model)
    assert model.model_id == "fake"
    assert model.get_config() == {"provider": "scripted", "responses": 0}


async def test_string_is_a_text_reply_ending_the_turn() -> None:
    events = await events_of(ScriptedModel(["hello"], usage=(3, 4)))
    assert events == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "hello"}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}},
    ]


async def test_message_with_tool_uses() -> None:
    script = [
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "sig"}}},
                {"text": "calling"},
                {"toolUse": {"toolUseId": "a", "name": "f", "input": {"x": [1, {"y": None}]}}},
                {"toolUse": {"name": "g", "input": {}}},
            ],
        }
    ]
    message, stop, usage = await message_of(ScriptedModel(script))
    assert stop == "tool_use"
    assert usage == {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    assert message["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "sig"}}},
        {"text": "calling"},
        {"toolUse": {"toolUseId": "a", "name": "f", "input": {"x": [1, {"y": None}]}}},
        {"toolUse": {"toolUseId": "", "name": "g", "input": {}}},
    ]


async def test_redacted_reasoning_and_explicit_stop_reason() -> None:
    script = [
        {
            "role": "assistant",
            "content": [{"reasoningContent": {"redactedContent": b"\x00\x01"}}, {"text": "cut"}],
            "stopReason": "max_tokens",
        }
    ]
    message, stop, _ = await message_of(ScriptedModel(script))
    assert stop == "max_tokens"
    assert message["content"] == [{"reasoningContent": {"redactedContent": b"\x00\x01"}}, {"text": "cut"}]


async def test_callable_gets_the_messages() -> None:
    seen: list[list[Message]] = []

    def respond(messages: list[Message]) -> Any:
        seen.append(messages)
        return tool_call("f", {"n": len(messages)})

    req = request(
        [
            {"role": "user", "content": [{"text": "a"}]},
            {"role": "assistant", "content": [{"text": "b"}]},
            {"role": "user", "content": [{"text": "c"}]},
        ]
    )
    message, _, _ = await message_of(ScriptedModel([respond]), req)
    assert seen[0] is req["messages"]
    assert message["content"][0]["toolUse"]["input"] == {"n": 3}


async def test_exceptions_in_the_script_are_raised() -> None:
    model = ScriptedModel([ModelThrottledError("slow"), "after"])
    with pytest.raises(ModelThrottledError, match="slow"):
        await events_of(model)
    assert (await message_of(model))[0]["content"] == [{"text": "after"}]


async def test_running_out_is_a_clear_error() -> None:
    model = ScriptedModel(["only"])
    await events_of(model)
    with pytest.raises(ScriptExhaustedError, match=r"call #2 but the script has 1") as info:
        await events_of(model)
    assert isinstance(info.value, TetherError)


def test_running_out_inside_an_agent() -> None:
    agent = Agent(model=ScriptedModel([tool_call("missing")]))
    with pytest.raises(ScriptExhaustedError, match="ran out of responses"):
        agent("go")


@pytest.mark.parametrize("bad", [42, {"role": "assistant"}, ["text"], lambda messages: 3])
async def test_bad_items_are_refused(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="ScriptedModel response must be"):
        await events_of(ScriptedModel([bad]))


async def test_index_lives_on_the_instance_by_default() -> None:
    model = ScriptedModel(["one", "two"])
    await events_of(model)
    assert model.index == 1
    assert (await message_of(model))[0]["content"] == [{"text": "two"}]


async def test_stateful_index_lives_in_model_state() -> None:
    model = ScriptedModel(["one", "two", "three"], stateful=True)
    events = await events_of(model, request(model_state={"scripted_index": 1}))
    assert events[0] == {"modelState": {"scripted_index": 2}}
    assert events[2] == {"contentBlockDelta": {"delta": {"text": "two"}}}


def test_stateful_script_continues_across_agents() -> None:
    first = Agent(model=ScriptedModel(["one", "two"], stateful=True))
    first("a")
    assert first.run_state.model_state == {"scripted_index": 1}
    second = Agent(model=ScriptedModel(["one", "two"], stateful=True))
    second.run_state.model_state = dict(first.run_state.model_state)
    assert str(second("b")) == "two"


async def test_requests_are_recorded_as_they_were() -> None:
    model = ScriptedModel(["a", "b"])
    model.record_requests = True
    messages: list[Message] = [{"role": "user", "content": [{"text": "x"}]}]
    await events_of(model, request(messages))
    messages.append({"role": "assistant", "content": [{"text": "a"}]})
    assert len(model.calls[0]["messages"]) == 1
    assert model.calls[0]["tool_specs"] == []
    unrecorded = ScriptedModel(["a"])
    await events_of(unrecorded)
    assert unrecorded.calls == []


def test_helpers() -> None:
    assert tool_call("f") == {"role": "assistant", "content": [{"toolUse": {"name": "f", "input": {}}}]}
    assert tool_call("f", {"x": 1}, tool_use_id="id", text="t") == {
        "role": "assistant",
        "content": [{"text": "t"}, {"toolUse": {"name": "f", "input": {"x": 1}, "toolUseId": "id"}}],
    }
    assert tool_calls([("a", {}), ("b", {"y": 2})])["content"][1] == {"toolUse": {"name": "b", "input": {"y": 2}}}


def test_throttling_script_through_an_agent_with_tiny_backoff() -> None:
    model = ScriptedModel([ModelThrottledError(), "ok"])
    agent = Agent(model=model, retry=RetryPolicy(initial_delay=0.0005, max_delay=0.001))
    assert str(agent("x")) == "ok"
