"""Capturing an agent's run state into snapshot data and applying snapshot data back.

Both directions copy, so a snapshot and the agent never share a mutable object. Messages,
conversation-manager state and interrupt state may hold ``bytes`` in memory (images, documents,
redacted reasoning, tool results): they are captured as base64 envelopes and decoded on load at
the places where bytes are allowed. The other fields must be pure JSON.
"""

from __future__ import annotations

from typing import Any

from ._json import freeze, is_json, may_hold_bytes, strict_copy, thaw
from ._messages import _Invalid, decode_message_bytes, decode_tool_result_bytes
from .conversation.base import ConversationManager
from .errors import SnapshotError, json_path
from .loop.state import Cursor, RunState
from .snapshot import FIELDS, Snapshot, check_data, to_json_copy

_MAY_HOLD_BYTES = frozenset({"messages", "conversation_manager_state", "interrupt_state"})


def _live(run: RunState, manager: ConversationManager, fields: list[str]) -> dict[str, Any]:
    """The selected fields as the run holds them (no copies)."""
    live: dict[str, Any] = {}
    for name in fields:
        if name == "conversation_manager_state":
            live[name] = manager.state(run)
        else:
            live[name] = getattr(run, name)
    return live


def _frozen_capture(run: RunState, manager: ConversationManager, fields: list[str]) -> bytes:
    unknown = [name for name in fields if name not in FIELDS]
    if unknown:
        raise SnapshotError(f"unknown snapshot field {unknown[0]!r}; fields are: {', '.join(FIELDS)}")
    live = _live(run, manager, fields)
    if is_json(live):  # the common case: one Python type walk, then a C-speed freeze
        return freeze(live)
    data: dict[str, Any] = {}
    for name, value in live.items():
        if name in _MAY_HOLD_BYTES:
            data[name] = to_json_copy(value, f"data.{name}")
        else:
            data[name] = strict_copy(value, f"data.{name}", SnapshotError)
    return freeze(data)


def capture(run: RunState, manager: ConversationManager, fields: list[str]) -> dict[str, Any]:
    """The snapshot ``data`` for ``fields``: pure JSON, sharing nothing with ``run``."""
    result: dict[str, Any] = thaw(_frozen_capture(run, manager, fields))
    return result


def take(run: RunState, manager: ConversationManager, fields: list[str], app_data: Any = None) -> Snapshot:
    """A :class:`Snapshot` of ``fields`` of ``run`` with the application's ``app_data``."""
    if app_data is not None and not isinstance(app_data, dict):
        raise SnapshotError(f"app_data must be a dict of JSON values, got {type(app_data).__name__}")
    app_copy = strict_copy({} if app_data is None else app_data, "app_data", SnapshotError)
    return Snapshot._from_frozen(_frozen_capture(run, manager, fields), app_copy)


def load(run: RunState, manager: ConversationManager, snapshot: Snapshot) -> None:
    """Apply ``snapshot`` to ``run``: fields present replace the run's, absent ones are kept."""
    unchecked = snapshot._data is not None  # built by hand or changed through .data
    if unchecked and not isinstance(snapshot._data, dict):
        raise SnapshotError(f"snapshot.data must be an object, got {type(snapshot._data).__name__}")
    frozen = snapshot.frozen_data()
    data: dict[str, Any] = thaw(frozen)
    if unchecked:
        check_data(data, "snapshot.data")
    _apply_owned(run, manager, data, decode=may_hold_bytes(frozen))


def apply(run: RunState, manager: ConversationManager, data: dict[str, Any]) -> None:
    """Apply the fields present in ``data`` to ``run`` (copied); absent fields are left as they are."""
    if not isinstance(data, dict):
        raise SnapshotError(f"snapshot.data must be an object, got {type(data).__name__}")
    frozen = freeze(data if is_json(data) else to_json_copy(data, "snapshot.data"))
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
            if value is not None and not isinstance(value, list):
                raise SnapshotError(f"snapshot.data.system_prompt must be a list of blocks or null, got {type(value).__name__}")
        elif not isinstance(value, dict):
            raise SnapshotError(f"snapshot.data.{name} must be an object, got {type(value).__name__}")
    interrupt_state = data.get("interrupt_state")
    if decode:
        try:
            if "messages" in data:
                decode_message_bytes(data["messages"], ["snapshot", "data", "messages"])
            context = interrupt_state.get("context") if interrupt_state else None
            if isinstance(context, dict) and isinstance(context.get("results"), dict):
                for ident, result in context["results"].items():
                    decode_tool_result_bytes(result, ["snapshot", "data", "interrupt_state", "context", "results", ident])
        except _Invalid as exc:
            raise SnapshotError(f"{json_path(exc.path)}: {exc.problem}") from None
    cursor: Cursor | None = Cursor() if "messages" in data else None
    if interrupt_state is not None:
        context = interrupt_state.get("context")
        if interrupt_state.get("activated") and isinstance(context, dict):
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
        run.system_prompt = data["system_prompt"]
    if "model_state" in data:
        run.model_state = data["model_state"]
    if interrupt_state is not None:
        run.interrupt_state = interrupt_state
    if cursor is not None:
        run.cursor = cursor
