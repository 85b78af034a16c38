"""Strands' `strands.models` on Tether (see :mod:`tether.strands`).

``Model`` is the base of a custom model; ``BedrockModel``, ``OpenAIModel``, ``AnthropicModel``
and ``LlamaCppModel`` are Tether's providers with Strands' constructors. Importing this package
imports no provider SDK (and the provider modules only on first use, as in Strands).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import bedrock, model
from .bedrock import BedrockModel
from .model import BaseModelConfig, Model

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .llamacpp import LlamaCppModel
    from .openai import OpenAIModel

_LAZY: dict[str, str] = {"AnthropicModel": ".anthropic", "LlamaCppModel": ".llamacpp", "OpenAIModel": ".openai"}

__all__ = ["AnthropicModel", "BaseModelConfig", "BedrockModel", "LlamaCppModel", "Model", "OpenAIModel", "bedrock", "model"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"cannot import name {name!r} from {__name__!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
