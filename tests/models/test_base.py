"""``preflight(model)``: what a model's configuration would make its first request raise, raised
before any request (and before the ``tether`` command creates a run): a missing SDK, API key or
malformed URL. Nothing here opens a connection."""

from __future__ import annotations

import sys

import pytest

from tether.errors import ConfigurationError, ModelAuthError
from tether.models import AnthropicModel, BedrockModel, LlamaCppModel, OpenAIModel, ScriptedModel
from tether.models._format import check_url
from tether.models.base import preflight


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def test_a_missing_api_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY"):
        preflight(OpenAIModel("gpt-4o"))
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        preflight(AnthropicModel("claude-x"))
    preflight(OpenAIModel("gpt-4o", api_key="sk-given"))
    preflight(OpenAIModel("local", base_url="http://127.0.0.1:8080/v1"))  # a local server needs no key
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token")
    preflight(AnthropicModel("claude-x"))  # an auth token stands in for the key


@pytest.mark.parametrize(
    ("sdk", "extra", "model"),
    [
        ("openai", "openai", lambda: OpenAIModel("gpt-4o", api_key="k")),
        ("anthropic", "anthropic", lambda: AnthropicModel("claude-x", api_key="k")),
        ("boto3", "bedrock", lambda: BedrockModel("m")),
        ("llama_cpp", "local", lambda: LlamaCppModel()),
    ],
)
def test_a_missing_sdk_names_its_extra(monkeypatch: pytest.MonkeyPatch, sdk: str, extra: str, model: object) -> None:
    built = model()  # type: ignore[operator]
    monkeypatch.setitem(sys.modules, sdk, None)  # `import sdk` fails as if the extra were not installed
    with pytest.raises(ConfigurationError, match=rf"the '{sdk}' package is required.*pip install 'tether\[{extra}\]'"):
        preflight(built)


@pytest.mark.parametrize("url", ["localhost:8080/v1", "ftp://host/v1", "http:///v1", "http://host:port/v1", "127.0.0.1"])
def test_a_malformed_url_is_refused(url: str) -> None:
    with pytest.raises(ConfigurationError, match="OpenAIModel base_url"):
        preflight(OpenAIModel("m", base_url=url))
    with pytest.raises(ConfigurationError, match="AnthropicModel base_url"):
        preflight(AnthropicModel("m", api_key="k", base_url=url))
    with pytest.raises(ConfigurationError, match="BedrockModel endpoint_url"):
        preflight(BedrockModel("m", endpoint_url=url))


def test_well_formed_urls_pass() -> None:
    for url in ("http://127.0.0.1:8080/v1", "https://api.example.com", "http://[::1]:8000/v1", "http://llm.internal/v1"):
        check_url(url, "url")


def test_a_model_without_preflight_passes() -> None:
    preflight(ScriptedModel(["hi"]))
