"""Normalized model stream events and the model request.

Every provider maps its wire format onto these Converse-shaped events, so the loop folds one
format only. Events are plain dicts with exactly one key.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from .content import Message, SystemContentBlock
from .tools import ToolChoice, ToolSpec

StopReason: TypeAlias = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "content_filtered",
    "guardrail_intervened",
]


class Usage(TypedDict):
    inputTokens: int
    outputTokens: int
    totalTokens: int


class MessageStartEvent(TypedDict):
    role: str


class ToolUseStart(TypedDict):
    toolUseId: str
    name: str


class ContentBlockStartInner(TypedDict, total=False):
    toolUse: ToolUseStart


class ContentBlockStartEvent(TypedDict):
    start: ContentBlockStartInner


class ToolUseDelta(TypedDict):
    input: str


class ReasoningDelta(TypedDict, total=False):
    text: str
    signature: str
    redactedContent: bytes


class ContentDelta(TypedDict, total=False):
    text: str
    toolUse: ToolUseDelta
    reasoningContent: ReasoningDelta


class ContentBlockDeltaEvent(TypedDict):
    delta: ContentDelta


class MessageStopEvent(TypedDict):
    stopReason: StopReason


class MetadataEvent(TypedDict, total=False):
    usage: Usage
    metrics: dict[str, Any]


class StreamEvent(TypedDict, total=False):
    """One normalized model stream event; exactly one key is present.

    ``modelState`` carries provider state that must survive the run (for example a server-side
    response id); the loop stores it in ``RunState.model_state``.
    """

    messageStart: MessageStartEvent
    contentBlockStart: ContentBlockStartEvent
    contentBlockDelta: ContentBlockDeltaEvent
    contentBlockStop: dict[str, Any]
    messageStop: MessageStopEvent
    metadata: MetadataEvent
    modelState: dict[str, Any]


class ModelRequest(TypedDict):
    """Everything a model call needs, as JSON (so it can cross process boundaries).

    ``max_tokens``, when present, caps the reply's output tokens (a run's budget sets it to what
    is left); a provider that allows it lowers its own per-reply cap to it.
    """

    messages: list[Message]
    system_prompt: list[SystemContentBlock] | None
    tool_specs: list[ToolSpec]
    tool_choice: ToolChoice | None
    model_state: dict[str, Any]
    max_tokens: NotRequired[int]
