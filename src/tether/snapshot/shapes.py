"""The snapshot shapes of conversation-manager state and interrupt state, and Tether's own.

A snapshot holds both in the shapes Strands writes, so that Strands loads what Tether writes:

- ``conversation_manager_state``: ``{"__name__": "SlidingWindowConversationManager",
  "removed_message_count": 0, ...}`` (the manager's class name and its counters);
- ``interrupt_state``: ``{"interrupts": {id: {id, name, reason, response}}, "context": {...},
  "activated": false}``.

A run keeps them in Tether's shapes (see :mod:`tether.interrupts`): interrupt records also
carry ``source`` and ``tool_use_id``, an unanswered record has no ``response`` key, and an empty
interrupt state is ``{}``. Tether-only data goes where a Strands reader ignores it: the records'
extra fields in ``interrupt_state["tether_interrupts"]`` (written only when there are any), the
loop cursor of an interrupted cycle in ``context`` (Strands keeps it as it is), and
``output_tool``/``metrics`` as top-level keys of ``interrupt_state``. Keys Strands writes that
Tether does not use (``model_call_count``, ``pending_tool_execution``) are kept as they are, so
Strands -> Tether -> Strands loses nothing.

Readers accept both the Strands shapes and Tether's earlier ones (``{"kind": "sliding_window",
...}`` and ``{}``), so snapshots written by older Tethers still load.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MANAGER_NAMES: dict[str, str] = {
    "null": "NullConversationManager",
    "sliding_window": "SlidingWindowConversationManager",
    "summarizing": "SummarizingConversationManager",
}
"""The class name Strands writes in ``__name__`` for each built-in manager kind."""

MANAGER_KINDS: dict[str, str] = {name: kind for kind, name in MANAGER_NAMES.items()}

MANAGER_DEFAULTS: dict[str, dict[str, Any]] = {
    "sliding_window": {"model_call_count": 0},
    "summarizing": {"summary_message": None},
}
"""Keys Strands always writes for a manager kind, with the value Tether writes when it has none."""

TETHER_INTERRUPTS = "tether_interrupts"
"""The ``interrupt_state`` key holding the Tether-only fields of its interrupt records."""

_STRANDS_RECORD = ("id", "name", "reason", "response")
_TETHER_RECORD = ("source", "tool_use_id")
_STRANDS_KEYS = frozenset({"interrupts", "context", "activated", TETHER_INTERRUPTS})


def manager_state_out(kind: str, name: str, state: dict[str, Any]) -> dict[str, Any]:
    """A run's conversation-manager ``state`` in the snapshot shape.

    Args:
        kind: The manager's kind (``ConversationManager.kind``).
        name: The class name that goes in ``__name__``.
        state: The run's ``conversation_manager_state`` (not changed).
    """
    out: dict[str, Any] = {"__name__": name, "removed_message_count": state.get("removed_message_count", 0)}
    for key, value in state.items():
        if key not in ("kind", "__name__"):
            out.setdefault(key, value)
    for key, value in MANAGER_DEFAULTS.get(kind, {}).items():
        out.setdefault(key, value)
    return out


def manager_state_writer(state: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(kind, __name__)`` of the manager that wrote ``state`` (either may be None)."""
    name = state.get("__name__")
    kind = state.get("kind")
    if isinstance(name, str) and kind is None:
        kind = MANAGER_KINDS.get(name)
    return (kind if isinstance(kind, str) else None), (name if isinstance(name, str) else None)


def manager_state_in(state: dict[str, Any]) -> dict[str, Any]:
    """The run's shape of a conversation-manager state in either snapshot shape (a new dict).

    Keys Strands always writes are dropped when they hold the value Tether writes for them
    anyway (:data:`MANAGER_DEFAULTS`), so a round trip through a snapshot changes nothing.
    """
    out = dict(state)
    out.pop("__name__", None)
    out.pop("kind", None)
    kind, _ = manager_state_writer(state)
    for key, default in MANAGER_DEFAULTS.get(kind or "", {}).items():
        if key in out and out[key] == default and type(out[key]) is type(default):
            del out[key]
    return out


def legacy_manager_state(state: dict[str, Any]) -> dict[str, Any]:
    """Tether's first shape (``{"kind": ...}``) in the snapshot shape; other states as they are."""
    kind = state.get("kind")
    if "__name__" in state or not isinstance(kind, str) or kind not in MANAGER_NAMES:
        return state
    return manager_state_out(kind, MANAGER_NAMES[kind], state)


def interrupt_state_out(state: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``interrupt_state`` in the snapshot shape (new dicts; values are shared)."""
    records: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for ident, record in (state.get("interrupts") or {}).items():
        records[ident] = {
            "id": record.get("id", ident),
            "name": record.get("name"),
            "reason": record.get("reason"),
            "response": record.get("response"),
        }
        extra = {key: record[key] for key in _TETHER_RECORD if key in record}
        if "response" in record and record["response"] is None:
            extra["answered"] = True  # a None answer: Strands' shape alone reads as unanswered
        if extra:
            extras[ident] = extra
    out: dict[str, Any] = {"interrupts": records, "context": state.get("context") or {}, "activated": bool(state.get("activated"))}
    for key, value in state.items():
        if key not in _STRANDS_KEYS:
            out[key] = value
    if extras:
        out[TETHER_INTERRUPTS] = extras
    return out


def interrupt_state_in(state: dict[str, Any]) -> dict[str, Any]:
    """The run's shape of an interrupt state in either snapshot shape (new dicts; values shared).

    A record in Tether's first shape (it has ``source``/``tool_use_id``) is answered when it
    has a ``response`` key; in Strands' shape, when its ``response`` is not None (or
    ``tether_interrupts`` says a None answer was given).
    """
    extras = state.get(TETHER_INTERRUPTS) or {}
    records: dict[str, Any] = {}
    for ident, record in (state.get("interrupts") or {}).items():
        extra = extras.get(ident) or {}
        out = {"id": record.get("id", ident), "name": record.get("name"), "reason": record.get("reason")}
        for key in _TETHER_RECORD:
            if key in extra:
                out[key] = extra[key]
            elif key in record:
                out[key] = record[key]
        tether_shaped = any(key in record for key in _TETHER_RECORD)
        answered = "response" in record if tether_shaped else record.get("response") is not None or bool(extra.get("answered"))
        if answered:
            out["response"] = record.get("response")
        records[ident] = out
    result: dict[str, Any] = {}
    if records:
        result["interrupts"] = records
    if state.get("activated"):
        result["activated"] = True
    if state.get("context"):
        result["context"] = state["context"]
    for key, value in state.items():
        if key not in _STRANDS_KEYS:
            result[key] = value
    return result


def is_interrupt_state(state: dict[str, Any]) -> bool:
    """Whether ``state`` has the containers the converters read (records and extras as dicts)."""
    records = state.get("interrupts") or {}
    extras = state.get(TETHER_INTERRUPTS) or {}
    return (
        isinstance(records, dict)
        and isinstance(extras, dict)
        and all(isinstance(record, dict) for record in records.values())
        and all(isinstance(extra, dict) for extra in extras.values())
    )
