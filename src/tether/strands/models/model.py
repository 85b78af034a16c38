"""Strands' abstract ``Model`` (``strands.models.model.Model``): the base of a custom model.

A Strands program writes its own model by subclassing this and yielding Bedrock
ConverseStream-style events from :meth:`Model.stream` (``messageStart``, ``contentBlockStart``,
``contentBlockDelta``, ``contentBlockStop``, ``messageStop``, ``metadata``). The facade's agent
runs such a model through :class:`~tether.strands.models._custom.CustomModel`, which turns
Tether's model request into this ``stream`` call and its events into Tether's; nothing here
imports ``strands`` or a provider SDK.
"""

from __future__ import annotations

import abc
import json
import math
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, TypedDict, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)

DEFAULT_CONTEXT_WINDOW_LIMIT = 200_000
"""Strands' context window assumed when a model's config names none (``strands.models._defaults``)."""


class BaseModelConfig(TypedDict, total=False):
    """Configuration every Strands model accepts: ``context_window_limit`` (tokens)."""

    context_window_limit: int | None


class Model(abc.ABC):
    """Strands' abstract model: ``update_config``, ``get_config``, ``structured_output`` and ``stream``.

    Subclass it as in Strands; pass an instance as ``Agent(model=...)`` of :mod:`tether.strands`
    (or to :func:`tether.strands.models._adapt.to_tether_model` for a plain ``tether.Agent``).
    """

    @property
    def stateful(self) -> bool:
        """Whether the model keeps the conversation server-side (Strands' default: False)."""
        return False

    @property
    def context_window_limit(self) -> int | None:
        """``context_window_limit`` of the config, or None."""
        config = self.get_config()
        if isinstance(config, dict):
            limit = config.get("context_window_limit")
        else:
            limit = getattr(config, "context_window_limit", None)
        return limit if isinstance(limit, int) else None

    @abc.abstractmethod
    def update_config(self, **model_config: Any) -> None:
        """Update the model configuration with the provided arguments."""

    @abc.abstractmethod
    def get_config(self) -> Any:
        """Return the model configuration."""

    @abc.abstractmethod
    def structured_output(
        self, output_model: type[T], prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Yield model events, the last being ``{"output": <output_model instance>}``."""

    @abc.abstractmethod
    def stream(
        self,
        messages: Any,
        tool_specs: list[Any] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any | None = None,
        system_prompt_content: list[Any] | None = None,
        invocation_state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[Any]:
        """Stream the reply to ``messages`` as Bedrock ConverseStream-style events.

        Args:
            messages: The conversation (Converse-shaped message dicts).
            tool_specs: The tools the model may call, or None.
            system_prompt: The system prompt's text, or None.
            tool_choice: How the model must choose a tool (``{"auto": {}}``, ``{"any": {}}``,
                ``{"tool": {"name": ...}}``), or None.
            system_prompt_content: The system prompt as content blocks (with cache points).
            invocation_state: The state the agent was invoked with.
            **kwargs: Further keywords (Strands passes ``model_state``, ``cancel_signal``,
                ``agent_metadata``); a model ignores those it does not know.

        Raises:
            ModelThrottledException: The service throttled the request (the agent retries).
            ContextWindowOverflowException: The request is too long (the conversation manager
                reduces it and the agent retries).
        """

    async def count_tokens(
        self,
        messages: Any,
        tool_specs: list[Any] | None = None,
        system_prompt: str | None = None,
        system_prompt_content: list[Any] | None = None,
    ) -> int:
        """Estimate the input tokens of a request with Strands' fallback heuristic (text: characters / 4,
        JSON: characters / 2); not for billing."""
        total = 0
        if system_prompt_content:
            total += sum(_text_tokens(block["text"]) for block in system_prompt_content if "text" in block)
        elif system_prompt:
            total += _text_tokens(system_prompt)
        for message in messages:
            for block in message["content"]:
                total += _block_tokens(block)
        for spec in tool_specs or []:
            total += _json_tokens(spec)
        return total


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _json_tokens(value: Any) -> int:
    try:
        return math.ceil(len(json.dumps(value)) / 2)
    except (TypeError, ValueError):
        return 0


def _block_tokens(block: dict[str, Any]) -> int:
    total = 0
    if "text" in block:
        total += _text_tokens(block["text"])
    if "toolUse" in block:
        total += _text_tokens(block["toolUse"].get("name", "")) + _json_tokens(block["toolUse"].get("input", {}))
    if "toolResult" in block:
        for item in block["toolResult"].get("content", []):
            if "text" in item:
                total += _text_tokens(item["text"])
            if "json" in item:
                total += _json_tokens(item["json"])
    if "reasoningContent" in block:
        text = block["reasoningContent"].get("reasoningText", {})
        if "text" in text:
            total += _text_tokens(text["text"])
    return total


__all__ = ["DEFAULT_CONTEXT_WINDOW_LIMIT", "BaseModelConfig", "Model"]
