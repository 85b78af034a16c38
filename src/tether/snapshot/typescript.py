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
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from .._json import BYTES_KEY, brief, decode_base64
from ..errors import ShapeError, SnapshotError
from .migrations import SNAPSHOT_SCHEMA_VERSION
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
    multi-agent scope, or a run stopped for interrupts TypeScript did not raise.
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
    out = _fields(data, where + ["data"], _TS_FIELDS, _FROM_TS, "a TypeScript snapshot field")
    return {"schema_version": version, "scope": scope, "created_at": created_at, "data": out, "app_data": copy.deepcopy(app_data)}


def _fields(data: dict[str, Any], where: list[Any], names: dict[str, str], converters: dict[str, Converter], what: str) -> dict[str, Any]:
    """``data``'s fields under their ``names`` in the other document, each converted.

    Tether-only fields (:data:`_TETHER_ONLY_FIELDS`) keep their names both ways: the TypeScript
    SDK ignores them, and Tether reads them back (checking them when the snapshot is loaded).
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in names:
            converted = converters[key](value, where + [key])
            if converted is not _ABSENT:
                out[names[key]] = converted
        elif key in _TETHER_ONLY_FIELDS:
            out[key] = copy.deepcopy(value)
        else:
            raise ShapeError(where + [key], f"is not {what}; fields are: {', '.join(names)}")
    return out


def _object(value: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ShapeError(where, f"must be an object, got {type(value).__name__}")
    return copy.deepcopy(value)


@dataclass(frozen=True)
class _Direction:
    """What differs between the two directions of a message's conversion (read key -> written key)."""

    tracking: tuple[str, str]
    reasoning: tuple[str, str]
    cache_type: tuple[str, str]
    convert_reasoning: Converter
    convert_media: Callable[[str, Any, list[Any]], dict[str, Any]]


def _messages(value: Any, where: list[Any], way: _Direction) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a list of messages, got {type(value).__name__}")
    return [_message(message, where + [i], way) for i, message in enumerate(value)]


def _message(message: Any, where: list[Any], way: _Direction) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ShapeError(where, "a message must be an object")
    tracking, written = way.tracking
    for key in message:
        if key not in ("role", "content", tracking, "metadata"):
            raise ShapeError(where + [key], f"is not a key of a message (role, content, {tracking}, metadata)")
    content = message.get("content")
    if not isinstance(content, list):
        raise ShapeError(where + ["content"], "must be a list of content blocks")
    out: dict[str, Any] = {
        "role": message.get("role"),
        "content": [_block(block, where + ["content", i], way) for i, block in enumerate(content)],
    }
    if tracking in message:
        out[written] = message[tracking]
    if "metadata" in message:
        out["metadata"] = copy.deepcopy(message["metadata"])
    return out


def _block(block: Any, where: list[Any], way: _Direction) -> dict[str, Any]:
    kind = _kind(block, where)
    value = block[kind]
    at = where + [kind]
    if kind in ("text", "toolUse"):
        return {kind: copy.deepcopy(value)}
    if kind == "toolResult":
        result = _object(value, at)
        result["content"] = _result_content(result.get("content"), at + ["content"], way.convert_media)
        return {"toolResult": result}
    if kind == way.reasoning[0]:
        return {way.reasoning[1]: way.convert_reasoning(value, at)}
    if kind == "cachePoint":
        point = _object(value, at)
        read, written = way.cache_type
        if read not in point:
            raise ShapeError(at + [read], "is missing")
        return {"cachePoint": {written: point.pop(read), **point}}
    if kind in ("image", "document"):
        return {kind: way.convert_media(kind, value, at)}
    raise _unsupported(kind, where)


def _system_prompt(value: Any, where: list[Any], way: _Direction) -> Any:
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ShapeError(where, f"must be a string, a list of system blocks or null, got {type(value).__name__}")
    return [_block(block, where + [i], way) for i, block in enumerate(value)]


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


_FROM = _Direction(
    ("trackingId", "tracking_id"), ("reasoning", "reasoningContent"), ("cacheType", "type"), _reasoning_from_ts, _media_from_ts
)


def _converters(way: _Direction, interrupts: Converter, names: dict[str, str]) -> dict[str, Converter]:
    """Each field's converter, under its name in the document read (``names``: Tether's -> that name)."""
    converters: dict[str, Converter] = {
        "messages": partial(_messages, way=way),
        "state": _object,
        "system_prompt": partial(_system_prompt, way=way),
        "model_state": _object,
        "interrupt_state": interrupts,
    }
    return {names[name]: converter for name, converter in converters.items()}


_FROM_TS = _converters(_FROM, _interrupts_from_ts, _TETHER_FIELDS)


# -- Tether -> TypeScript ----------------------------------------------------------------------


def _to_typescript(document: Any, where: list[Any]) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ShapeError(where, f"must be an object, got {type(document).__name__}")
    version = document.get("schema_version")
    if version != SNAPSHOT_SCHEMA_VERSION or not isinstance(version, str):
        problem = f"must be {SNAPSHOT_SCHEMA_VERSION!r}, got {brief(version)}; read it with Snapshot.from_dict first (it migrates)"
        raise ShapeError(where + ["schema_version"], problem)
    scope = document.get("scope", _SCOPE)
    if scope != _SCOPE:
        raise ShapeError(where + ["scope"], f"must be 'agent' to be written as a TypeScript snapshot, got {brief(scope)}")
    data = document.get("data")
    if not isinstance(data, dict):
        raise ShapeError(where + ["data"], f"must be an object, got {type(data).__name__}")
    out = _fields(data, where + ["data"], _TETHER_FIELDS, _TO_TS, "a snapshot field")
    return {
        "scope": scope,
        "schemaVersion": TS_SNAPSHOT_SCHEMA_VERSION,
        "createdAt": document.get("created_at"),
        "data": out,
        "appData": copy.deepcopy(document.get("app_data") or {}),
    }


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


def _interrupts_to_ts(value: Any, where: list[Any]) -> dict[str, Any]:
    state = _object(value, where)
    kept = state.get(TS_ONLY) or {}
    if state.get("activated") and not kept:
        raise ShapeError(
            where + ["activated"],
            "the run is stopped for interrupts raised by Tether or Strands Python, which only that SDK can resume "
            "(interrupt ids are each SDK's own); answer them there before writing a TypeScript snapshot",
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


_TO = _Direction(("tracking_id", "trackingId"), ("reasoningContent", "reasoning"), ("type", "cacheType"), _reasoning_to_ts, _media_to_ts)
_TO_TS = _converters(_TO, _interrupts_to_ts, {name: name for name in _TETHER_FIELDS})
