"""The Strands provider on a SQLite store: calls (each on a new thread of Strands') share the
store's connections, and closing the session manager leaves none of them open."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from strands import Agent

from tether.strands.session_manager import TetherSessionManager

from ..durable.helpers import open_files
from .conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel


def test_calls_share_the_store_connections_and_close_leaves_none_open(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    manager = TetherSessionManager("m-1", store=db)
    agent = Agent(model=ScriptModel([{"text": "one"}, {"text": "two"}, {"text": "three"}]), callback_handler=None, session_manager=manager)
    gc.disable()  # a connection must be closed by the store, not reclaimed by the collector
    try:
        assert [str(agent(prompt)).strip() for prompt in ("a", "b", "c")] == ["one", "two", "three"]
        assert open_files(db) == 1  # one connection per thread of Strands' before: 4
        manager.close()
        assert open_files(db) == 0
    finally:
        gc.enable()
