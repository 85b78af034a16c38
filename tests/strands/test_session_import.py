"""A session written by Strands' FileSessionManager imports into Tether runs that a
TetherSessionManager of the same session id continues; a truncated or missing session is refused
by name and nothing is written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from strands import Agent
from strands.session.file_session_manager import FileSessionManager

from tether.durable import SQLiteStore
from tether.errors import SnapshotError, StoreError
from tether.strands.session_import import import_file_session
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

SCRIPT: list[dict[str, Any]] = [{"text": "one"}, {"text": "two"}]


def file_session(tmp_path: Path) -> Path:
    storage = tmp_path / "sessions"
    agent = Agent(
        model=ScriptModel(SCRIPT), callback_handler=None, session_manager=FileSessionManager(session_id="u1", storage_dir=str(storage))
    )
    agent("first")
    agent.state.set("seen", 1)
    agent("again")  # a sync after the state change
    return storage


def test_a_file_session_imports_and_continues_durably(tmp_path: Path) -> None:
    storage = file_session(tmp_path)
    store = tmp_path / "runs.db"
    assert import_file_session("u1", storage, store=store) == ["strands.u1.default"]
    manager = TetherSessionManager("u1", store=store)
    agent = Agent(model=ScriptModel([*SCRIPT, {"text": "three"}]), callback_handler=None, session_manager=manager)
    assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one", "again", "two"]
    assert agent.state.get("seen") == 1
    assert str(agent("more")).strip() == "three"
    manager.close()
    with pytest.raises(StoreError, match="already exist"):
        import_file_session("u1", storage, store=store)


def test_a_truncated_or_missing_session_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    storage = file_session(tmp_path)
    store = tmp_path / "runs.db"
    with pytest.raises(SnapshotError, match="no Strands file session 'nobody'"):
        import_file_session("nobody", storage, store=store)
    message = storage / "session_u1" / "agents" / "agent_default" / "messages" / "message_1.json"
    message.write_text(message.read_text()[:20])  # truncated
    with pytest.raises(SnapshotError, match="agent 'default'"):
        import_file_session("u1", storage, store=store)
    assert SQLiteStore(store).list_runs() == []
