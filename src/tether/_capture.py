"""Capturing an agent's run state into snapshot data and applying snapshot data back.

Both directions copy, so a snapshot and the agent never share a mutable object. Messages,
conversation-manager state and interrupt state may hold ``bytes`` in memory (images, documents,
redacted reasoning, tool results): they are captured as base64 envelopes and decoded on load at
the places where bytes are allowed. The other fields must be pure JSON.

What is captured is exactly what the strict checks allowed before the JSON fast path: messages
(and manager/interrupt state) may also hold what :mod:`json` itself writes as JSON (tuples as
lists, ``str``/``int`` subclasses as plain values, non-string keys as strings) and bytes anywhere
(as envelopes); anything else (sets, NaN, datetimes, objects) is a :class:`SnapshotError` naming
its path. ``pydantic_core`` only ever writes values already checked to be pure JSON, so its own
conversions (of tuples, sets, datetimes, NaN) never apply.
"""

from __future__ import annotations

from typing import Any, cast

from ._json import describe_non_json, dump_json, freeze, is_json, json_copy, may_hold_bytes, parse_json, thaw
from ._messages import decode_message_bytes, decode_tool_result_bytes, unvouched_messages
from .conversation.base import ConversationManager
from .errors import ShapeError, SnapshotError
from .loop.state import Cursor, RunState
from .snapshot import FIELDS, SCOPE, Snapshot, check_data
from .snapshot.document import copy_app_data
from .snapshot.shapes import interrupt_state_in, interrupt_state_out
from .types import InterruptState

_MAY_HOLD_BYTES = frozenset({"messages", "conversation_manager_state", "interrupt_state"})


def _live(run: RunState, manager: ConversationManager, fields: list[str]) -> dict[str, Any]:
    """The selected fields as the run holds them (no copies), the manager and interrupt
    states in the snapshot shapes (new dicts over the run's values)."""
    live: dict[str, Any] = {}
    for name in fields:
        if name == "conversation_manager_state":
            live[name] = manager.state(run)
        elif name == "interrupt_state":
            live[name] = interrupt_state_out(run.interrupt_state)
        else:
            live[name] = getattr(run, name)
    return live


def _json_messages(messages: Any) -> tuple[Any, bool]:
    """``(messages or a pure-JSON stand-in, whether envelopes may sit at bytes positions)``.

    The fast check (:func:`tether._messages.unvouched_messages`) vouches for the common message
    shapes, which have no bytes positions; a message it leaves is kept if it is pure JSON and
    otherwise replaced (in a new list) by a copy with bytes as envelopes (tuples become lists,
    as in :mod:`json`). Anything json cannot encode (a set, NaN, an object) is a
    :class:`~tether.errors.ShapeError` naming its path.
    """
    if type(messages) is not list:
        return json_copy(messages, ["data", "messages"]), True
    try:
        unsure: list[int] | range = unvouched_messages(messages, True)
    except RecursionError:
        unsure = range(len(messages))
    fixed: list[Any] | None = None
    for index in unsure:
        message = messages[index]
        if not is_json(message):
            if fixed is None:
                fixed = list(messages)
            fixed[index] = json_copy(message, ["data", "messages", index])
    return (messages if fixed is None else fixed), bool(unsure)


def _json_capture(run: RunState, manager: ConversationManager, fields: list[str]) -> tuple[bytes, bool]:
    """The selected fields as JSON bytes, written straight from the run state (no copies).

    Every value is checked to be pure JSON before it is written: messages by a fast targeted
    check (the loop keeps them JSON, bytes aside), the other fields by a full walk (they are
    small). Bytes in messages, conversation-manager or interrupt state become envelopes; in the
    other fields, and anything json cannot encode anywhere, raise a ``SnapshotError`` naming
    the path. The flag says whether envelopes may sit at bytes positions.
    """
    unknown = [name for name in fields if name not in FIELDS]
    if unknown:
        raise SnapshotError(f"unknown snapshot field {unknown[0]!r}; fields are: {', '.join(FIELDS)}")
    try:
        data, envelopes = _json_fields(_live(run, manager, fields))
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None
    try:
        return dump_json(data), envelopes
    except (TypeError, ValueError, RecursionError):  # not reachable for checked data; named anyway
        raise SnapshotError(describe_non_json(data, "data")) from None


def _json_fields(live: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``live`` with every field pure JSON (copied only where needed), and the envelope flag."""
    data: dict[str, Any] = {}
    envelopes = False
    for name, value in live.items():
        if name == "messages":
            data[name], found = _json_messages(value)
            envelopes |= found
            continue
        if name == "interrupt_state":
            envelopes |= not isinstance(value, dict) or bool(value.get("context"))
        if is_json(value):
            data[name] = value
        elif name in _MAY_HOLD_BYTES:
            data[name] = json_copy(value, f"data.{name}")
        else:
            raise SnapshotError(describe_non_json(value, f"data.{name}"))
    return data, envelopes


def capture(run: RunState, manager: ConversationManager, fields: list[str]) -> dict[str, Any]:
    """The snapshot ``data`` for ``fields``: pure JSON, sharing nothing with ``run``."""
    result: dict[str, Any] = parse_json(_json_capture(run, manager, fields)[0], max_depth=None)
    return result


def take(run: RunState, manager: ConversationManager, fields: list[str], app_data: Any = None) -> Snapshot:
    """A :class:`Snapshot` of ``fields`` of ``run`` with the application's ``app_data``."""
    if app_data is not None and not isinstance(app_data, dict):
        raise SnapshotError(f"app_data must be a dict of JSON values, got {type(app_data).__name__}")
    app_copy = copy_app_data({} if app_data is None else app_data, "app_data")
    data_json, envelopes = _json_capture(run, manager, fields)
    return Snapshot._from_json_data(data_json, app_copy, may_hold_bytes=envelopes)


def load(run: RunState, manager: ConversationManager, snapshot: Snapshot) -> None:
    """Apply ``snapshot`` to ``run``: fields present replace the run's, absent ones are kept.

    A validated snapshot hands over data the run may keep (its own parsed dict the first
    time, a fresh copy after that); one built by hand or changed through ``.data`` is copied
    and checked first. The snapshot's version and scope are checked before anything else
    (:meth:`Snapshot.validate`), as Strands does.
    """
    snapshot.validate()
    if snapshot.scope != SCOPE:
        raise SnapshotError(f"Expected snapshot scope {SCOPE!r}, got {snapshot.scope!r}; an agent loads only agent snapshots")
    taken = snapshot._take_data()
    if taken is None:
        data = snapshot._live_copy()
        decode = check_data(data, "snapshot.data")
    else:
        data, decode = taken
    _apply_owned(run, manager, data, decode=decode)


def apply(run: RunState, manager: ConversationManager, data: dict[str, Any]) -> None:
    """Apply the fields present in ``data`` to ``run`` (copied); absent fields are left as they are."""
    if not isinstance(data, dict):
        raise SnapshotError(f"snapshot.data must be an object, got {type(data).__name__}")
    try:
        frozen = freeze(data if is_json(data) else json_copy(data, "snapshot.data"))
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None
    _apply_owned(run, manager, thaw(frozen), decode=may_hold_bytes(frozen))


def _apply_owned(run: RunState, manager: ConversationManager, data: dict[str, Any], *, decode: bool) -> None:
    """Apply ``data``, which this call owns. Everything that can fail runs before any change."""
    for name, value in data.items():
        if name not in FIELDS:
            raise SnapshotError(f"snapshot.data.{name} is not a snapshot field; fields are: {', '.join(FIELDS)}")
        if name == "messages":
            if not isinstance(value, list):
                raise SnapshotError(f"snapshot.data.messages must be a list, got {type(value).__name__}")
        elif name == "system_prompt":
            if value is not None and not isinstance(value, (list, str)):
                raise SnapshotError(f"snapshot.data.system_prompt must be a list of blocks, a string or null, got {type(value).__name__}")
        elif not isinstance(value, dict):
            raise SnapshotError(f"snapshot.data.{name} must be an object, got {type(value).__name__}")
    interrupt_state = data.get("interrupt_state")
    if interrupt_state is not None:
        interrupt_state = interrupt_state_in(interrupt_state)
    if decode:
        try:
            if "messages" in data:
                decode_message_bytes(data["messages"], ["snapshot", "data", "messages"])
            context = interrupt_state.get("context") if interrupt_state else None
            if isinstance(context, dict) and isinstance(context.get("results"), dict):
                for ident, result in context["results"].items():
                    decode_tool_result_bytes(result, ["snapshot", "data", "interrupt_state", "context", "results", ident])
        except ShapeError as exc:
            raise SnapshotError(str(exc)) from None
    cursor: Cursor | None = Cursor() if "messages" in data else None
    if interrupt_state is not None:
        context = interrupt_state.get("context")
        if interrupt_state.get("activated") and isinstance(context, dict) and "phase" in context:
            try:
                cursor = Cursor.from_dict(context)
            except (KeyError, TypeError, ValueError) as exc:
                raise SnapshotError(f"snapshot.data.interrupt_state.context is malformed: {exc!r}") from None
    if "conversation_manager_state" in data:  # may refuse another manager's state: before any change
        manager.restore(run, data["conversation_manager_state"])
    if "messages" in data:
        run.messages = data["messages"]
    if "state" in data:
        run.state = data["state"]
    if "system_prompt" in data:
        system = data["system_prompt"]
        run.system_prompt = [{"text": system}] if isinstance(system, str) else system
    if "model_state" in data:
        run.model_state = data["model_state"]
    if interrupt_state is not None:
        run.interrupt_state = cast(InterruptState, interrupt_state)
    if cursor is not None:
        run.cursor = cursor
