"""BedrockModel against the real ``boto3`` client talking to a local endpoint.

The replay server speaks the ``application/vnd.amazon.eventstream`` binary encoding, built here
from recorded ConverseStream events (``fixtures/bedrock_*.json``), and answers errors the way
Bedrock does (``x-amzn-ErrorType`` header + JSON body). So botocore's real signing, HTTP, event
stream parsing and error classes run; Tether's request formatting is checked on what was sent.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import pytest

from tether.errors import ContextWindowOverflowError, ModelAuthError, ModelResponseError, ModelThrottledError

from .conftest import ReplayServer, fixture_json, fold, request, require

ADD_SPEC: Any = {
    "name": "add",
    "description": "Add two integers.",
    "inputSchema": {"json": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
}
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require("boto3", "pip install boto3")


def _message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude, prelude CRC, string headers, payload, message CRC."""
    encoded = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        encoded += bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event_stream(fixture: str) -> bytes:
    return encode_events(fixture_json(fixture)["events"])


def encode_events(events: list[dict[str, Any]]) -> bytes:
    out = b""
    for item in events:
        payload = json.dumps(item["payload"]).encode()
        if "exception" in item:
            headers = {":exception-type": item["exception"], ":content-type": "application/json", ":message-type": "exception"}
        else:
            headers = {":event-type": item["event"], ":content-type": "application/json", ":message-type": "event"}
        out += _message(headers, payload)
    return out


def add_stream(replay: ReplayServer, fixture: str) -> None:
    replay.add(200, event_stream(fixture), {"Content-Type": "application/vnd.amazon.eventstream", "x-amzn-RequestId": "8c1f7a6e-0d2b"})


def make_model(replay: ReplayServer, **kwargs: Any) -> Any:
    import boto3
    from botocore.config import Config

    from tether.models import BedrockModel

    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="wJalrXUtnFEMI/K7MDENG", region_name="us-west-2")
    config = Config(retries={"total_max_attempts": 1})
    return BedrockModel(MODEL, boto_session=session, endpoint_url=replay.url, client_config=config, **kwargs)


async def test_streams_text_usage_and_metrics(replay: ReplayServer) -> None:
    add_stream(replay, "bedrock_text.json")
    model = make_model(replay, inference_config={"maxTokens": 256, "temperature": 0})
    acc = await fold(model, request([{"role": "user", "content": [{"text": "What is 12 * 34 + 5?"}]}]))
    assert acc.message() == {"role": "assistant", "content": [{"text": "12 * 34 + 5 is 413."}]}
    assert acc.stop_reason == "end_turn"
    assert acc.usage == {"inputTokens": 21, "outputTokens": 12, "totalTokens": 33}
    assert acc.metrics == {"latencyMs": 412}
    sent = replay.requests[0]
    assert sent.path == f"/model/{MODEL.replace(':', '%3A')}/converse-stream"
    assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    body = sent.json()
    assert body["messages"] == [{"role": "user", "content": [{"text": "What is 12 * 34 + 5?"}]}]
    assert body["inferenceConfig"] == {"maxTokens": 256, "temperature": 0}


@pytest.mark.parametrize(
    ("event", "payload", "match"),
    [
        ("metadata", {"usage": {"inputTokens": "many", "outputTokens": 1, "totalTokens": 1}}, r"malformed metadata event"),
        ("contentBlockDelta", {"contentBlockIndex": 0}, r"malformed contentBlockDelta event"),
        ("contentBlockStart", {"start": {"toolUse": {"name": "add"}}, "contentBlockIndex": 0}, r"malformed contentBlockStart"),
        ("contentBlockDelta", {"delta": {"text": 5}, "contentBlockIndex": 0}, r"contentBlockDelta\.delta\.text must be a string"),
    ],
)
async def test_a_malformed_bedrock_event_is_a_response_error(replay: ReplayServer, event: str, payload: Any, match: str) -> None:
    """A ConverseStream event missing a field or holding the wrong type is a ModelResponseError."""
    stream = encode_events([{"event": "messageStart", "payload": {"role": "assistant"}}, {"event": event, "payload": payload}])
    replay.add(200, stream, {"Content-Type": "application/vnd.amazon.eventstream", "x-amzn-RequestId": "8c1f7a6e-0d2b"})
    with pytest.raises(ModelResponseError, match=match):
        (await fold(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))).message()


async def test_streams_reasoning_redacted_reasoning_and_tool_use(replay: ReplayServer) -> None:
    add_stream(replay, "bedrock_tool_use.json")
    acc = await fold(make_model(replay), request([{"role": "user", "content": [{"text": "Add 7 and 5."}]}], tool_specs=[ADD_SPEC]))
    reasoning, redacted, text, use = acc.message()["content"]
    assert reasoning == {
        "reasoningContent": {
            "reasoningText": {
                "text": "The user wants 7 + 5; use add.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
            }
        }
    }
    assert redacted == {"reasoningContent": {"redactedContent": b"\x0e\x8c\x01\x0a\x02\x18\x01redacted-thinking-ciphertext"}}
    assert text == {"text": "I'll add those."}
    assert use == {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "add", "input": {"a": 7, "b": 5}}}
    assert acc.stop_reason == "tool_use"
    assert acc.usage == {"inputTokens": 380 + 1024, "outputTokens": 74, "totalTokens": 380 + 1024 + 74}
    body = replay.requests[0].json()
    assert body["toolConfig"] == {"tools": [{"toolSpec": ADD_SPEC}]}


async def test_formats_history_with_tool_results_bytes_and_cache_points(replay: ReplayServer) -> None:
    add_stream(replay, "bedrock_text.json")
    messages: Any = [
        {"role": "user", "content": [{"text": "Add 7 and 5."}]},
        {"role": "user", "content": [{"text": "Quickly."}, {"cachePoint": {"type": "default"}}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"redactedContent": {"$b64": base64.b64encode(b"secret").decode()}}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "add", "input": {"a": 7, "b": 5}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "status": "error", "content": [{"json": {"error": "overflow"}}]}},
                {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n"}}},
            ],
        },
    ]
    system: Any = [{"text": "Be terse."}, {"cachePoint": {"type": "default"}}]
    await fold(make_model(replay), request(messages, system_prompt=system, tool_specs=[ADD_SPEC], tool_choice={"any": {}}))
    body = replay.requests[0].json()
    assert body["system"] == [{"text": "Be terse."}, {"cachePoint": {"type": "default"}}]
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "Add 7 and 5."}, {"text": "Quickly."}, {"cachePoint": {"type": "default"}}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"redactedContent": base64.b64encode(b"secret").decode()}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "add", "input": {"a": 7, "b": 5}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "status": "error", "content": [{"json": {"error": "overflow"}}]}},
                {"image": {"format": "png", "source": {"bytes": "iVBORw0K"}}},
            ],
        },
    ]


async def test_throttling_response_is_throttling(replay: ReplayServer) -> None:
    replay.add_error("bedrock_throttling.json")
    with pytest.raises(ModelThrottledError, match="ThrottlingException"):
        await fold(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_throttling_exception_event_mid_stream_is_throttling(replay: ReplayServer) -> None:
    add_stream(replay, "bedrock_throttling_midstream.json")
    with pytest.raises(ModelThrottledError, match="throttlingException"):
        await fold(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_input_too_long_is_context_overflow(replay: ReplayServer) -> None:
    replay.add_error("bedrock_context_overflow.json")
    with pytest.raises(ContextWindowOverflowError, match="Input is too long"):
        await fold(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_invalid_credentials_are_auth_error_naming_what_to_set(replay: ReplayServer) -> None:
    replay.add_error("bedrock_auth.json")
    with pytest.raises(ModelAuthError, match="AWS_ACCESS_KEY_ID"):
        await fold(make_model(replay), request([{"role": "user", "content": [{"text": "hi"}]}]))


async def test_missing_credentials_are_auth_error(replay: ReplayServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from tether.models import BedrockModel

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    model = BedrockModel(MODEL, region_name="us-west-2", endpoint_url=replay.url)
    with pytest.raises(ModelAuthError, match="AWS_ACCESS_KEY_ID"):
        await fold(model, request([{"role": "user", "content": [{"text": "hi"}]}]))
    assert replay.requests == []


def test_config_never_includes_credentials(replay: ReplayServer) -> None:
    config = make_model(replay).get_config()
    assert "AKIDEXAMPLE" not in json.dumps(config) and "wJalr" not in json.dumps(config)
    assert config["provider"] == "bedrock" and config["model"] == MODEL


def test_a_budgets_output_cap_goes_into_the_inference_config(replay: ReplayServer) -> None:
    prompt = [{"role": "user", "content": [{"text": "hi"}]}]
    model = make_model(replay, inference_config={"maxTokens": 500, "temperature": 0.1})
    assert model.format_request(request(prompt, max_tokens=80))["inferenceConfig"] == {"maxTokens": 80, "temperature": 0.1}
    assert make_model(replay).format_request(request(prompt, max_tokens=80))["inferenceConfig"] == {"maxTokens": 80}
