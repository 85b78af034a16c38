"""Strands' provider constructors on Tether's providers: signatures, config mapping, defaults.

Requests go to the real SDKs talking to the loopback replay server of ``tests/models`` (so the
request Tether's provider sends for a Strands config is checked on the wire), and the defaults
are compared with the real strands-agents package where it has them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tether
from tether.errors import ConfigurationError, ModelThrottledError
from tether.strands.models import AnthropicModel, BedrockModel, LlamaCppModel, OpenAIModel
from tether.strands.models import Model as FacadeModel
from tether.strands.models._adapt import to_tether_model
from tether.strands.models.bedrock import DEFAULT_BEDROCK_MODEL_ID

from ..models.conftest import ReplayServer, require
from ..models.test_bedrock import add_stream

SRC = Path(tether.__file__).resolve().parent.parent
PROMPT: Any = [{"role": "user", "content": [{"text": "What is 12 * 34 + 5?"}]}]


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    """The replay server of ``tests/models`` (its fixture lives in that package's conftest)."""
    replay = ReplayServer()
    replay.start()
    yield replay
    replay.stop()


def request(**overrides: Any) -> Any:
    return {"messages": PROMPT, "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": {}, **overrides}


def test_constructing_every_provider_and_the_default_imports_no_sdk_nor_strands() -> None:
    code = """
import sys
from tether.strands.models import AnthropicModel, BedrockModel, LlamaCppModel, OpenAIModel
from tether.strands.models._adapt import to_tether_model
BedrockModel(model_id="m", max_tokens=5, region_name="eu-west-1")
OpenAIModel(client_args={"api_key": "k"}, model_id="gpt-4o", params={"temperature": 0})
AnthropicModel(client_args={"api_key": "k"}, model_id="claude-sonnet-4-6", max_tokens=10)
LlamaCppModel(base_url="http://127.0.0.1:1", timeout=(1.0, 2.0), params={"top_k": 3})
to_tether_model(None), to_tether_model("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
heavy = ("strands", "boto3", "botocore", "openai", "anthropic", "llama_cpp", "httpx")
print(sorted(name for name in sys.modules if name.split(".")[0] in heavy))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(SRC)}, check=True)
    assert out.stdout.strip() == "[]"


# -- to_tether_model -----------------------------------------------------------------------


def test_no_model_is_strands_default_bedrock_model() -> None:
    strands_bedrock = pytest.importorskip("strands.models.bedrock")
    for given in (None, ""):
        model = to_tether_model(given)
        assert isinstance(model, BedrockModel)
        assert model.get_config()["model_id"] == DEFAULT_BEDROCK_MODEL_ID == strands_bedrock.DEFAULT_BEDROCK_MODEL_ID


@pytest.mark.parametrize(
    "model_id",
    [
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "openai.gpt-oss-120b-1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/x",
    ],
)
def test_a_bare_string_is_a_bedrock_model_id_as_in_strands(model_id: str) -> None:
    model = to_tether_model(model_id)
    assert isinstance(model, BedrockModel) and model.get_config()["model_id"] == model_id
    assert model.format_request(request())["modelId"] == model_id


def test_tethers_own_model_strings_keep_their_meaning() -> None:
    from tether.models.anthropic import AnthropicModel as TetherAnthropic
    from tether.models.openai import OpenAIModel as TetherOpenAI

    assert isinstance(to_tether_model("openai:gpt-4o"), TetherOpenAI)
    model = to_tether_model("openai-compatible:http://127.0.0.1:8080/v1:llama3")
    assert isinstance(model, TetherOpenAI) and model.base_url == "http://127.0.0.1:8080/v1"
    assert isinstance(to_tether_model("anthropic:claude-sonnet-4-6"), TetherAnthropic)


def test_providers_pass_as_they_are_and_are_strands_models() -> None:
    for model in (BedrockModel(), OpenAIModel(model_id="m"), AnthropicModel(model_id="m", max_tokens=1), LlamaCppModel()):
        assert to_tether_model(model) is model
        assert isinstance(model, FacadeModel) and isinstance(model, tether.models.Model)


def test_anything_else_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"model must be a Model .* got int"):
        to_tether_model(42)


# -- BedrockModel --------------------------------------------------------------------------


def test_bedrock_config_maps_onto_the_converse_request_and_update_config_changes_it() -> None:
    model = BedrockModel(
        model_id="anthropic.claude-x",
        max_tokens=100,
        temperature=0.3,
        top_p=0.9,
        stop_sequences=["END"],
        additional_request_fields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
        additional_args={"performanceConfig": {"latency": "optimized"}},
        service_tier="flex",
        streaming=False,
        context_window_limit=1000,
    )
    body = model.format_request(request())
    assert body["modelId"] == "anthropic.claude-x"
    assert body["inferenceConfig"] == {"maxTokens": 100, "temperature": 0.3, "topP": 0.9, "stopSequences": ["END"]}
    assert body["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert body["performanceConfig"] == {"latency": "optimized"} and body["serviceTier"] == {"type": "flex"}
    assert model.get_config()["include_tool_result_status"] == "auto"
    assert model.context_window_limit == 1000
    model.update_config(temperature=None, max_tokens=5, model_id="other")
    body = model.format_request(request())
    assert body["modelId"] == "other" and body["inferenceConfig"] == {"maxTokens": 5, "topP": 0.9, "stopSequences": ["END"]}
    assert model.model_id == "bedrock:other"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"guardrail_id": "g", "guardrail_version": "1"}, r"\['guardrail_id', 'guardrail_version'\] is not supported.*guardrails"),
        ({"cache_config": object()}, r"\['cache_config'\].*cachePoint"),
        ({"strict_tools": True}, r"strict_tools"),
        ({"include_tool_result_status": False}, r"include_tool_result_status=False"),
        ({"model_id": ""}, r"model_id must be a non-empty string"),
    ],
)
def test_bedrock_config_tether_cannot_honour_is_refused_by_name_and_changes_nothing(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        BedrockModel(**kwargs)
    model = BedrockModel(model_id="kept", temperature=0.5)
    with pytest.raises(ConfigurationError, match=match):
        model.update_config(**kwargs)
    assert model.get_config() == {"model_id": "kept", "include_tool_result_status": "auto", "temperature": 0.5}
    assert model.format_request(request())["inferenceConfig"] == {"temperature": 0.5}


def test_bedrock_constructor_arguments_strands_refuses_or_tether_lacks() -> None:
    with pytest.raises(ConfigurationError, match="Cannot specify both `region_name` and `boto_session`"):
        BedrockModel(region_name="us-east-1", boto_session=object())
    with pytest.raises(ValueError):  # what Strands raises there
        BedrockModel(region_name="us-east-1", boto_session=object())
    with pytest.raises(ConfigurationError, match="api_key"):
        BedrockModel(api_key="bedrock-key")


def test_an_unknown_config_key_is_warned_about_as_strands_does() -> None:
    with pytest.warns(UserWarning, match=r"Invalid configuration parameters: \['max_token'\]"):
        model = BedrockModel(max_token=5)
    assert model.get_config()["max_token"] == 5


@pytest.mark.parametrize(("env", "expected"), [({}, "us-west-2"), ({"AWS_REGION": "eu-central-1"}, "eu-central-1")])
def test_bedrock_region_defaults_are_strands(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], expected: str) -> None:
    require("boto3", "pip install boto3")
    strands_bedrock = pytest.importorskip("strands.models.bedrock")
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ours = BedrockModel().client.meta.region_name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = strands_bedrock.BedrockModel().client.meta.region_name
    assert ours == theirs == expected
    assert BedrockModel(region_name="ap-south-1").client.meta.region_name == "ap-south-1"


def test_a_strands_bedrock_model_runs_a_tether_agent_against_bedrock(server: ReplayServer) -> None:
    require("boto3", "pip install boto3")
    import boto3

    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="wJalrXUtnFEMI/K7MDENG", region_name="us-west-2")
    model = BedrockModel(boto_session=session, endpoint_url=server.url, model_id="anthropic.claude-x", max_tokens=256, temperature=0)
    add_stream(server, "bedrock_text.json")
    result = tether.Agent(model=to_tether_model(model))("What is 12 * 34 + 5?")
    assert str(result).strip() == "12 * 34 + 5 is 413."
    assert result.metrics.usage == {"input_tokens": 21, "output_tokens": 12, "total_tokens": 33}
    sent = server.requests[0]
    assert sent.path == "/model/anthropic.claude-x/converse-stream"
    assert sent.json()["inferenceConfig"] == {"maxTokens": 256, "temperature": 0}


async def test_bedrock_throttling_is_tethers_retryable_error(server: ReplayServer) -> None:
    require("boto3", "pip install boto3")
    import boto3

    from ..models.conftest import fixture_json

    recorded = fixture_json("bedrock_throttling.json")
    server.add(recorded["status"], json.dumps(recorded["body"]), recorded.get("headers", {}))
    session = boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="wJalrXUtnFEMI/K7MDENG", region_name="us-west-2")
    model = BedrockModel(boto_session=session, endpoint_url=server.url)
    with pytest.raises(ModelThrottledError):
        async for _ in model.stream(request()):
            pass


# -- OpenAIModel ---------------------------------------------------------------------------


async def test_openai_client_args_model_id_and_params_reach_the_request(server: ReplayServer) -> None:
    require("openai", "pip install openai")
    server.add_sse("openai_tool_calls.sse")
    model = OpenAIModel(
        client_args={"api_key": "sk-test", "base_url": f"{server.url}/v1", "timeout": 5},
        model_id="gpt-4o-mini",
        params={"max_tokens": 50, "temperature": 0},
    )
    events = [event async for event in model.stream(request())]
    assert {"messageStop": {"stopReason": "tool_use"}} in events
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions" and sent.headers["authorization"] == "Bearer sk-test"
    body = sent.json()
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("gpt-4o-mini", 50, 0)
    assert model.get_config() == {"model_id": "gpt-4o-mini", "params": {"max_tokens": 50, "temperature": 0}}
    assert model.client_args["api_key"] == "sk-test"


async def test_openai_uses_a_given_client_and_takes_strands_stream_arguments(server: ReplayServer) -> None:
    openai = require("openai", "pip install openai")
    server.add_sse("openai_tool_calls.sse")
    client = openai.AsyncOpenAI(api_key="sk-given", base_url=f"{server.url}/v1", max_retries=0)
    model = OpenAIModel(client=client, model_id="gpt-4o")
    model.preflight()  # no key needed: the client has one
    events = [event async for event in model.stream(PROMPT, None, "Be brief.")]
    assert events[0] == {"messageStart": {"role": "assistant"}}
    sent = server.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-given"
    assert sent.json()["messages"][0] == {"role": "system", "content": "Be brief."}


def test_openai_arguments_strands_refuses_or_tether_lacks() -> None:
    with pytest.raises(ConfigurationError, match="Only one of 'client' or 'client_args'"):
        OpenAIModel(client=object(), client_args={"api_key": "k"})
    with pytest.raises(ConfigurationError, match="bedrock_mantle_config"):
        OpenAIModel(bedrock_mantle_config={"region": "us-east-1"})
    with pytest.raises(ConfigurationError, match="cache_config"):
        OpenAIModel(model_id="m", cache_config=object())
    with pytest.raises(ConfigurationError, match="OpenAIModel has no model_id"):
        OpenAIModel(client_args={"api_key": "k"}).format_request(request())


# -- AnthropicModel ------------------------------------------------------------------------


async def test_anthropic_config_reaches_the_request_and_a_tether_agent_runs_it(server: ReplayServer) -> None:
    require("anthropic", "pip install anthropic")
    server.add_sse("anthropic_text.sse")
    model = AnthropicModel(
        client_args={"api_key": "sk-ant", "base_url": server.url}, model_id="claude-x", max_tokens=77, params={"stop_sequences": ["END"]}
    )
    result = await tether.Agent(model=to_tether_model(model)).invoke_async("hi")
    assert result.stop_reason == "end_turn" and result.metrics.usage["total_tokens"] > 0
    body = server.requests[0].json()
    assert (body["model"], body["max_tokens"], body["stop_sequences"]) == ("claude-x", 77, ["END"])
    assert "sk-ant" in server.requests[0].headers["authorization"]


def test_anthropic_needs_model_id_and_max_tokens_and_refuses_what_tether_lacks() -> None:
    model = AnthropicModel(client_args={"api_key": "k"}, model_id="claude-x")
    with pytest.raises(ConfigurationError, match=r"lacks \['max_tokens'\]"):
        model.format_request(request())
    model.update_config(max_tokens=10)
    assert model.format_request(request())["max_tokens"] == 10
    with pytest.raises(ConfigurationError, match="anthropic_tools"):
        AnthropicModel(model_id="m", max_tokens=1, anthropic_tools=[{"type": "web_search_20250305", "name": "web_search"}])


# -- LlamaCppModel -------------------------------------------------------------------------


async def test_llamacpp_talks_to_the_servers_openai_endpoint_with_strands_params(
    server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("openai", "pip install openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-of-openai")
    server.add_sse("openai_tool_calls.sse")
    params = {"temperature": 0.1, "max_tokens": 64, "top_k": 5, "repeat_penalty": 1.1, "grammar": 'root ::= "x"'}
    model = LlamaCppModel(base_url=f"{server.url}/", params=params, cache_config=object())
    assert [event async for event in model.stream(request())]
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert "sk-secret-of-openai" not in sent.headers.get("authorization", "")
    body = sent.json()
    assert body["model"] == "default"
    assert {key: body[key] for key in params} == params  # llama.cpp's own beside OpenAI's, as Strands sends them
    assert body["cache_prompt"] is True
    assert model.model_id == f"openai-compatible:{server.url}/v1:default"
