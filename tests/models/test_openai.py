"""OpenAIModel: the official ``openai`` client against real HTTP servers on loopback.

Two kinds of server, and what each proves:

* ``llama_server``: a real OpenAI-compatible server (llama.cpp's, serving SmolLM2-135M). It
  proves that the requests OpenAIModel builds (streaming flags, tools, a forced tool choice,
  ``role: "tool"`` result messages after an assistant ``tool_calls`` message) are accepted by a
  real implementation, and that its real streamed text and tool-call chunks fold into valid
  Tether messages. It does not send usage while streaming, so usage is checked on the replay.
* ``replay``: recorded OpenAI wire payloads (a parallel tool-call SSE stream with a usage chunk,
  and 429/400/401 error bodies), proving the mapping of OpenAI's own chunk layout and errors.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from tether.errors import ContextWindowOverflowError, ModelAuthError, ModelError, ModelThrottledError

from .conftest import ReplayServer, fold, request, require

ADD_SPEC: Any = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {"json": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
}
CALC_SPEC: Any = {
    "name": "calculator",
    "description": "Evaluate an arithmetic expression.",
    "inputSchema": {"json": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}},
}


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require("openai", "pip install openai")


def replay_model(replay: ReplayServer) -> Any:
    from tether.models import OpenAIModel

    return OpenAIModel("gpt-4o", api_key="sk-test-key", base_url=f"{replay.url}/v1", client_args={"max_retries": 0})


# -- a real OpenAI-compatible server -------------------------------------------------------


async def test_text_round_trip_with_real_server(llama_server: str) -> None:
    from tether.models import OpenAIModel

    model = OpenAIModel("smollm2", base_url=llama_server, params={"max_tokens": 12, "temperature": 0})
    acc = await fold(model, request([{"role": "user", "content": [{"text": "Say hello."}]}], system_prompt=[{"text": "Be brief."}]))
    message = acc.message()
    assert message["role"] == "assistant"
    assert [list(block) for block in message["content"]] == [["text"]]
    assert message["content"][0]["text"].strip()
    assert acc.stop_reason in ("end_turn", "max_tokens")


async def test_forced_tool_call_and_tool_result_with_real_server(llama_server: str) -> None:
    from tether.models import OpenAIModel

    model = OpenAIModel("smollm2", base_url=llama_server, params={"max_tokens": 48, "temperature": 0})
    prompt: Any = {"role": "user", "content": [{"text": "Add 7 and 5."}]}
    # The server constrains generation to the forced function's schema.
    first = await fold(model, request([prompt], tool_specs=[CALC_SPEC, ADD_SPEC], tool_choice={"tool": {"name": "add"}}))
    assistant = first.message()
    assert first.stop_reason == "tool_use"
    (block,) = assistant["content"]
    use = block["toolUse"]
    assert use["name"] == "add" and use["toolUseId"]
    assert set(use["input"]) == {"a", "b"} and all(isinstance(v, int) for v in use["input"].values())
    # The tool result goes back as a role "tool" message; the server must accept it and answer.
    result: Any = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": use["toolUseId"], "status": "success", "content": [{"json": 12}]}}],
    }
    second = await fold(model, request([prompt, assistant, result], tool_specs=[CALC_SPEC, ADD_SPEC]))
    message = second.message()
    assert message["content"] and all("text" in b or "toolUse" in b for b in message["content"])


# -- recorded OpenAI payloads ----------------------------------------------------------------


async def test_streamed_parallel_tool_calls_and_usage(replay: ReplayServer) -> None:
    replay.add_sse("openai_tool_calls.sse")
    req = request([{"role": "user", "content": [{"text": "Add 7 and 5, and compute 12 * 34 + 5."}]}], tool_specs=[ADD_SPEC, CALC_SPEC])
    acc = await fold(replay_model(replay), req)
    assert acc.message()["content"] == [
        {"toolUse": {"toolUseId": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "name": "add", "input": {"a": 7, "b": 5}}},
        {"toolUse": {"toolUseId": "call_ABSgN2sIbvgSp4fLTzw3tKOb", "name": "calculator", "input": {"expression": "12 * 34 + 5"}}},
    ]
    assert acc.stop_reason == "tool_use"
    assert acc.usage == {"inputTokens": 112, "outputTokens": 48, "totalTokens": 160}
    sent = replay.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test-key"
    body = sent.json()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tools"][0] == {
        "type": "function",
        "function": {"name": "add", "description": "Add two integers.", "parameters": ADD_SPEC["inputSchema"]["json"]},
    }
    assert "tool_choice" not in body


async def test_request_formatting_merges_roles_and_maps_tool_results_and_images(replay: ReplayServer) -> None:
    replay.add_sse("openai_tool_calls.sse")
    messages: Any = [
        {"role": "user", "content": [{"text": "Add 7 and 5."}, {"cachePoint": {"type": "default"}}]},
        {"role": "user", "content": [{"text": "Then show me."}]},
        {
            "role": "assistant",
            "content": [{"text": "Adding."}, {"toolUse": {"toolUseId": "call_1", "name": "add", "input": {"a": 7, "b": 5}}}],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "call_1", "status": "success", "content": [{"json": {"sum": 12}}, {"text": "ok"}]}},
                {"text": "Here is a picture."},
                {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n"}}},
            ],
        },
    ]
    system: Any = [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}, {"text": "Use tools."}]
    await fold(replay_model(replay), request(messages, system_prompt=system, tool_specs=[ADD_SPEC], tool_choice={"any": {}}))
    body = replay.requests[0].json()
    assert body["tool_choice"] == "required"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse.\nUse tools."},
        {"role": "user", "content": [{"type": "text", "text": "Add 7 and 5."}, {"type": "text", "text": "Then show me."}]},
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": json.dumps({"a": 7, "b": 5})}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sum": 12}\nok'},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is a picture."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
            ],
        },
    ]


async def test_forced_named_tool_choice_is_formatted(replay: ReplayServer) -> None:
    replay.add_sse("openai_tool_calls.sse")
    await fold(
        replay_model(replay),
        request([{"role": "user", "content": [{"text": "x"}]}], tool_specs=[ADD_SPEC], tool_choice={"tool": {"name": "add"}}),
    )
    assert replay.requests[0].json()["tool_choice"] == {"type": "function", "function": {"name": "add"}}


async def test_rate_limit_is_throttling_with_retry_after(replay: ReplayServer) -> None:
    replay.add_error("openai_rate_limit.json")
    with pytest.raises(ModelThrottledError) as info:
        await fold(replay_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))
    assert info.value.retry_after == 2.0


async def test_context_length_exceeded_is_overflow(replay: ReplayServer) -> None:
    replay.add_error("openai_context_overflow.json")
    with pytest.raises(ContextWindowOverflowError, match="maximum context length"):
        await fold(replay_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_invalid_key_is_auth_error_naming_the_env_var(replay: ReplayServer) -> None:
    replay.add_error("openai_auth.json")
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        await fold(replay_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_missing_key_is_auth_error_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from tether.models import OpenAIModel

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match=r"OPENAI_API_KEY.*api_key"):
        await fold(OpenAIModel("gpt-4o"), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_an_unreachable_server_is_named_in_the_error() -> None:
    from tether.models import OpenAIModel

    with socket.socket() as probe:  # a loopback port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ModelError, match=rf"cannot reach http://127\.0\.0\.1:{port}/v1/chat/completions \(APIConnectionError"):
        await fold(model, request([{"role": "user", "content": [{"text": "hi"}]}]))


def test_config_never_includes_the_key(replay: ReplayServer) -> None:
    config = replay_model(replay).get_config()
    assert "sk-test-key" not in json.dumps(config)
    assert config == {"provider": "openai", "model": "gpt-4o", "params": {}, "base_url": f"{replay.url}/v1"}


async def test_stopping_early_closes_the_stream(replay: ReplayServer) -> None:
    replay.add_sse("openai_tool_calls.sse")
    stream = replay_model(replay).stream(request([{"role": "user", "content": [{"text": "hi"}]}]))
    first = await stream.__anext__()
    assert first == {"messageStart": {"role": "assistant"}}
    await stream.aclose()  # what the driver does on cancellation; must not raise or leak


def test_a_budgets_output_cap_is_sent_under_the_servers_name_for_it() -> None:
    from tether.models import OpenAIModel

    prompt = [{"role": "user", "content": [{"text": "hi"}]}]
    openai = OpenAIModel("gpt-4o", api_key="sk-test-key")
    sent = openai.format_request(request(prompt, max_tokens=64))
    assert sent["max_completion_tokens"] == 64 and "max_tokens" not in sent
    compatible = OpenAIModel("smollm2", base_url="http://127.0.0.1:1/v1", params={"max_tokens": 32})
    assert compatible.format_request(request(prompt, max_tokens=64))["max_tokens"] == 32  # the smaller cap
    assert OpenAIModel("smollm2", base_url="http://127.0.0.1:1/v1").format_request(request(prompt, max_tokens=64))["max_tokens"] == 64
    assert "max_completion_tokens" not in openai.format_request(request(prompt))
