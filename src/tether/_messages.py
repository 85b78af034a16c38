"""Validation of messages and content blocks, with errors that name the offending path.

Used by snapshot/checkpoint loaders and prompt normalization. Validation walks messages and
blocks (not deep into tool inputs, which are arbitrary JSON), so it is linear and cheap.
"""

from __future__ import annotations

from typing import Any

from ._json import BYTES_KEY, decode_bytes
from .errors import json_path
from .types import MESSAGE_BLOCK_KINDS, SYSTEM_BLOCK_KINDS, Message

_ROLES = ("user", "assistant")


class _Invalid(Exception):
    def __init__(self, path: list[Any], problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem


def _is_bytes(value: Any) -> bool:
    if isinstance(value, (bytes, bytearray)):
        return True
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(BYTES_KEY), str)


def _check_source(block: Any, path: list[Any], kind: str) -> None:
    if not isinstance(block, dict):
        raise _Invalid(path, f"{kind} must be an object")
    if not isinstance(block.get("format"), str):
        raise _Invalid(path + ["format"], "must be a string")
    source = block.get("source")
    if not isinstance(source, dict) or not _is_bytes(source.get("bytes")):
        raise _Invalid(path + ["source", "bytes"], "must be bytes (or a base64 envelope)")
    if kind == "document" and not isinstance(block.get("name"), str):
        raise _Invalid(path + ["name"], "must be a string")


def _check_tool_result(value: Any, path: list[Any]) -> None:
    if not isinstance(value, dict):
        raise _Invalid(path, "toolResult must be an object")
    if not isinstance(value.get("toolUseId"), str):
        raise _Invalid(path + ["toolUseId"], "must be a string")
    if value.get("status") not in ("success", "error"):
        raise _Invalid(path + ["status"], "must be 'success' or 'error'")
    content = value.get("content")
    if not isinstance(content, list):
        raise _Invalid(path + ["content"], "must be a list")
    for i, item in enumerate(content):
        if not isinstance(item, dict) or len(item) != 1:
            raise _Invalid(path + ["content", i], "must be an object with exactly one key")
        key = next(iter(item))
        if key == "text":
            if not isinstance(item["text"], str):
                raise _Invalid(path + ["content", i, "text"], "must be a string")
        elif key in ("image", "document"):
            _check_source(item[key], path + ["content", i, key], key)
        elif key != "json":
            raise _Invalid(path + ["content", i], f"unknown tool result content kind {key!r}")


def check_block(block: Any, path: list[Any]) -> None:
    """Raise ``_Invalid`` unless ``block`` is a valid message content block."""
    if not isinstance(block, dict) or len(block) != 1:
        raise _Invalid(path, "a content block must be an object with exactly one key")
    kind = next(iter(block))
    value = block[kind]
    if kind == "text":
        if not isinstance(value, str):
            raise _Invalid(path + ["text"], "must be a string")
    elif kind == "toolUse":
        if not isinstance(value, dict):
            raise _Invalid(path + ["toolUse"], "must be an object")
        if not isinstance(value.get("toolUseId"), str):
            raise _Invalid(path + ["toolUse", "toolUseId"], "must be a string")
        if not isinstance(value.get("name"), str):
            raise _Invalid(path + ["toolUse", "name"], "must be a string")
        if "input" not in value:
            raise _Invalid(path + ["toolUse", "input"], "is missing")
    elif kind == "toolResult":
        _check_tool_result(value, path + ["toolResult"])
    elif kind in ("image", "document"):
        _check_source(value, path + [kind], kind)
    elif kind == "reasoningContent":
        if not isinstance(value, dict) or not value:
            raise _Invalid(path + [kind], "must be a non-empty object")
        text = value.get("reasoningText")
        if text is not None and (not isinstance(text, dict) or not isinstance(text.get("text"), str)):
            raise _Invalid(path + [kind, "reasoningText", "text"], "must be a string")
        if "redactedContent" in value and not _is_bytes(value["redactedContent"]):
            raise _Invalid(path + [kind, "redactedContent"], "must be bytes (or a base64 envelope)")
    elif kind == "cachePoint":
        if not isinstance(value, dict):
            raise _Invalid(path + [kind], "must be an object")
    elif kind not in MESSAGE_BLOCK_KINDS:
        raise _Invalid(path, f"unknown content block kind {kind!r}")


def check_message(message: Any, path: list[Any]) -> None:
    """Raise ``_Invalid`` unless ``message`` is a valid message."""
    if not isinstance(message, dict):
        raise _Invalid(path, "a message must be an object")
    if message.get("role") not in _ROLES:
        raise _Invalid(path + ["role"], "must be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, list):
        raise _Invalid(path + ["content"], "must be a list of content blocks")
    extra = set(message) - {"role", "content"}
    if extra:
        raise _Invalid(path + [sorted(extra)[0]], "unexpected key in a message")
    for i, block in enumerate(content):
        check_block(block, path + ["content", i])


def validate_messages(value: Any, path: list[Any], error: type[Exception]) -> list[Message]:
    """Return ``value`` if it is a list of valid messages, else raise ``error`` naming the path."""
    if not isinstance(value, list):
        raise error(f"{json_path(path)} must be a list of messages")
    try:
        for i, message in enumerate(value):
            check_message(message, path + [i])
    except _Invalid as exc:
        raise error(f"{json_path(exc.path)}: {exc.problem}") from None
    return value


def validate_system_prompt(value: Any, path: list[Any], error: type[Exception]) -> None:
    """Raise ``error`` unless ``value`` is a list of system content blocks."""
    if not isinstance(value, list):
        raise error(f"{json_path(path)} must be a list of system content blocks or null")
    for i, block in enumerate(value):
        if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in SYSTEM_BLOCK_KINDS:
            raise error(f"{json_path(path + [i])}: a system block must be {{'text': str}} or {{'cachePoint': {{...}}}}")
        if "text" in block and not isinstance(block["text"], str):
            raise error(f"{json_path(path + [i, 'text'])}: must be a string")


def decode_message_bytes(messages: list[Message]) -> None:
    """Turn base64 envelopes back into bytes, in place, where messages allow bytes."""
    for message in messages:
        for block in message["content"]:
            if "text" in block or "toolUse" in block or "cachePoint" in block:
                continue
            if "toolResult" in block:
                for item in block["toolResult"]["content"]:
                    for kind in ("image", "document"):
                        if kind in item:
                            _decode_source(item[kind])
            elif "image" in block:
                _decode_source(block["image"])
            elif "document" in block:
                _decode_source(block["document"])
            elif "reasoningContent" in block:
                reasoning: Any = block["reasoningContent"]
                if "redactedContent" in reasoning:
                    decoded = decode_bytes(reasoning["redactedContent"])
                    if decoded is not None:
                        reasoning["redactedContent"] = decoded


def _decode_source(block: Any) -> None:
    source = block.get("source")
    if isinstance(source, dict) and "bytes" in source:
        decoded = decode_bytes(source["bytes"])
        if decoded is not None:
            source["bytes"] = decoded
