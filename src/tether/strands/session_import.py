"""Import a session written by Strands' ``FileSessionManager`` into Tether runs.

``import_file_session("user-42", "./sessions")`` reads ``./sessions/session_user-42`` through
Strands' own ``FileSessionManager`` (its reader, symlink guard and bytes decoding) and writes each
agent as the run a :class:`~tether.strands.session_manager.TetherSessionManager` of the same
session id opens: ``Agent(..., session_manager=TetherSessionManager("user-42"))`` then continues the
conversation, durable. The files are only read. Graphs' and swarms' states are not imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from strands.session.file_session_manager import FileSessionManager

from .._json import json_copy
from ..durable.store import RunStore
from ..errors import SnapshotError, StoreError
from ._run import StrandsRun
from ._store import open_store


def import_file_session(
    session_id: str, storage_dir: str | os.PathLike[str], *, store: RunStore | str | os.PathLike[str] | None = None
) -> list[str]:
    """Write every agent of the ``FileSessionManager`` session ``session_id`` under ``storage_dir``
    as a Tether run; returns the run ids.

    Raises:
        SnapshotError: The session is missing, or a file of it is truncated or foreign (named).
        StoreError: A run of the session already exists in the store (nothing is written then).
    """
    root = Path(storage_dir) / f"session_{session_id}"
    if not (root / "session.json").is_file():
        raise SnapshotError(f"no Strands file session {session_id!r} in {str(storage_dir)!r} (no {str(root / 'session.json')!r})")
    agents_dir = root / "agents"
    agent_ids = (
        sorted(path.name.removeprefix("agent_") for path in agents_dir.glob("agent_*") if path.is_dir()) if agents_dir.is_dir() else []
    )
    files = FileSessionManager(session_id=session_id, storage_dir=str(storage_dir))
    loaded: list[tuple[str, dict[str, Any], list[Any]]] = []
    for agent_id in agent_ids:
        where = agents_dir / f"agent_{agent_id}"
        try:
            agent = files.read_agent(session_id, agent_id)
            if agent is None:
                raise ValueError("agent.json is missing")
            removed = int((agent.conversation_manager_state or {}).get("removed_message_count") or 0)
            messages: list[Any] = [message.to_message() for message in files.list_messages(session_id, agent_id, offset=removed)]
            if any(
                not isinstance(m, dict) or m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), list)
                for m in messages
            ):
                raise ValueError("a message is not a {role, content} object")
            internal = agent._internal_state
            fields = {
                "state": agent.state,
                "conversation_manager_state": agent.conversation_manager_state,
                "interrupt_state": internal.get("interrupt_state") or {},
                "model_state": internal.get("model_state") or {},
            }
        except Exception as exc:  # Strands' SessionException, a bad field, a truncated file
            raise SnapshotError(f"Strands file session {session_id!r}, agent {agent_id!r} ({str(where)!r}) cannot be read: {exc}") from None
        loaded.append((agent_id, cast("dict[str, Any]", json_copy(fields)), messages))
    target, owned = open_store(store)
    try:
        runs = [StrandsRun(target, session_id, agent_id) for agent_id, _, _ in loaded]
        try:
            taken = [run.run_id for run in runs if run.stored is not None]
            if taken:
                raise StoreError(
                    f"runs {taken} already exist in the store; delete them (`tether rm RUN_ID`) to import the file session again"
                )
            for run, (_, fields, messages) in zip(runs, loaded, strict=True):
                run.strands["agent"] = fields
                run.run.state = fields["state"]
                run.session.timeline.status = "finished"
                run.write(messages)
        finally:
            for run in runs:
                run.close()
        return [run.run_id for run in runs]
    finally:
        if owned:
            target.close()


__all__ = ["import_file_session"]
