"""``tether.models`` exports the providers lazily: no provider SDK is imported until a request."""

from __future__ import annotations

import subprocess
import sys

import pytest

SDKS = ("openai", "anthropic", "boto3", "botocore", "llama_cpp")


def test_importing_tether_and_the_provider_classes_imports_no_sdk() -> None:
    code = (
        "import sys, tether, tether.models as m\n"
        "classes = [m.OpenAIModel, m.AnthropicModel, m.BedrockModel, m.LlamaCppModel]\n"
        "m.OpenAIModel('gpt-4o', api_key='k'); m.AnthropicModel(api_key='k'); m.BedrockModel()\n"
        f"print(sorted(name for name in {SDKS!r} if name in sys.modules))\n"
        "print(sorted(c.__name__ for c in classes))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "['AnthropicModel', 'BedrockModel', 'LlamaCppModel', 'OpenAIModel']"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    import tether.models

    with pytest.raises(AttributeError, match="NoSuchModel"):
        tether.models.NoSuchModel  # noqa: B018
