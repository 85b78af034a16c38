"""Claim-check for messages: large parts go to the :class:`BlobStore`, references travel.

A *compact* message has the shape of a message, with every large part replaced by
``{"$blob": "sha256:..."}``: a whole content block (text, image, document, reasoning), one
item of a tool result's content, or a tool call's ``input``. The outer structure (roles,
``toolUse`` names and ids, ``toolResult`` ids and statuses) stays inline, because that is all
the loop core reads, so the workflow runs the core over compact messages unchanged.

A *conversation* is a chain of immutable nodes ``{"prev": ref | None, "messages": [compact,
...]}``; appending a cycle writes one small node, so storage grows with the conversation
(O(n)) and a conversation of any size is named by one reference. Readers cache materialized
conversations by reference, so the next model call only reads the node it has not seen.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, TypedDict, cast

from .._json import json_copy
from .._messages import decode_message_bytes
from ..errors import ShapeError, StoreError
from ..types import Message
from .blobs import BlobStore, canonical_json, is_ref
from .payloads import BLOB_KEY, DEFAULT_MAX_VALUE_BYTES, check_compact, check_size
from .payloads import is_placeholder as _is_placeholder
from .shapes import CompactMessage, CompactResult, CompactToolUse

DEFAULT_INLINE_LIMIT = 8 * 1024
"""Parts larger than this (bytes of canonical JSON) are offloaded."""


def _offload(blobs: BlobStore, value: Any, limit: int, hard_limit: int | None, field: str) -> Any:
    data = canonical_json(value)
    check_size(len(data), hard_limit, field)
    if len(data) <= limit:
        return value
    return {BLOB_KEY: blobs.put_bytes(data)}


def compact_message(
    blobs: BlobStore,
    message: Any,
    limit: int = DEFAULT_INLINE_LIMIT,
    hard_limit: int | None = DEFAULT_MAX_VALUE_BYTES,
    field: str = "message",
) -> CompactMessage:
    """A compact copy of ``message`` (pure JSON; bytes become envelopes first).

    Args:
        blobs: Where large parts go.
        message: The message.
        limit: Parts larger than this (bytes of canonical JSON) are offloaded.
        hard_limit: A part larger than this raises ``PayloadTooLargeError`` (None: no limit).
        field: The message's name in errors.
    """
    plain: CompactMessage = json_copy(message, "message")
    content = plain.get("content")
    if not isinstance(content, list):
        return plain
    out: list[Any] = []
    for i, block in enumerate(content):
        if not isinstance(block, dict) or _is_placeholder(block):
            out.append(block)
        elif "toolUse" in block:
            use = dict(block["toolUse"])
            if "input" in use:
                use["input"] = _offload(blobs, use["input"], limit, hard_limit, f"the input of tool call {use.get('toolUseId')!r}")
            out.append({"toolUse": use})
        elif "toolResult" in block:
            result = dict(block["toolResult"])
            items = result.get("content")
            if isinstance(items, list):
                what = f"the result of tool call {result.get('toolUseId')!r}"
                result["content"] = [item if _is_placeholder(item) else _offload(blobs, item, limit, hard_limit, what) for item in items]
            out.append({"toolResult": result})
        else:
            out.append(_offload(blobs, block, limit, hard_limit, f"{field}.content[{i}]"))
    plain["content"] = out
    check_compact(plain, field)
    return plain


def compact_result(
    blobs: BlobStore, result: Any, limit: int = DEFAULT_INLINE_LIMIT, hard_limit: int | None = DEFAULT_MAX_VALUE_BYTES
) -> CompactResult:
    """A compact copy of one tool result (see :func:`compact_message` for the limits)."""
    field = f"the result of tool call {result.get('toolUseId')!r}" if isinstance(result, dict) else "a tool result"
    holder = compact_message(blobs, {"role": "user", "content": [{"toolResult": result}]}, limit, hard_limit, field)
    compacted: CompactResult = holder["content"][0]["toolResult"]
    return compacted


def _resolve(blobs: BlobStore, value: Any) -> Any:
    return blobs.get(value[BLOB_KEY]) if _is_placeholder(value) else value


def expand_message(blobs: BlobStore, message: CompactMessage, *, decode: bool = True) -> Message:
    """The full message a compact one stands for (a fresh copy; envelopes decoded to bytes)."""
    content = message.get("content")
    full: CompactMessage = {**message}
    if isinstance(content, list):
        blocks: list[Any] = []
        for block in content:
            if _is_placeholder(block):
                blocks.append(blobs.get(block[BLOB_KEY]))
            elif isinstance(block, dict) and "toolUse" in block:
                use = dict(block["toolUse"])
                if "input" in use:
                    use["input"] = copy.deepcopy(_resolve(blobs, use["input"]))
                blocks.append({"toolUse": use})
            elif isinstance(block, dict) and "toolResult" in block:
                result = dict(block["toolResult"])
                items = result.get("content")
                if isinstance(items, list):
                    result["content"] = [copy.deepcopy(_resolve(blobs, item)) for item in items]
                blocks.append({"toolResult": result})
            else:
                blocks.append(copy.deepcopy(block))
        full["content"] = blocks
    if decode:
        try:
            decode_message_bytes([full])
        except ShapeError as exc:
            raise StoreError(f"a stored message holds invalid base64 at {exc.path}: {exc.problem}") from None
    return full  # type: ignore[return-value]


def expand_tool_use(blobs: BlobStore, tool_use: CompactToolUse) -> CompactToolUse:
    """A tool call with its input restored."""
    use = dict(tool_use)
    if "input" in use:
        use["input"] = copy.deepcopy(_resolve(blobs, use["input"]))
    return use


def expand_result(blobs: BlobStore, result: CompactResult) -> CompactResult:
    """A tool result with its content restored (envelopes decoded)."""
    message = expand_message(blobs, {"role": "user", "content": [{"toolResult": result}]})
    restored: CompactResult = dict(message["content"][0]["toolResult"])
    return restored


class ConversationNode(TypedDict):
    """One node of a conversation chain: the previous node's reference and compact messages."""

    prev: str | None
    messages: list[CompactMessage]


class Conversations:
    """Writes conversation chains and reads them back, caching materialized conversations."""

    def __init__(self, blobs: BlobStore, cache_size: int = 16) -> None:
        self.blobs = blobs
        self._cache: OrderedDict[str, list[Message]] = OrderedDict()
        self._cache_size = cache_size

    def append(self, prev: str | None, compact: list[CompactMessage]) -> str | None:
        """The reference of ``prev`` followed by ``compact`` messages (``prev`` itself if none)."""
        if not compact:
            return prev
        return self.blobs.put({"prev": prev, "messages": compact})

    def rebase(self, compact: list[CompactMessage]) -> str:
        """A new chain holding exactly ``compact`` (after a conversation manager trimmed it)."""
        return self.blobs.put({"prev": None, "messages": compact})

    def compact_nodes(self, ref: str | None) -> list[CompactMessage]:
        """The compact messages of a chain, oldest first."""
        nodes: list[list[CompactMessage]] = []
        current = ref
        while current is not None:
            node = self._node(current)
            nodes.append(node["messages"])
            current = node["prev"]
        out: list[CompactMessage] = []
        for messages in reversed(nodes):
            out.extend(messages)
        return out

    def _node(self, ref: str) -> ConversationNode:
        node = self.blobs.get(ref)
        if (
            not isinstance(node, dict)
            or not isinstance(node.get("messages"), list)
            or not (node.get("prev") is None or is_ref(node["prev"]))
        ):
            raise StoreError(f"blob {ref} is not a conversation node; the run's conversation reference is wrong")
        return cast(ConversationNode, node)

    def load(self, ref: str | None) -> list[Message]:
        """The full conversation ``ref`` names (shared, cached lists: treat them as read-only)."""
        if ref is None:
            return []
        cached = self._cache.get(ref)
        if cached is not None:
            self._cache.move_to_end(ref)
            return cached
        pending: list[list[CompactMessage]] = []
        current: str | None = ref
        base: list[Message] = []
        while current is not None:
            hit = self._cache.get(current)
            if hit is not None:
                base = hit
                break
            node = self._node(current)
            pending.append(node["messages"])
            current = node["prev"]
        messages = list(base)
        for chunk in reversed(pending):
            messages.extend(expand_message(self.blobs, item) for item in chunk)
        self._cache[ref] = messages
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return messages


__all__ = [
    "BLOB_KEY",
    "DEFAULT_INLINE_LIMIT",
    "Conversations",
    "compact_message",
    "compact_result",
    "expand_message",
    "expand_result",
    "expand_tool_use",
]
