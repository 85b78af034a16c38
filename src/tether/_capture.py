"""Capturing an agent's run state into snapshot data and applying snapshot data back.

Both directions copy, so a snapshot and the agent never share a mutable object.
"""

from __future__ import annotations

from typing import Any

from ._json import copy_json
from ._messages import decode_message_bytes
from .conversation.base import ConversationManager
from .errors import SnapshotError
from .loop.state import Cursor, RunState
from .snapshot import to_json_copy


def capture(run: RunState, manager: ConversationManager, fields: list[str]) -> dict[str, Any]:
    """The snapshot ``data`` for ``fields`` (pure JSON)."""
    data: dict[str, Any] = {}
    for name in fields:
        if name == "messages":
            data[name] = to_json_copy(run.messages, "messages")
        elif name == "state":
            data[name] = copy_json(run.state)
        elif name == "conversation_manager_state":
            data[name] = to_json_copy(manager.state(run), "conversation_manager_state")
        elif name == "interrupt_state":
            data[name] = to_json_copy(run.interrupt_state, "interrupt_state")
        elif name == "system_prompt":
            data[name] = None if run.system_prompt is None else copy_json(run.system_prompt)
        elif name == "model_state":
            data[name] = to_json_copy(run.model_state, "model_state")
    return data


def apply(run: RunState, manager: ConversationManager, data: dict[str, Any]) -> None:
    """Apply the fields present in ``data`` to ``run``; absent fields are left as they are."""
    if "conversation_manager_state" in data:
        manager.restore(run, copy_json(data["conversation_manager_state"]))
    if "messages" in data:
        messages = copy_json(data["messages"])
        try:
            decode_message_bytes(messages)
        except ValueError as exc:
            raise SnapshotError(f"snapshot.data.messages holds invalid base64 bytes: {exc}") from None
        run.messages = messages
        run.cursor = Cursor()
    if "state" in data:
        run.state = copy_json(data["state"])
    if "system_prompt" in data:
        prompt = data["system_prompt"]
        run.system_prompt = None if prompt is None else copy_json(prompt)
    if "model_state" in data:
        run.model_state = copy_json(data["model_state"])
    if "interrupt_state" in data:
        run.interrupt_state = copy_json(data["interrupt_state"])
        context = run.interrupt_state.get("context")
        if run.interrupt_state.get("activated") and isinstance(context, dict):
            try:
                run.cursor = Cursor.from_dict(context)
            except (KeyError, TypeError, ValueError) as exc:
                raise SnapshotError(f"snapshot.data.interrupt_state.context is malformed: {exc!r}") from None
