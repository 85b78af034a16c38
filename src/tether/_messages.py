"""Validation of messages and content blocks, with errors that name the offending path.

Used by snapshot/checkpoint loaders and prompt normalization. Validation walks messages and
blocks (not deep into tool inputs, which are arbitrary JSON), so it is linear and cheap: paths
are built only when something is wrong. Bytes positions (image and document sources, redacted
reasoning) accept ``bytes`` or a ``{"$b64": ...}`` envelope holding canonical base64.

Every check raises :class:`~tether.errors.ShapeError` (``path`` and ``problem``); the inner
checks raise it with paths relative to the part they check and their callers prefix them. The
validators do not know whose input they check: a caller presents the error of its own context
(``ConfigurationError`` for an agent's arguments, ``SnapshotError`` for a snapshot, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ._json import BYTES_KEY, decode_base64, find_non_json, is_json, is_json_unguarded
from .errors import ShapeError, json_path
from .types import CONTROL_BLOCK_KINDS, MESSAGE_BLOCK_KINDS, SYSTEM_BLOCK_KINDS, Message

_ROLES = ("user", "assistant")
_STRANDS_MESSAGE_KEYS = ("tracking_id", "metadata")
"""Optional message keys Strands writes (a message's durable id, and metadata it strips before
model calls); Tether keeps them as they are so that Strands -> Tether -> Strands loses nothing."""
_STATUSES = ("success", "error")
_LEAVES: frozenset[type] = frozenset({str, int, bool, type(None)})


def _check_bytes(value: Any, path: list[Any]) -> None:
    if isinstance(value, (bytes, bytearray)):
        return
    if type(value) is dict and len(value) == 1 and BYTES_KEY in value:
        raw = value[BYTES_KEY]
        if not isinstance(raw, str):
            raise ShapeError(path + [BYTES_KEY], "must be a base64 string")
        try:
            decode_base64(raw)
        except ValueError as exc:
            raise ShapeError(path + [BYTES_KEY], str(exc)) from None
        return
    raise ShapeError(path, "must be bytes (or a base64 envelope {'$b64': ...})")


def _check_source(block: Any, kind: str) -> None:
    if not isinstance(block, dict):
        raise ShapeError([], f"{kind} must be an object")
    if not isinstance(block.get("format"), str):
        raise ShapeError(["format"], "must be a string")
    source = block.get("source")
    if not isinstance(source, dict) or "bytes" not in source:
        raise ShapeError(["source", "bytes"], "is missing; a source must be {'bytes': ...}")
    _check_bytes(source["bytes"], ["source", "bytes"])
    if kind == "document" and not isinstance(block.get("name"), str):
        raise ShapeError(["name"], "must be a string")


def _check_tool_result(value: Any) -> None:
    if not isinstance(value, dict):
        raise ShapeError([], "toolResult must be an object")
    if not isinstance(value.get("toolUseId"), str):
        raise ShapeError(["toolUseId"], "must be a string")
    if value.get("status") not in _STATUSES:
        raise ShapeError(["status"], "must be 'success' or 'error'")
    content = value.get("content")
    if not isinstance(content, list):
        raise ShapeError(["content"], "must be a list")
    for i, item in enumerate(content):
        if not isinstance(item, dict) or len(item) != 1:
            raise ShapeError(["content", i], "must be an object with exactly one key")
        for key, inner in item.items():
            if key == "text":
                if not isinstance(inner, str):
                    raise ShapeError(["content", i, "text"], "must be a string")
            elif key == "image" or key == "document":
                try:
                    _check_source(inner, key)
                except ShapeError as exc:
                    raise exc.under(["content", i, key]) from None
            elif key != "json":
                raise ShapeError(["content", i], f"unknown tool result content kind {key!r}; use text, json, image or document")


def _checked_at(check: Callable[[Any], None], value: Any, path: list[Any]) -> None:
    """``check(value)``, its ``ShapeError`` (whose path is relative to ``value``) placed under ``path``."""
    try:
        check(value)
    except ShapeError as exc:
        raise exc.under(path) from None


def check_tool_result(value: Any, path: list[Any]) -> None:
    """Raise ``ShapeError`` (with an absolute path) unless ``value`` is a valid tool result."""
    _checked_at(_check_tool_result, value, path)


def _check_text(value: Any) -> None:
    if not isinstance(value, str):
        raise ShapeError([], "must be a string")


def _check_tool_use(value: Any) -> None:
    if not isinstance(value, dict):
        raise ShapeError([], "must be an object")
    if not isinstance(value.get("toolUseId"), str):
        raise ShapeError(["toolUseId"], "must be a string")
    if not isinstance(value.get("name"), str):
        raise ShapeError(["name"], "must be a string")
    if "input" not in value:
        raise ShapeError(["input"], "is missing")


def _check_image(value: Any) -> None:
    _check_source(value, "image")


def _check_document(value: Any) -> None:
    _check_source(value, "document")


def _check_reasoning(value: Any) -> None:
    if not isinstance(value, dict) or not value:
        raise ShapeError([], "must be a non-empty object")
    if "reasoningText" in value:
        text = value["reasoningText"]
        if not isinstance(text, dict) or not isinstance(text.get("text"), str):
            raise ShapeError(["reasoningText", "text"], "must be a string")
        if "signature" in text and not isinstance(text["signature"], str):
            raise ShapeError(["reasoningText", "signature"], "must be a string")
    if "redactedContent" in value:
        _check_bytes(value["redactedContent"], ["redactedContent"])


def _check_cache_point(value: Any) -> None:
    if not isinstance(value, dict):
        raise ShapeError([], "must be an object")
    if "type" in value and not isinstance(value["type"], str):
        raise ShapeError(["type"], "must be a string")


_BLOCK_CHECKS: dict[str, Callable[[Any], None]] = {
    "text": _check_text,
    "toolUse": _check_tool_use,
    "toolResult": _check_tool_result,
    "image": _check_image,
    "document": _check_document,
    "reasoningContent": _check_reasoning,
    "cachePoint": _check_cache_point,
}
assert set(_BLOCK_CHECKS) == MESSAGE_BLOCK_KINDS


def _check_block(block: Any) -> None:
    if not isinstance(block, dict) or len(block) != 1:
        raise ShapeError([], "a content block must be an object with exactly one key")
    for kind, value in block.items():
        if kind == "text":
            if not isinstance(value, str):
                raise ShapeError(["text"], "must be a string")
            return
        check = _BLOCK_CHECKS.get(kind)
        if check is None:
            if kind in CONTROL_BLOCK_KINDS:
                raise ShapeError([], f"{kind!r} is a prompt-only control block and cannot be stored in a message")
            raise ShapeError([], f"unknown content block kind {kind!r}")
        try:
            check(value)
        except ShapeError as exc:
            raise exc.under([kind]) from None


def check_block(block: Any, path: list[Any]) -> None:
    """Raise ``ShapeError`` (with an absolute path) unless ``block`` is a valid content block."""
    _checked_at(_check_block, block, path)


def _check_message(message: Any) -> None:
    if not isinstance(message, dict):
        raise ShapeError([], "a message must be an object")
    if message.get("role") not in _ROLES:
        raise ShapeError(["role"], "must be 'user' or 'assistant'")
    content = message.get("content")
    if not isinstance(content, list):
        raise ShapeError(["content"], "must be a list of content blocks")
    if len(message) != 2:
        _check_extra_keys(message, pure_json=False)
    for i, block in enumerate(content):
        try:
            _check_block(block)
        except ShapeError as exc:
            raise exc.under(["content", i]) from None


def _check_extra_keys(message: dict[Any, Any], *, pure_json: bool) -> None:
    """Keys of a message beyond role and content: only Strands' ``tracking_id`` (a string) and
    ``metadata`` (a JSON object)."""
    extra = sorted(str(key) for key in message if key not in ("role", "content", *_STRANDS_MESSAGE_KEYS))
    if extra:
        raise ShapeError([extra[0]], "unexpected key in a message (a message is {'role': ..., 'content': [...]})")
    if "tracking_id" in message and type(message["tracking_id"]) is not str:
        raise ShapeError(["tracking_id"], "must be a string")
    if "metadata" in message:
        metadata = message["metadata"]
        if not isinstance(metadata, dict) or (pure_json and type(metadata) is not dict):
            raise ShapeError(["metadata"], "must be an object")
        if pure_json and not is_json(metadata):
            found = find_non_json(metadata, ["metadata"])
            raise ShapeError(found[0] if found else ["metadata"], "is not JSON")


def _check_json_message(message: Any) -> None:
    """Like :func:`_check_message`, and also require pure JSON (exact types, envelopes for bytes)."""
    if type(message) is not dict:
        raise ShapeError([], "a message must be an object")
    role = message.get("role")
    if role not in _ROLES or type(role) is not str:
        raise ShapeError(["role"], "must be 'user' or 'assistant'")
    content = message.get("content")
    if type(content) is not list:
        raise ShapeError(["content"], "must be a list of content blocks")
    if len(message) != 2:
        _check_extra_keys(message, pure_json=True)
    for i, block in enumerate(content):
        try:
            _check_json_block(block)
        except ShapeError as exc:
            raise exc.under(["content", i]) from None


def _check_json_block(block: Any) -> None:
    if type(block) is dict and len(block) == 1:
        for kind, value in block.items():
            if kind == "text" and type(value) is str:
                return
            if type(kind) is str and kind in _BLOCK_CHECKS:
                try:
                    _BLOCK_CHECKS[kind](value)
                except ShapeError as exc:
                    raise exc.under([kind]) from None
                if is_json(value):
                    return
                found = find_non_json(value, [kind])
                raise ShapeError(found[0] if found else [kind], f"is not JSON ({found[1] if found else 'unknown'})")
    _check_block(block)  # raises for any other shape; a valid one here is not exact JSON types
    found = find_non_json(block, [])
    raise ShapeError(found[0] if found else [], f"is not JSON ({found[1] if found else type(block).__name__})")


def check_message(message: Any, path: list[Any]) -> None:
    """Raise ``ShapeError`` (with an absolute path) unless ``message`` is a valid message."""
    _checked_at(_check_message, message, path)


def unvouched_messages(messages: list[Any], pure_json: bool) -> list[int]:
    """Indices of the messages a fast, inlined check cannot vouch for, in order.

    The common shapes (text, toolUse, and toolResult with text/json content) are checked here
    without building paths or calling per-block functions; anything else (other block kinds,
    anything suspicious) is left to the full checker, which either accepts it or names the
    problem. Whatever this accepts the full checker accepts too. With ``pure_json`` each
    toolUse/toolResult is also checked to be pure JSON. May raise ``RecursionError`` on
    circular or absurdly deep tool data (callers fall back to the full checker).
    """
    unsure: list[int] = []
    for index, message in enumerate(messages):
        if type(message) is dict and len(message) == 2:
            content = message.get("content")
            role = message.get("role")
            if type(content) is list and type(role) is str and role in _ROLES:
                for block in content:
                    if type(block) is not dict or len(block) != 1:
                        break
                    value = block.get("text")
                    if value is not None:
                        if type(value) is str:
                            continue
                        break
                    value = block.get("toolUse")
                    if value is not None:
                        if (
                            type(value) is dict
                            and type(value.get("toolUseId")) is str
                            and type(value.get("name")) is str
                            and "input" in value
                        ):
                            if not pure_json:
                                continue
                            if len(value) == 3:  # toolUseId, name and input: only input is left to check
                                value = value["input"]
                                if type(value) in _LEAVES or is_json_unguarded(value):
                                    continue
                        break
                    value = block.get("toolResult")
                    if type(value) is not dict or type(value.get("toolUseId")) is not str:
                        break
                    status = value.get("status")
                    items = value.get("content")
                    if type(items) is not list or type(status) is not str or status not in _STATUSES or (pure_json and len(value) != 3):
                        break
                    for item in items:
                        if type(item) is not dict or len(item) != 1:
                            break
                        value = item.get("text")
                        if value is not None:
                            if type(value) is str:
                                continue
                            break
                        if "json" not in item:
                            break
                        if pure_json:
                            value = item["json"]
                            if type(value) not in _LEAVES and not is_json_unguarded(value):
                                break
                    else:
                        continue
                    break
                else:
                    continue
        unsure.append(index)
    return unsure


def check_messages(value: Any, path: list[Any], *, pure_json: bool = False) -> bool:
    """Raise :class:`~tether.errors.ShapeError` naming the path unless ``value`` is a list of valid messages.

    Returns whether a message holds a block kind with bytes positions (image, document,
    reasoning; or anything the fast check left to the full one): when False, decoding
    envelopes can be skipped. ``pure_json`` also requires pure JSON (as in a snapshot dict).
    """
    if not isinstance(value, list) or (pure_json and type(value) is not list):
        problem = f"must be a list of messages, got {type(value).__name__}"
        raise ShapeError(path, problem, message=f"{json_path(path)} {problem}")
    try:
        unsure: Iterable[int] = unvouched_messages(value, pure_json)
    except RecursionError:
        unsure = range(len(value))
    check = _check_json_message if pure_json else _check_message
    found = False
    for index in unsure:
        try:
            check(value[index])
        except ShapeError as exc:
            raise exc.under(path + [index]) from None
        found = True
    return found


def validate_messages(value: Any, path: list[Any], *, pure_json: bool = False) -> list[Message]:
    """Return ``value`` if it is a list of valid messages, else raise :class:`~tether.errors.ShapeError`.

    The error names the path (``path`` is the root). With ``pure_json`` the messages must also
    be pure JSON (bytes only as envelopes), as in a snapshot dict; one walk checks both.
    """
    check_messages(value, path, pure_json=pure_json)
    result: list[Message] = value
    return result


def validate_system_prompt(value: Any, path: list[Any]) -> None:
    """Raise :class:`~tether.errors.ShapeError` naming the path unless ``value`` is a list of system blocks."""
    if not isinstance(value, list):
        problem = "must be a list of system content blocks or null"
        raise ShapeError(path, problem, message=f"{json_path(path)} {problem}")
    for i, block in enumerate(value):
        if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in SYSTEM_BLOCK_KINDS:
            raise ShapeError(path + [i], "a system block must be {'text': str} or {'cachePoint': {...}}")
        if "text" in block and not isinstance(block["text"], str):
            raise ShapeError(path + [i, "text"], "must be a string")
        if "cachePoint" in block:
            try:
                _check_cache_point(block["cachePoint"])
            except ShapeError as exc:
                raise exc.under(path + [i, "cachePoint"]) from None


def decode_message_bytes(messages: Any, path: list[Any] | None = None) -> None:
    """Turn base64 envelopes back into bytes, in place, where messages allow bytes.

    Shapes that are not messages are skipped (validation reports them); an envelope with
    invalid base64 raises ``ShapeError`` naming its absolute path (``path`` prefixes it,
    default ``["messages"]``).
    """
    base = ["messages"] if path is None else path
    if not isinstance(messages, list):
        return
    for m_index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b_index, block in enumerate(content):
            if not isinstance(block, dict) or "text" in block or "toolUse" in block or "cachePoint" in block:
                continue
            where = base + [m_index, "content", b_index]
            if "toolResult" in block:
                decode_tool_result_bytes(block["toolResult"], where + ["toolResult"])
            elif "image" in block:
                _decode_source(block["image"], where + ["image"])
            elif "document" in block:
                _decode_source(block["document"], where + ["document"])
            elif "reasoningContent" in block:
                reasoning = block["reasoningContent"]
                if isinstance(reasoning, dict) and "redactedContent" in reasoning:
                    reasoning["redactedContent"] = _decoded(reasoning["redactedContent"], where + ["reasoningContent", "redactedContent"])


def decode_tool_result_bytes(result: Any, path: list[Any]) -> None:
    """Decode the envelopes of a tool result's image/document content, in place."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return
    for i, item in enumerate(content):
        if isinstance(item, dict):
            for kind in ("image", "document"):
                if kind in item:
                    _decode_source(item[kind], path + ["content", i, kind])


def _decode_source(block: Any, path: list[Any]) -> None:
    source = block.get("source") if isinstance(block, dict) else None
    if isinstance(source, dict) and "bytes" in source:
        source["bytes"] = _decoded(source["bytes"], path + ["source", "bytes"])


def _decoded(value: Any, path: list[Any]) -> Any:
    if type(value) is dict and len(value) == 1 and isinstance(value.get(BYTES_KEY), str):
        try:
            return decode_base64(value[BYTES_KEY])
        except ValueError as exc:
            raise ShapeError(path + [BYTES_KEY], str(exc)) from None
    return value
