"""Strands' `strands.types.event_loop`: usage, metrics and stop reasons."""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict


class Usage(TypedDict, total=False):
    """Token usage, as Strands reports it (``inputTokens``, ``outputTokens``, ``totalTokens``)."""

    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class Metrics(TypedDict, total=False):
    """Model-call metrics (``latencyMs``)."""

    latencyMs: int
    timeToFirstByteMs: int


StopReason: TypeAlias = Literal[
    "cancelled",
    "checkpoint",
    "content_filtered",
    "end_turn",
    "guardrail_intervened",
    "interrupt",
    "max_tokens",
    "stop_sequence",
    "tool_use",
]
"""Why an invocation stopped (Tether adds ``limit_cycles``, ``limit_tokens`` and ``budget_exhausted``)."""

__all__ = ["Metrics", "StopReason", "Usage"]
