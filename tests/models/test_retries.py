"""One retry policy, not two: the provider SDKs' own retries are off, the agent's RetryPolicy retries.

Each provider is checked twice: the client object it builds (the SDK setting), and a recorded
throttling reply followed by a success from a loopback replay server, counting the requests
that reached the server (SDK retries would add requests the RetryPolicy does not know of).
"""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, ModelThrottledError, RetryPolicy

from .conftest import ReplayServer, require
from .test_bedrock import MODEL as BEDROCK_MODEL
from .test_bedrock import add_stream

REQUEST: Any = {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "system_prompt": None, "tool_specs": [], "tool_choice": None}
REQUEST["model_state"] = {}
NO_WAIT = RetryPolicy(max_attempts=2, initial_delay=0.0, max_delay=0.0)
ONE_ATTEMPT = RetryPolicy(max_attempts=1)


def _openai(replay: ReplayServer, **kwargs: Any) -> Any:
    from tether.models import OpenAIModel

    return OpenAIModel("gpt-4o", api_key="sk-test-key", base_url=f"{replay.url}/v1", **kwargs)


def _anthropic(replay: ReplayServer, **kwargs: Any) -> Any:
    from tether.models import AnthropicModel

    return AnthropicModel("claude-sonnet-4-6", api_key="sk-ant-test", base_url=replay.url, **kwargs)


def _bedrock(replay: ReplayServer, **kwargs: Any) -> Any:
    import boto3

    from tether.models import BedrockModel

    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="wJalrXUtnFEMI/K7MDENG", region_name="us-west-2")
    return BedrockModel(BEDROCK_MODEL, boto_session=session, endpoint_url=replay.url, **kwargs)


async def _client_of(model: Any) -> Any:
    return model._client()  # built inside a running loop, as a request would


# -- the client objects ------------------------------------------------------------------------


async def test_openai_client_does_not_retry_unless_asked(replay: ReplayServer) -> None:
    require("openai", "pip install openai")
    assert (await _client_of(_openai(replay))).max_retries == 0
    assert (await _client_of(_openai(replay, client_args={"max_retries": 3, "timeout": 5.0}))).max_retries == 3


async def test_anthropic_client_does_not_retry_unless_asked(replay: ReplayServer) -> None:
    require("anthropic", "pip install anthropic")
    assert (await _client_of(_anthropic(replay))).max_retries == 0
    assert (await _client_of(_anthropic(replay, client_args={"max_retries": 4}))).max_retries == 4


def test_bedrock_client_does_not_retry_unless_asked(replay: ReplayServer) -> None:
    require("boto3", "pip install boto3")
    from botocore.config import Config

    assert _bedrock(replay)._client().meta.config.retries == {"total_max_attempts": 1, "mode": "standard"}
    other = _bedrock(replay, client_config=Config(read_timeout=7))._client().meta.config
    assert (other.retries, other.read_timeout) == ({"total_max_attempts": 1, "mode": "standard"}, 7)
    mine = _bedrock(replay, client_config=Config(retries={"total_max_attempts": 3, "mode": "adaptive"}))._client().meta.config
    assert mine.retries == {"total_max_attempts": 3, "mode": "adaptive"}


# -- what reaches the server -------------------------------------------------------------------


def _queue_throttle_then_answer(replay: ReplayServer, provider: str) -> None:
    if provider == "openai":
        replay.add_error("openai_rate_limit.json")
        replay.add(200, OPENAI_TEXT, {"Content-Type": "text/event-stream"})
    elif provider == "anthropic":
        replay.add_error("anthropic_rate_limit.json")
        replay.add_sse("anthropic_text.sse")
    else:
        replay.add_error("bedrock_throttling.json")
        add_stream(replay, "bedrock_text.json")


OPENAI_TEXT = "".join(
    f"data: {chunk}\n\n"
    for chunk in (
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
        '"choices":[{"index":0,"delta":{"role":"assistant","content":"hello"},"finish_reason":null}]}',
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        "[DONE]",
    )
)

MAKERS = {"openai": _openai, "anthropic": _anthropic, "bedrock": _bedrock}
SDKS = {"openai": "openai", "anthropic": "anthropic", "bedrock": "boto3"}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "bedrock"])
async def test_a_throttled_call_is_retried_by_the_retry_policy_alone(replay: ReplayServer, provider: str) -> None:
    require(SDKS[provider], f"pip install {SDKS[provider]}")
    _queue_throttle_then_answer(replay, provider)
    agent = Agent(model=MAKERS[provider](replay), retry=ONE_ATTEMPT)
    with pytest.raises(ModelThrottledError):
        await agent.invoke_async("hi")
    assert len(replay.requests) == 1  # the SDK did not try again behind the policy's back

    replay.requests.clear()
    replay.replies.clear()
    _queue_throttle_then_answer(replay, provider)
    agent = Agent(model=MAKERS[provider](replay), retry=NO_WAIT)
    result = await agent.invoke_async("hi")
    assert len(replay.requests) == 2  # the policy's second attempt, and nothing else
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
async def test_transient_server_errors_are_retryable(replay: ReplayServer, status: int) -> None:
    require("openai", "pip install openai")
    require("anthropic", "pip install anthropic")
    body = '{"error": {"message": "upstream hiccup", "type": "api_error"}}'
    for make in (_openai, _anthropic):
        replay.add(status, body, {"Content-Type": "application/json"})
        with pytest.raises(ModelThrottledError, match=str(status) if make is _openai else "upstream hiccup"):
            async for _ in make(replay).stream(REQUEST):
                pass
