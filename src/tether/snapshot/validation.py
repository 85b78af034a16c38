"""Validating a snapshot's ``data``: known fields, valid shapes, and pure JSON throughout.

The checks of the parts (messages, a conversation manager's state, the interrupt state and the
cursor of an interrupted cycle) raise :class:`~tether.errors.ShapeError` naming the path;
:func:`check_data` turns every one of them into a :class:`~tether.errors.SnapshotError` with
the same message, in one place.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .._json import describe_non_json, is_json
from .._messages import check_message, check_messages, check_tool_result, validate_system_prompt
from ..errors import ShapeError, SnapshotError
from ..loop.state import CHECKPOINT_POSITIONS
from .fields import FIELDS
from .shapes import TETHER_INTERRUPTS

_PHASES = ("model", "tools", "idle")


def check_created_at(value: Any, where: str) -> str | None:
    """``value`` if it is an ISO-8601 timestamp (or None), else a :class:`SnapshotError`."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise SnapshotError(f"{where} must be an ISO-8601 string, got {type(value).__name__}")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise SnapshotError(f"{where} must be an ISO-8601 timestamp, got {value!r:.60}") from None
    return value


def check_data(data: dict[str, Any], path: str, *, parsed: bool = False) -> bool:
    """Validate a snapshot's ``data``: known fields, valid shapes, and pure JSON throughout.

    Messages are checked in one walk (shape and JSON together); the other fields are checked
    for shape, then for JSON. ``parsed`` says ``data`` came straight from a JSON parser, so it
    is JSON by construction and only shapes are checked (see :func:`tether._json.parse_json`
    for the one exception, infinite floats, which the caller checks). Raises
    :class:`SnapshotError` naming the first bad path. Returns whether envelopes may sit at
    bytes positions (False means loading can skip decoding them).
    """
    try:
        return _check_fields(data, path, parsed)
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None


def check_multi_agent_data(data: dict[str, Any], path: str, *, parsed: bool = False) -> None:
    """Validate the ``data`` of a ``multiAgent`` snapshot (Strands' envelope of a graph or swarm
    state): ``orchestrator_id`` (a string) and ``state`` (an object), pure JSON throughout.

    The state itself is checked by the orchestrator that loads it, against its own nodes.
    Raises :class:`SnapshotError` naming the first bad path.
    """
    ident = data.get("orchestrator_id")
    if not isinstance(ident, str):
        raise SnapshotError(f"{path}.orchestrator_id must be a string (the graph or swarm id), got {type(ident).__name__}")
    if not isinstance(data.get("state"), dict):
        raise SnapshotError(f"{path}.state must be an object (the orchestrator's serialized state), got {type(data.get('state')).__name__}")
    if not parsed and not is_json(data):
        raise SnapshotError(describe_non_json(data, path))


def _check_fields(data: dict[str, Any], path: str, parsed: bool) -> bool:
    may_hold_bytes = False
    for name, item in data.items():
        if name not in FIELDS:
            raise SnapshotError(f"{path}.{name} is not a snapshot field; fields are: {', '.join(FIELDS)}")
        where = [path, name]
        if name == "messages":
            may_hold_bytes |= check_messages(item, where, pure_json=not parsed)
            continue
        if name == "system_prompt":
            if item is not None and not isinstance(item, str):  # Strands accepts a plain string
                validate_system_prompt(item, where)
        elif not isinstance(item, dict):
            raise SnapshotError(f"{path}.{name} must be an object, got {type(item).__name__}")
        elif name == "interrupt_state":
            check_interrupt_state(item, where, snapshot=True)
            may_hold_bytes |= bool(item.get("context"))
        elif name == "conversation_manager_state":
            check_manager_state(item, where)
            may_hold_bytes |= item.get("summary_message") is not None
        if not parsed and not is_json(item):
            raise SnapshotError(describe_non_json(item, f"{path}.{name}"))
    return may_hold_bytes


def check_manager_state(state: dict[str, Any], where: list[Any]) -> None:
    """Raise ShapeError naming the path unless ``state`` is a valid conversation-manager state,
    in the snapshot shape (``__name__``) or Tether's (``kind``), see :mod:`tether.snapshot.shapes`
    (also used for the durable head row, :func:`tether.durable.codec.check_head`)."""
    kind = state.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise ShapeError(where + ["kind"], "must be the manager kind (a string)")
    name = state.get("__name__")
    if name is not None and not isinstance(name, str):
        raise ShapeError(where + ["__name__"], "must be the manager's class name (a string)")
    removed = state.get("removed_message_count")
    if removed is not None and (type(removed) is not int or removed < 0):
        raise ShapeError(where + ["removed_message_count"], "must be a non-negative integer")
    if state.get("summary_message") is not None:
        check_message(state["summary_message"], where + ["summary_message"])


def check_interrupt_state(state: dict[str, Any], where: list[Any], *, snapshot: bool = False) -> None:
    """Raise ShapeError naming the path unless ``state`` is a valid interrupt state: its
    records, ``activated`` and the cursor of the interrupted cycle (also used for head rows).

    ``snapshot`` accepts the snapshot shape too (see :mod:`tether.snapshot.shapes`): the
    Tether-only fields of records under ``tether_interrupts``, and a ``context`` that is not a
    loop cursor (empty, or Strands' own context), which is kept as it is.
    """
    table = state.get("interrupts")
    if table is not None:
        if not isinstance(table, dict):
            raise ShapeError(where + ["interrupts"], "must map interrupt ids to {id, name, reason} objects")
        for ident, item in table.items():
            at = where + ["interrupts", ident]
            if not isinstance(item, dict):
                raise ShapeError(at, "must be an {id, name, reason} object")
            if item.get("id") != ident:
                raise ShapeError(at + ["id"], "must be the interrupt id it is stored under")
            if not isinstance(item.get("name"), str):
                raise ShapeError(at + ["name"], "must be a string")
            for key in ("source", "tool_use_id"):
                if item.get(key) is not None and not isinstance(item[key], str):
                    raise ShapeError(at + [key], "must be a string or null")
    if "activated" in state and not isinstance(state["activated"], bool):
        raise ShapeError(where + ["activated"], "must be true or false")
    context = state.get("context")
    if snapshot:
        _check_snapshot_extras(state, where)
        if context is not None and not isinstance(context, dict):
            raise ShapeError(where + ["context"], "must be an object")
        if not context or "phase" not in context:
            return
    if context is not None:
        check_cursor(context, where + ["context"])


def _check_snapshot_extras(state: dict[str, Any], where: list[Any]) -> None:
    """The Tether-only record fields (``tether_interrupts``) of an interrupt state in a snapshot."""
    extras = state.get(TETHER_INTERRUPTS)
    if extras is None:
        return
    if not isinstance(extras, dict):
        raise ShapeError(where + [TETHER_INTERRUPTS], "must map interrupt ids to {source, tool_use_id} objects")
    for ident, extra in extras.items():
        at = where + [TETHER_INTERRUPTS, ident]
        if not isinstance(extra, dict):
            raise ShapeError(at, "must be a {source, tool_use_id} object")
        for key in ("source", "tool_use_id"):
            if extra.get(key) is not None and not isinstance(extra[key], str):
                raise ShapeError(at + [key], "must be a string or null")
        if "answered" in extra and not isinstance(extra["answered"], bool):
            raise ShapeError(at + ["answered"], "must be true or false")


def check_cursor(context: Any, where: list[Any]) -> None:
    """Raise ShapeError naming the path unless ``context`` is cursor data that
    :meth:`tether.loop.state.Cursor.from_dict` reads correctly (also used for head rows)."""
    if not isinstance(context, dict):
        raise ShapeError(where, "must describe the interrupted cycle (an object)")
    if context.get("phase") not in _PHASES:
        raise ShapeError(where + ["phase"], f"must be one of {', '.join(_PHASES)}")
    for key in ("cycle_index", "invocation_cycles", "invocation_tokens"):
        number = context.get(key, 0)
        if type(number) is not int or number < 0:
            raise ShapeError(where + [key], "must be a non-negative integer")
    if "cycle_index" not in context:
        raise ShapeError(where + ["cycle_index"], "is missing")
    results = context.get("results", {})
    if not isinstance(results, dict):
        raise ShapeError(where + ["results"], "must map tool-use ids to tool results")
    for ident, result in results.items():
        check_tool_result(result, where + ["results", ident])
    started = context.get("started", [])
    if not isinstance(started, list) or not all(isinstance(item, str) for item in started):
        raise ShapeError(where + ["started"], "must be a list of tool-use ids")
    if context.get("pending_pause") not in (None, *CHECKPOINT_POSITIONS):
        raise ShapeError(where + ["pending_pause"], f"must be null or one of {', '.join(CHECKPOINT_POSITIONS)}")
    if "corrective_turn_used" in context and not isinstance(context["corrective_turn_used"], bool):
        raise ShapeError(where + ["corrective_turn_used"], "must be true or false")
    stop = context.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise ShapeError(where + ["stop_reason"], "must be a string or null")
