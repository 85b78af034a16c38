"""Message and content-block shapes (Converse-shaped, JSON).

A message is ``{"role": "user" | "assistant", "content": [block, ...]}``; a block is a dict
with exactly one key naming its kind. These are TypedDicts: at run time they are plain dicts,
which is what keeps every run serializable as JSON without a conversion layer.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

Role: TypeAlias = Literal["user", "assistant"]
JSONValue: TypeAlias = Any
"""A value made only of dict (str keys), list, str, int, float, bool and None."""


class CachePoint(TypedDict):
    """A prompt-caching hint; providers that support caching map it, others drop it."""

    type: str


class ImageSource(TypedDict):
    bytes: bytes


class ImageContent(TypedDict):
    format: str  # "png" | "jpeg" | "gif" | "webp"
    source: ImageSource


class DocumentSource(TypedDict):
    bytes: bytes


class DocumentContent(TypedDict):
    format: str
    name: str
    source: DocumentSource


class ReasoningText(TypedDict):
    text: str
    signature: NotRequired[str]


class ReasoningContent(TypedDict, total=False):
    reasoningText: ReasoningText
    redactedContent: bytes


class ToolUse(TypedDict):
    toolUseId: str
    name: str
    input: JSONValue


class ToolResultContent(TypedDict, total=False):
    text: str
    json: JSONValue
    image: ImageContent
    document: DocumentContent


ToolResultStatus: TypeAlias = Literal["success", "error"]


class ToolResult(TypedDict):
    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


class InterruptResponse(TypedDict):
    interruptId: str
    response: JSONValue


class CheckpointResume(TypedDict):
    checkpoint: dict[str, JSONValue]


class ContentBlock(TypedDict, total=False):
    """One block of a message; exactly one key is present."""

    text: str
    toolUse: ToolUse
    toolResult: ToolResult
    image: ImageContent
    document: DocumentContent
    reasoningContent: ReasoningContent
    cachePoint: CachePoint
    # Prompt-only control blocks: never stored in messages.
    interruptResponse: InterruptResponse
    checkpointResume: CheckpointResume


class Message(TypedDict):
    role: Role
    content: list[ContentBlock]


class SystemContentBlock(TypedDict, total=False):
    """A block of the system prompt; exactly one key is present."""

    text: str
    cachePoint: CachePoint


Messages: TypeAlias = list[Message]

MESSAGE_BLOCK_KINDS: frozenset[str] = frozenset({"text", "toolUse", "toolResult", "image", "document", "reasoningContent", "cachePoint"})
"""Block kinds that may be stored in a message."""

CONTROL_BLOCK_KINDS: frozenset[str] = frozenset({"interruptResponse", "checkpointResume"})
"""Block kinds that may appear only in a prompt."""

SYSTEM_BLOCK_KINDS: frozenset[str] = frozenset({"text", "cachePoint"})
