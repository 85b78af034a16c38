"""Model strings: ``from_string`` and ``Agent(model="provider:model")`` take what the CLI takes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tether import Agent, ConfigurationError
from tether.cli.models import parse_model
from tether.models import from_string
from tether.models.registry import PROVIDERS, Provider, valid_forms

VALID_FORMS = ("llamacpp[:PATH]", "openai:MODEL", "anthropic:MODEL", "bedrock:MODEL", "openai-compatible:URL:MODEL")


@pytest.mark.parametrize(
    ("spec", "cls", "model_id", "base_url"),
    [
        ("openai:gpt-4o", "OpenAIModel", "openai:gpt-4o", None),
        ("anthropic:claude-sonnet-4-6", "AnthropicModel", "anthropic:claude-sonnet-4-6", None),
        (
            "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "BedrockModel",
            "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            None,
        ),
        ("openai-compatible:http://localhost:8080/v1:llama3", "OpenAIModel", "openai:llama3", "http://localhost:8080/v1"),
        (" openai:gpt-4o ", "OpenAIModel", "openai:gpt-4o", None),
    ],
)
def test_from_string_builds_the_named_provider(spec: str, cls: str, model_id: str, base_url: str | None) -> None:
    model = from_string(spec)
    assert type(model).__name__ == cls
    assert model.model_id == model_id
    assert getattr(model, "base_url", None) == base_url


def test_llamacpp_takes_an_optional_path(tmp_path: Path) -> None:
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    model = from_string(f"llamacpp:{gguf}")
    assert type(model).__name__ == "LlamaCppModel"
    assert getattr(model, "model_path", None) == str(gguf)
    assert getattr(from_string("llamacpp"), "model_path", "").endswith("SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.mark.parametrize("spec", ["gpt-4o", "nosuch:thing", "OpenAI:gpt-4o", ""])
def test_an_unknown_prefix_lists_every_valid_form(spec: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        from_string(spec)
    message = str(caught.value)
    assert repr(spec) in message
    for form in VALID_FORMS:
        assert form in message


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("openai:", "names no MODEL"),
        ("anthropic: ", "names no MODEL"),
        ("openai-compatible:localhost:llama", "openai-compatible:URL:MODEL"),
    ],
)
def test_a_string_missing_its_model_or_url_says_what_is_missing(spec: str, needle: str) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        from_string(spec)


def test_agent_accepts_a_model_string() -> None:
    agent = Agent(model="anthropic:claude-sonnet-4-6")
    assert agent.model.model_id == "anthropic:claude-sonnet-4-6"


def test_agent_refuses_a_bad_model_string_at_construction() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Agent(model="openai/gpt-4o")
    assert "model 'openai/gpt-4o'" in str(caught.value)
    assert all(form in str(caught.value) for form in VALID_FORMS)


def test_model_strings_import_no_provider_sdk() -> None:
    code = (
        "import sys, tether\n"
        "for s in ('openai:x', 'anthropic:x', 'bedrock:x', 'openai-compatible:http://127.0.0.1:1/v1:m', 'llamacpp'):\n"
        "    tether.Agent(model=s)\n"
        "print(sorted({'openai', 'anthropic', 'boto3', 'botocore', 'llama_cpp'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_cli_parses_through_the_sdk_and_adds_only_scripted() -> None:
    assert parse_model("openai:gpt-4o").model_id == from_string("openai:gpt-4o").model_id
    with pytest.raises(ConfigurationError) as caught:
        parse_model("nosuch:thing")
    assert str(caught.value).startswith("--model 'nosuch:thing': unknown provider 'nosuch'")
    assert str(caught.value).endswith(f"{valid_forms()}, scripted:PATH")
    with pytest.raises(ConfigurationError, match="unknown provider 'scripted'"):
        from_string("scripted:/tmp/script.json")  # stored or user data cannot reach a CLI-only test model


def test_extra_prefixes_are_accepted_and_listed() -> None:
    built: list[tuple[str, str, str]] = []

    def build(rest: str, spec: str, field: str) -> object:
        built.append((rest, spec, field))
        return from_string("openai:gpt-4o")

    extra = {"mine": Provider("mine:NAME", build)}  # type: ignore[arg-type]
    from_string("mine:abc", extra=extra, field="--model")
    assert built == [("abc", "mine:abc", "--model")]
    assert valid_forms(extra).endswith("mine:NAME")
    assert set(PROVIDERS) == {"llamacpp", "openai", "anthropic", "bedrock", "openai-compatible"}
