"""The snapshot document of Strands' TypeScript SDK (``@strands-agents/sdk``), to and from Tether's.

Strands' Python snapshot API mirrors the TypeScript one, but the documents differ:

========================================  ==============================================
TypeScript (``agent.takeSnapshot()``)     Tether / Strands Python (``to_dict()``)
========================================  ==============================================
``schemaVersion``, ``createdAt``,         ``schema_version``, ``created_at``, ``app_data``
``appData``
``data.systemPrompt`` (string, blocks     ``data.system_prompt``
or null)
``data.modelState``                       ``data.model_state``
``data.interrupts`` (``{interrupts,       ``data.interrupt_state`` (``{interrupts, context,
activated, resumeResponses?,              activated}``; records' ``source`` under
pendingToolExecution?}``; records carry   ``tether_interrupts``)
``source``)
message ``trackingId``                    message ``tracking_id``
``{"reasoning": {text, signature,         ``{"reasoningContent": {"reasoningText": {text,
redactedContent}}``                       signature}, "redactedContent": bytes}}``
``{"cachePoint": {"cacheType", "ttl"}}``  ``{"cachePoint": {"type", "ttl"}}``
bytes as base64 strings                   bytes as ``{"$b64": ...}`` envelopes
========================================  ==============================================

``data.messages`` and ``data.state`` have the same names; text, tool-use, tool-result and JSON
blocks the same shapes. What only one side has travels where the other side's reader ignores
it, so neither trip loses anything: a TypeScript interrupt state's ``resumeResponses`` and
``pendingToolExecution`` are kept verbatim under ``interrupt_state["typescript"]`` (Tether and
Strands Python ignore that key), and Tether's ``conversation_manager_state`` and the
``tether_interrupts`` of an interrupt state are written into the TypeScript document under
those snake-case names (the TypeScript SDK ignores keys it does not know).

Nothing is guessed: a schema version other than the one the TypeScript SDK writes (``"1.0"``),
a block kind Tether's messages cannot hold (audio, video, guard content, citations, media by
URL or S3 location), or a Tether run stopped for its own interrupts (which only Tether can
resume) raises :class:`~tether.errors.SnapshotError` naming the field.

Both functions are pure ``dict -> dict`` conversions of JSON documents (no I/O); the result
shares nothing with the input. :meth:`tether.Snapshot.from_dict` recognises a TypeScript
document and converts it with :func:`from_typescript`; :meth:`tether.Snapshot.to_typescript`
writes one with :func:`to_typescript`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .._json import BYTES_KEY, brief, decode_base64
from ..errors import ShapeError, SnapshotError
from .shapes import TETHER_INTERRUPTS

TS_SNAPSHOT_SCHEMA_VERSION = "1.0"
"""The snapshot schema version ``@strands-agents/sdk`` writes (``SNAPSHOT_SCHEMA_VERSION``)."""

TS_SNAPSHOT_VERSIONS: tuple[str, ...] = (TS_SNAPSHOT_SCHEMA_VERSION,)
"""Every TypeScript schema version this Tether converts."""

TS_KEYS = frozenset({"scope", "schemaVersion", "createdAt", "data", "appData"})
"""The keys of a TypeScript snapshot document (``Snapshot`` in ``types/snapshot.ts``)."""

TS_ONLY = "typescript"
"""The ``interrupt_state`` key keeping the TypeScript-only parts of an interrupt state."""

_TS_INTERRUPT_ONLY = ("resumeResponses", "pendingToolExecution")
_TS_FIELDS = {
    "messages": "messages",
    "state": "state",
    "systemPrompt": "system_prompt",
    "modelState": "model_state",
    "interrupts": "interrupt_state",
}
_TETHER_FIELDS = {tether: ts for ts, tether in _TS_FIELDS.items()}
_TETHER_ONLY_FIELDS = ("conversation_manager_state",)
_SCOPE = "agent"
_UNSUPPORTED_BLOCKS = {
    "audio": "audio",
    "video": "video",
    "guardContent": "guard content",
    "citations": "citations",
    "citationsContent": "citations",
}

Converter = Callable[[Any, list[Any]], Any]

_ABSENT: Any = object()
"""A field that is present in the TypeScript document but means "leave unchanged" (``interrupts: null``)."""


def is_typescript(document: Any) -> bool:
    """Whether ``document`` is a TypeScript snapshot: an object with a camelCase header key
    (``schemaVersion``, ``createdAt`` or ``appData``) and no ``schema_version``."""
    return (
        isinstance(document, dict)
        and "schema_version" not in document
        and any(key in document for key in ("schemaVersion", "createdAt", "appData"))
    )


def from_typescript(document: Any, *, path: str = "snapshot") -> dict[str, Any]:
    """A TypeScript snapshot document as Tether's (and Strands Python's) snapshot dict.

    Args:
        document: ``agent.takeSnapshot()`` of ``@strands-agents/sdk``, as parsed JSON.
        path: The name of the document in error messages.

    Raises :class:`SnapshotError` naming the field for an unknown schema version, a scope other
    than ``"agent"``, a missing or malformed field, or content Tether's messages cannot hold.
    """
    try:
        return _from_typescript(document, [path])
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None


def to_typescript(document: Any, *, path: str = "snapshot") -> dict[str, Any]:
    """Tether's snapshot dict (``Snapshot.to_dict()``) as the document ``@strands-agents/sdk``
    loads with ``agent.loadSnapshot``.

    Args:
        document: A snapshot dict of schema version ``"1.0"`` and scope ``"agent"``.
        path: The name of the document in error messages.

    Raises :class:`SnapshotError` naming the field for what the TypeScript SDK cannot load: a
    multi-agent scope, or a run stopped for Tether's own interrupts.
    """
    try:
        return _to_typescript(document, [path])
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None


# -- TypeScript -> Tether ----------------------------------------------------------------------


def _from_typescript(document: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ShapeError(where, f"must be an object, got {type(document).__name__}")
    extra = sorted(str(key) for key in document if key not in TS_KEYS)
    if extra:
        raise ShapeError(where + [extra[0]], "is not a key of a TypeScript snapshot (scope, schemaVersion, createdAt, data, appData)")
    version = document.get("schemaVersion")
    if "schemaVersion" not in document:
        raise ShapeError(where + ["schemaVersion"], "is missing; a TypeScript snapshot carries its schema version")
    if not isinstance(version, str) or version not in TS_SNAPSHOT_VERSIONS:
        known = ", ".join(map(repr, TS_SNAPSHOT_VERSIONS))
        problem = f"{brief(version)} is not a TypeScript snapshot schema version this Tether reads ({known})"
        raise ShapeError(where + ["schemaVersion"], problem)
    scope = document.get("scope")
    if scope != _SCOPE:
        raise ShapeError(where + ["scope"], f"must be 'agent' (TypeScript multi-agent snapshots are not converted), got {brief(scope)}")
    created_at = document.get("createdAt")
    if not isinstance(created_at, str):
        raise ShapeError(where + ["createdAt"], f"must be an ISO-8601 string, got {brief(created_at)}")
    try:
        datetime.fromisoformat(created_at)
    except ValueError:
        raise ShapeError(where + ["createdAt"], f"must be an ISO-8601 timestamp, got {created_at!r:.60}") from None
    if "data" not in document:
        raise ShapeError(where + ["data"], "is missing; it holds the captured fields")
    data = document["data"]
    if not isinstance(data, dict):
        raise ShapeError(where + ["data"], f"must be an object, got {type(data).__name__}")
    app_data = document.get("appData", {})
    if not isinstance(app_data, dict):
        raise ShapeError(where + ["appData"], f"must be an object, got {type(app_data).__name__}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        at = where + ["data", key]
        if key in _TS_FIELDS:
            converted = _FROM_TS[key](value, at)
            if converted is not _ABSENT:
                out[_TS_FIELDS[key]] = converted
        elif key in _TETHER_ONLY_FIELDS:
            out[key] = copy.deepcopy(value)  # written by to_typescript; checked when loaded
        else:
            raise ShapeError(at, f"is not a TypeScript snapshot field; fields are: {', '.join(_TS_FIELDS)}")
    return {"schema_version": version, "scope": scope, "created_at": created_at, "data": out, "app_data": copy.deepcopy(app_data)}


def _object(value: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ShapeError(where, f"must be an object, got {type(value).__name__}")
    return copy.deepcopy(value)


def _messages_from_ts(value: Any, where: list[Any]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a list of messages, got {type(value).__name__}")
    return [_message_from_ts(message, where + [i]) for i, message in enumerate(value)]


def _message_from_ts(message: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ShapeError(where, "a message must be an object")
    for key in message:
        if key not in ("role", "content", "trackingId", "metadata"):
            raise ShapeError(where + [key], "is not a key of a TypeScript message (role, content, trackingId, metadata)")
    content = message.get("content")
    if not isinstance(content, list):
        raise ShapeError(where + ["content"], "must be a list of content blocks")
    out: dict[str, Any] = {
        "role": message.get("role"),
        "content": [_block_from_ts(block, where + ["content", i]) for i, block in enumerate(content)],
    }
    if "trackingId" in message:
        out["tracking_id"] = message["trackingId"]
    if "metadata" in message:
        out["metadata"] = copy.deepcopy(message["metadata"])
    return out


def _block_from_ts(block: Any, where: list[Any]) -> dict[str, Any]:
    kind = _kind(block, where)
    value = block[kind]
    at = where + [kind]
    if kind in ("text", "toolUse"):
        return {kind: copy.deepcopy(value)}
    if kind == "toolResult":
        result = _object(value, at)
        result["content"] = _result_content(result.get("content"), at + ["content"], _media_from_ts)
        return {"toolResult": result}
    if kind == "reasoning":
        return {"reasoningContent": _reasoning_from_ts(value, at)}
    if kind == "cachePoint":
        point = _object(value, at)
        if "cacheType" not in point:
            raise ShapeError(at + ["cacheType"], "is missing")
        return {"cachePoint": {"type": point.pop("cacheType"), **point}}
    if kind in ("image", "document"):
        return {kind: _media_from_ts(kind, value, at)}
    raise _unsupported(kind, where)


def _kind(block: Any, where: list[Any]) -> str:
    if not isinstance(block, dict) or len(block) != 1:
        raise ShapeError(where, "a content block must be an object with exactly one key")
    kind: str = next(iter(block))
    return kind


def _unsupported(kind: str, where: list[Any]) -> ShapeError:
    what = _UNSUPPORTED_BLOCKS.get(kind)
    if what is not None:
        return ShapeError(
            where + [kind],
            f"{what} blocks cannot be held in a Tether message (text, toolUse, toolResult, image, document, reasoning, cachePoint)",
        )
    return ShapeError(where, f"unknown content block kind {kind!r}")


def _result_content(value: Any, where: list[Any], media: Callable[[str, Any, list[Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ShapeError(where, "must be a list")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        kind = _kind(item, where + [i])
        if kind in ("text", "json"):
            out.append({kind: copy.deepcopy(item[kind])})
        elif kind in ("image", "document"):
            out.append({kind: media(kind, item[kind], where + [i, kind])})
        else:
            raise _unsupported(kind, where + [i])
    return out


def _media_from_ts(kind: str, value: Any, where: list[Any]) -> dict[str, Any]:
    media = _object(value, where)
    source = media.get("source")
    if not isinstance(source, dict) or "bytes" not in source:
        held = sorted(source) if isinstance(source, dict) else type(source).__name__
        raise ShapeError(where + ["source"], f"must hold bytes (a Tether {kind} has no other source), got {held}")
    raw = source["bytes"]
    if not isinstance(raw, str):
        raise ShapeError(where + ["source", "bytes"], "must be a base64 string")
    media["source"] = {**source, "bytes": {BYTES_KEY: _base64(raw, where + ["source", "bytes"])}}
    return media


def _base64(text: str, where: list[Any]) -> str:
    try:
        decode_base64(text)
    except ValueError as exc:
        raise ShapeError(where, str(exc)) from None
    return text


def _reasoning_from_ts(value: Any, where: list[Any]) -> dict[str, Any]:
    reasoning = _object(value, where)
    extra = sorted(key for key in reasoning if key not in ("text", "signature", "redactedContent"))
    if extra:
        raise ShapeError(where + [extra[0]], "is not a key of a TypeScript reasoning block (text, signature, redactedContent)")
    out: dict[str, Any] = {}
    if "text" in reasoning:
        out["reasoningText"] = {"text": reasoning["text"]}
        if "signature" in reasoning:
            out["reasoningText"]["signature"] = reasoning["signature"]
    elif "signature" in reasoning:
        raise ShapeError(where + ["signature"], "a reasoning signature without its text cannot be held in a Tether message")
    if "redactedContent" in reasoning:
        raw = reasoning["redactedContent"]
        if not isinstance(raw, str):
            raise ShapeError(where + ["redactedContent"], "must be a base64 string")
        out["redactedContent"] = {BYTES_KEY: _base64(raw, where + ["redactedContent"])}
    if not out:
        raise ShapeError(where, "must hold text or redactedContent")
    return out


def _system_prompt_from_ts(value: Any, where: list[Any]) -> Any:
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a string, a list of system blocks or null, got {type(value).__name__}")
    return [_block_from_ts(block, where + [i]) for i, block in enumerate(value)]


def _interrupts_from_ts(value: Any, where: list[Any]) -> Any:
    if value is None:
        return _ABSENT  # the TypeScript agent leaves its interrupt state as it is
    state = _object(value, where)
    records = state.get("interrupts", {})
    if not isinstance(records, dict):
        raise ShapeError(where + ["interrupts"], "must map interrupt ids to {id, name, reason, response, source} objects")
    activated = state.get("activated", False)
    if not isinstance(activated, bool):
        raise ShapeError(where + ["activated"], "must be true or false")
    out_records: dict[str, Any] = {}
    extras: dict[str, Any] = dict(state.get(TETHER_INTERRUPTS) or {})
    for ident, record in records.items():
        at = where + ["interrupts", ident]
        if not isinstance(record, dict):
            raise ShapeError(at, "must be an {id, name, reason, response, source} object")
        out_records[ident] = {
            "id": record.get("id", ident),
            "name": record.get("name"),
            "reason": record.get("reason"),
            "response": record.get("response"),
        }
        extra = dict(extras.get(ident) or {})
        extra["source"] = record.get("source", "hook")  # the TypeScript SDK's default for a record without one
        if "response" in record and record["response"] is None:
            extra["answered"] = True  # a null answer: Strands' shape alone reads as unanswered
        extras[ident] = extra
    out: dict[str, Any] = {"interrupts": out_records, "context": {}, "activated": activated}
    if extras:
        out[TETHER_INTERRUPTS] = extras
    kept = {key: state[key] for key in _TS_INTERRUPT_ONLY if key in state}
    if kept:
        out[TS_ONLY] = kept
    unknown = sorted(key for key in state if key not in ("interrupts", "activated", TETHER_INTERRUPTS, *_TS_INTERRUPT_ONLY))
    if unknown:
        raise ShapeError(
            where + [unknown[0]],
            "is not a key of a TypeScript interrupt state (interrupts, activated, resumeResponses, pendingToolExecution)",
        )
    return out


_FROM_TS: dict[str, Converter] = {
    "messages": _messages_from_ts,
    "state": _object,
    "systemPrompt": _system_prompt_from_ts,
    "modelState": _object,
    "interrupts": _interrupts_from_ts,
}


# -- Tether -> TypeScript ----------------------------------------------------------------------


def _to_typescript(document: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ShapeError(where, f"must be an object, got {type(document).__name__}")
    scope = document.get("scope", _SCOPE)
    if scope != _SCOPE:
        raise ShapeError(where + ["scope"], f"must be 'agent' to be written as a TypeScript snapshot, got {brief(scope)}")
    data = document.get("data")
    if not isinstance(data, dict):
        raise ShapeError(where + ["data"], f"must be an object, got {type(data).__name__}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        at = where + ["data", key]
        if key in _TETHER_FIELDS:
            out[_TETHER_FIELDS[key]] = _TO_TS[key](value, at)
        elif key in _TETHER_ONLY_FIELDS:
            out[key] = copy.deepcopy(value)  # the TypeScript SDK ignores it; Tether reads it back
        else:
            raise ShapeError(at, "is not a snapshot field")
    return {
        "scope": scope,
        "schemaVersion": TS_SNAPSHOT_SCHEMA_VERSION,
        "createdAt": document.get("created_at"),
        "data": out,
        "appData": copy.deepcopy(document.get("app_data") or {}),
    }


def _messages_to_ts(value: Any, where: list[Any]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a list of messages, got {type(value).__name__}")
    out: list[dict[str, Any]] = []
    for i, message in enumerate(value):
        at = where + [i]
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise ShapeError(at, "must be a message {role, content}")
        converted: dict[str, Any] = {
            "role": message.get("role"),
            "content": [_block_to_ts(block, at + ["content", j]) for j, block in enumerate(message["content"])],
        }
        if "tracking_id" in message:
            converted["trackingId"] = message["tracking_id"]
        if "metadata" in message:
            converted["metadata"] = copy.deepcopy(message["metadata"])
        out.append(converted)
    return out


def _block_to_ts(block: Any, where: list[Any]) -> dict[str, Any]:
    kind = _kind(block, where)
    value = block[kind]
    at = where + [kind]
    if kind in ("text", "toolUse"):
        return {kind: copy.deepcopy(value)}
    if kind == "toolResult":
        result = _object(value, at)
        result["content"] = _result_content(result.get("content"), at + ["content"], _media_to_ts)
        return {"toolResult": result}
    if kind == "reasoningContent":
        return {"reasoning": _reasoning_to_ts(value, at)}
    if kind == "cachePoint":
        point = _object(value, at)
        if "type" not in point:
            raise ShapeError(at + ["type"], "is missing")
        return {"cachePoint": {"cacheType": point.pop("type"), **point}}
    if kind in ("image", "document"):
        return {kind: _media_to_ts(kind, value, at)}
    raise _unsupported(kind, where)


def _media_to_ts(kind: str, value: Any, where: list[Any]) -> dict[str, Any]:
    media = _object(value, where)
    source = media.get("source")
    raw = source.get("bytes") if isinstance(source, dict) else None
    media["source"] = {**(source or {}), "bytes": _base64_text(raw, where + ["source", "bytes"])}
    return media


def _base64_text(value: Any, where: list[Any]) -> str:
    """The base64 text of an envelope (as the TypeScript SDK writes bytes)."""
    if isinstance(value, dict) and isinstance(value.get(BYTES_KEY), str) and len(value) == 1:
        return _base64(value[BYTES_KEY], where + [BYTES_KEY])
    raise ShapeError(where, "must be a base64 envelope {'$b64': ...}")


def _reasoning_to_ts(value: Any, where: list[Any]) -> dict[str, Any]:
    reasoning = _object(value, where)
    out: dict[str, Any] = {}
    text = reasoning.get("reasoningText")
    if isinstance(text, dict):
        out["text"] = text.get("text")
        if "signature" in text:
            out["signature"] = text["signature"]
    if "redactedContent" in reasoning:
        out["redactedContent"] = _base64_text(reasoning["redactedContent"], where + ["redactedContent"])
    return out


def _system_prompt_to_ts(value: Any, where: list[Any]) -> Any:
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a string, a list of system blocks or null, got {type(value).__name__}")
    return [_block_to_ts(block, where + [i]) for i, block in enumerate(value)]


def _interrupts_to_ts(value: Any, where: list[Any]) -> dict[str, Any]:
    state = _object(value, where)
    kept = state.get(TS_ONLY) or {}
    if state.get("activated") and not kept:
        raise ShapeError(
            where + ["activated"],
            "the run is stopped for Tether's own interrupts, which only Tether can resume (interrupt ids are each SDK's own); "
            "answer them in Tether before writing a TypeScript snapshot",
        )
    extras = state.get(TETHER_INTERRUPTS) or {}
    records: dict[str, Any] = {}
    for ident, record in (state.get("interrupts") or {}).items():
        extra = extras.get(ident) or {}
        converted: dict[str, Any] = {"id": record.get("id", ident), "name": record.get("name")}
        if record.get("reason") is not None:
            converted["reason"] = record["reason"]
        if record.get("response") is not None or extra.get("answered"):
            converted["response"] = record.get("response")
        converted["source"] = extra.get("source", "hook")
        records[ident] = converted
    out: dict[str, Any] = {"interrupts": records, "activated": bool(state.get("activated"))}
    out.update(kept)
    tether_only = {ident: extra for ident, extra in extras.items() if set(extra) - {"source", "answered"}}
    if tether_only:
        out[TETHER_INTERRUPTS] = tether_only  # the TypeScript SDK ignores it; Tether reads it back
    return out


_TO_TS: dict[str, Converter] = {
    "messages": _messages_to_ts,
    "state": _object,
    "system_prompt": _system_prompt_to_ts,
    "model_state": _object,
    "interrupt_state": _interrupts_to_ts,
}
