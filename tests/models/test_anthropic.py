"""AnthropicModel against the official ``anthropic`` client talking to a local replay server.

The server answers with recorded Messages API wire payloads (SSE streams and error bodies), so
these tests exercise the real SDK's HTTP, SSE parsing and error classes, plus Tether's request
formatting (checked on the JSON the client actually sent) and event mapping.
"""

from __future__ import annotations

from typing import Any

import pytest

from tether.errors import ContextWindowOverflowError, ModelAuthError, ModelThrottledError

from .conftest import ReplayServer, collect, request, require

ADD_SPEC: Any = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {"json": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
}


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require("anthropic", "pip install anthropic")


def make_model(replay: ReplayServer, **kwargs: Any) -> Any:
    from tether.models import AnthropicModel

    return AnthropicModel("claude-sonnet-4-6", api_key="sk-ant-test", base_url=replay.url, client_args={"max_retries": 0}, **kwargs)


async def test_streams_text_with_usage_and_stop_reason(replay: ReplayServer) -> None:
    replay.add_sse("anthropic_text.sse")
    _, acc = await collect(make_model(replay), request([{"role": "user", "content": [{"text": "What is 12 * 34 + 5?"}]}]))
    assert acc.message() == {"role": "assistant", "content": [{"text": "12 * 34 + 5 is 413."}]}
    assert acc.stop_reason == "end_turn"
    assert acc.usage == {"inputTokens": 25, "outputTokens": 12, "totalTokens": 37}
    sent = replay.requests[0]
    assert sent.path == "/v1/messages"
    assert "sk-ant-test" in sent.headers.get("x-api-key", "") + sent.headers.get("authorization", "")
    body = sent.json()
    assert body["stream"] is True and body["model"] == "claude-sonnet-4-6" and body["max_tokens"] == 4096


async def test_streams_thinking_redacted_thinking_text_and_tool_use(replay: ReplayServer) -> None:
    replay.add_sse("anthropic_tool_use.sse")
    req = request([{"role": "user", "content": [{"text": "Add 7 and 5."}]}], tool_specs=[ADD_SPEC])
    _, acc = await collect(make_model(replay), req)
    message = acc.message()
    assert acc.stop_reason == "tool_use"
    reasoning, redacted, text, use = message["content"]
    assert reasoning == {
        "reasoningContent": {
            "reasoningText": {
                "text": "The user wants 7 + 5. I should use the add tool.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            }
        }
    }
    assert redacted["reasoningContent"]["redactedContent"].startswith(b"EmwKAhgBEgy3va3p")
    assert text == {"text": "I'll add those numbers."}
    assert use == {"toolUse": {"toolUseId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "add", "input": {"a": 7, "b": 5}}}
    # Cached input tokens count as input.
    assert acc.usage == {"inputTokens": 472 + 1024, "outputTokens": 89, "totalTokens": 472 + 1024 + 89}
    body = replay.requests[0].json()
    assert body["tools"] == [{"name": "add", "description": "Add two integers.", "input_schema": ADD_SPEC["inputSchema"]["json"]}]


async def test_formats_history_thinking_tool_results_and_cache_points(replay: ReplayServer) -> None:
    model = make_model(replay)
    # Record a real assistant turn (thinking, redacted thinking, text, tool call), then send it back.
    replay.add_sse("anthropic_tool_use.sse")
    _, acc = await collect(model, request([{"role": "user", "content": [{"text": "Add 7 and 5."}]}], tool_specs=[ADD_SPEC]))
    assistant = acc.message()
    messages: list[Any] = [
        {"role": "user", "content": [{"text": "Add 7 and 5."}, {"cachePoint": {"type": "default"}}]},
        assistant,
        {"role": "user", "content": [{"text": "(interrupted)"}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "status": "success", "content": [{"json": 12}]}},
                {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n"}}},
            ],
        },
    ]
    replay.add_sse("anthropic_text.sse")
    system: Any = [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}, {"text": "Today is Monday."}]
    await collect(model, request(messages, system_prompt=system, tool_specs=[ADD_SPEC], tool_choice={"tool": {"name": "add"}}))
    body = replay.requests[-1].json()
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Today is Monday."},
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "add"}
    first_user, sent_assistant, merged_user = body["messages"]
    assert first_user == {"role": "user", "content": [{"type": "text", "text": "Add 7 and 5.", "cache_control": {"type": "ephemeral"}}]}
    assert sent_assistant["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants 7 + 5. I should use the add tool.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    }
    assert sent_assistant["content"][1]["type"] == "redacted_thinking"
    assert sent_assistant["content"][1]["data"].startswith("EmwKAhgBEgy3va3p")
    assert sent_assistant["content"][3] == {
        "type": "tool_use",
        "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "name": "add",
        "input": {"a": 7, "b": 5},
    }
    # Two consecutive user messages are merged, and the tool result comes first in the turn.
    assert merged_user["role"] == "user"
    kinds = [block["type"] for block in merged_user["content"]]
    assert kinds == ["tool_result", "text", "image"]
    assert merged_user["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "content": [{"type": "text", "text": "12"}],
        "is_error": False,
    }
    assert merged_user["content"][2]["source"] == {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}


async def test_rate_limit_is_throttling_with_retry_after(replay: ReplayServer) -> None:
    replay.add_error("anthropic_rate_limit.json")
    with pytest.raises(ModelThrottledError) as info:
        await collect(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))
    assert info.value.retry_after == 7.0


async def test_overloaded_error_event_mid_stream_is_throttling(replay: ReplayServer) -> None:
    replay.add_sse("anthropic_overloaded_midstream.sse")
    with pytest.raises(ModelThrottledError, match="overloaded_error"):
        await collect(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_prompt_too_long_is_context_overflow(replay: ReplayServer) -> None:
    replay.add_error("anthropic_context_overflow.json")
    with pytest.raises(ContextWindowOverflowError, match="prompt is too long"):
        await collect(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_invalid_key_is_auth_error_naming_the_env_var(replay: ReplayServer) -> None:
    replay.add_error("anthropic_auth.json")
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        await collect(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_missing_key_is_auth_error_before_any_request(replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from tether.models import AnthropicModel

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ModelAuthError, match=r"ANTHROPIC_API_KEY.*api_key"):
        await collect(AnthropicModel(base_url=replay.url), request([{"role": "user", "content": [{"text": "hi"}]}]))
    assert replay.requests == []


def test_config_never_includes_the_key(replay: ReplayServer) -> None:
    config = make_model(replay).get_config()
    assert "sk-ant-test" not in repr(config)
    assert config["provider"] == "anthropic" and config["model"] == "claude-sonnet-4-6"


def test_a_budgets_output_cap_lowers_max_tokens_never_raises_it() -> None:
    from tether.models import AnthropicModel

    model = AnthropicModel("claude-sonnet-4-6", api_key="sk-ant-test", max_tokens=1000)
    prompt = [{"role": "user", "content": [{"text": "hi"}]}]
    assert model.format_request(request(prompt, max_tokens=120))["max_tokens"] == 120
    assert model.format_request(request(prompt, max_tokens=5000))["max_tokens"] == 1000
    assert model.format_request(request(prompt))["max_tokens"] == 1000
