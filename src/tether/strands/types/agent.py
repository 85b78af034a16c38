"""Strands' `strands.types.agent`: what an invocation accepts as a prompt."""

from __future__ import annotations

from typing import Any, TypeAlias

from ...types.content import ContentBlock, Messages

AgentInput: TypeAlias = str | list[ContentBlock] | list[dict[str, Any]] | Messages | None
"""A prompt: text, content blocks, ``interruptResponse`` blocks, messages, or None to continue."""

__all__ = ["AgentInput"]
