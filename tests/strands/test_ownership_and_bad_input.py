"""One owner at a time, and bad input refused by name with nothing stored changed.

- a second process opening a session while the first runs gets ``RunLockedError`` naming the run
  and ``tether unlock``;
- a run of another session (forked to this session's id), a native ``tether.Agent``'s run opened
  by the session manager and a Strands run opened by a native agent, a corrupt row: each a
  ``TetherError`` naming the run or field, every stored row the same before and after.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from strands import Agent as StrandsAgent

from tether import Agent as TetherAgent
from tether.durable import SQLiteStore, fork_run
from tether.errors import ConfigurationError, RunLockedError, StoreError, TetherError
from tether.models.scripted import ScriptedModel
from tether.strands._run import SessionMismatchError
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS, program_env, run_program

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

SCRIPT = [{"text": "hello"}]


def rows(path: Path) -> list[tuple[object, ...]]:
    """Every row of every table of the SQLite store (lease epochs aside)."""
    with sqlite3.connect(path) as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return [(table, *row) for table in tables if table != "leases" for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]


def strands_agent(session_id: str, store: Path) -> StrandsAgent:
    return StrandsAgent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=TetherSessionManager(session_id, store=store))


def one_turn(session_id: str, store: Path) -> None:
    """A Strands session with one finished turn, its manager closed."""
    manager = TetherSessionManager(session_id, store=store)
    StrandsAgent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)("hi")
    manager.close()


def test_a_second_process_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ready = tmp_path / "ready"
    env = program_env(TRIP_LOG=str(tmp_path / "log"), TRIP_PAUSE_AT="tool:lookup", TRIP_READY=str(ready))
    # the sequential executor: while the first program waits inside `lookup`, it writes nothing
    # (with the concurrent one its `weather` call would store its result meanwhile)
    first = subprocess.Popen([sys.executable, str(PROGRAMS / "trip.py"), str(store), "sequential"], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert first.poll() is None and time.monotonic() < deadline, "the first program never reached its tool"
            time.sleep(0.02)
        before = rows(store)
        with pytest.raises(RunLockedError) as refused:
            strands_agent("trip-1", store)
        assert "strands.trip-1.default" in str(refused.value) and "tether unlock strands.trip-1.default" in str(refused.value)
        assert rows(store) == before
    finally:
        first.kill()
        first.wait(30)
    # once the first owner is gone, the same session opens (and finishes the cut-off turn)
    assert '"stop_reason": "end_turn"' in run_program("trip.py", str(store), "sequential", env=program_env(TRIP_LOG=str(tmp_path / "log")))


def test_a_run_of_another_session_is_refused(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.db"
    one_turn("alice", store_path)
    store = SQLiteStore(store_path)
    fork_run(store, "strands.alice.default", 1, new_run_id="strands.bob.default")  # another session's run under bob's id
    store.close()
    before = rows(store_path)
    with pytest.raises(SessionMismatchError) as refused:
        strands_agent("bob", store_path)
    assert (
        "strands.bob.default" in str(refused.value) and "'alice'" in str(refused.value) and "head.strands.session_id" in str(refused.value)
    )
    assert isinstance(refused.value, TetherError)
    assert rows(store_path) == before


def test_a_native_run_is_refused_by_the_session_manager(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.db"
    store = SQLiteStore(store_path)
    TetherAgent(model=ScriptedModel(["hi"]), store=store)("hello", run_id="strands.s1.default")
    store.close()
    before = rows(store_path)
    with pytest.raises(SessionMismatchError, match=r"strands\.s1\.default.*native tether\.Agent"):
        strands_agent("s1", store_path)
    assert rows(store_path) == before


def test_a_strands_run_is_refused_by_a_native_agent(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.db"
    one_turn("s2", store_path)
    before = rows(store_path)
    store = SQLiteStore(store_path)
    with pytest.raises(ConfigurationError, match=r"strands\.s2\.default.*TetherSessionManager"):
        TetherAgent(model=ScriptedModel(["x"]), store=store)("again", run_id="strands.s2.default")
    store.close()
    assert rows(store_path) == before


def test_a_corrupt_row_is_a_store_error_naming_the_run(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.db"
    one_turn("s3", store_path)
    from tests.durable.conftest import corrupt_message

    store = SQLiteStore(store_path)
    corrupt_message(store, "strands.s3.default", 0, '{"role": "user", "content": "not a list"}')
    store.close()
    before = rows(store_path)
    with pytest.raises(StoreError, match=r"strands\.s3\.default"):
        strands_agent("s3", store_path)
    assert rows(store_path) == before
    # the refused manager let its lease go: the run can be opened (and repaired) by the next one
    with pytest.raises(StoreError):
        strands_agent("s3", store_path)
