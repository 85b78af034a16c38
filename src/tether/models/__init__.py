"""Models: the `Model` protocol, `ScriptedModel` for tests, and providers (imported lazily).

``from tether.models import OpenAIModel`` imports the provider module on first use only, and
the provider's SDK only when the model makes its first request, so ``import tether`` stays fast
and works without any provider SDK installed. :func:`from_string` builds a model from a model
string (``"openai:gpt-4o"``), the form ``Agent(model=...)`` and the ``tether`` command accept.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Model
from .registry import from_string
from .scripted import ScriptedModel, tool_call, tool_calls

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .bedrock import BedrockModel
    from .llamacpp import LlamaCppModel
    from .openai import OpenAIModel

_PROVIDERS: dict[str, str] = {
    "OpenAIModel": ".openai",
    "AnthropicModel": ".anthropic",
    "BedrockModel": ".bedrock",
    "LlamaCppModel": ".llamacpp",
}

__all__ = [
    "AnthropicModel",
    "BedrockModel",
    "LlamaCppModel",
    "Model",
    "OpenAIModel",
    "ScriptedModel",
    "from_string",
    "tool_call",
    "tool_calls",
]


def __getattr__(name: str) -> Any:
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
