"""Strands' `strands.types.content`: message and content-block shapes (Tether's, same JSON)."""

from __future__ import annotations

from typing import TypeAlias

from ...types.content import CachePoint, ContentBlock, Message, Messages, Role, SystemContentBlock
from ...types.content import ReasoningContent as ReasoningContentBlock

SystemPrompt: TypeAlias = str | list[SystemContentBlock] | None
"""A system prompt: text, or system content blocks (``text``, ``cachePoint``)."""

__all__ = ["CachePoint", "ContentBlock", "Message", "Messages", "ReasoningContentBlock", "Role", "SystemContentBlock", "SystemPrompt"]
