"""``tether.strands.fork_session``: a Strands agent's session forked at a step is a session of its
own that a real Strands agent opens and finishes; the original is only read; bad input is refused
with nothing stored changed."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, tool

from tether import Agent as TetherAgent
from tether.durable import SQLiteStore
from tether.errors import StoreError, TetherError
from tether.models.scripted import ScriptedModel
from tether.strands import TetherSessionManager, fork_session
from tether.strands._run import SessionMismatchError

from .conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

OSLO, ROME = ("t1", "lookup", {"city": "Oslo"}), ("t2", "lookup", {"city": "Rome"})
SCRIPT = [{"tools": [OSLO]}, {"tools": [ROME]}, {"text": "done"}, {"text": "again"}]
PROMPT = "weather?"
CALLS: list[str] = []


@tool
def lookup(city: str) -> str:
    """Look the weather up.

    Args:
        city: The city.
    """
    CALLS.append(city)
    return f"sunny in {city}"


def run(session_id: str, store: Path) -> tuple[str, list[Any], list[str], list[int]]:
    """Call the session's agent with ``PROMPT``: its answer, its conversation, the tools it ran, and
    the tokens its result and its run count (Strands' ``result.metrics``, the manager's ``metrics``)."""
    CALLS.clear()
    with TetherSessionManager(session_id, store=store) as manager:
        agent = Agent(model=ScriptModel(SCRIPT), tools=[lookup], callback_handler=None, session_manager=manager)
        result = agent(PROMPT)
        tokens = [result.metrics.accumulated_usage["totalTokens"], manager.metrics(agent)["usage"]["total_tokens"]]
        return str(result).strip(), [comparable(m) for m in agent.messages], list(CALLS), tokens


def comparable(message: Any) -> Any:
    """``message`` without what Strands measures or draws afresh for every message: a random
    ``tracking_id`` and the call's timings (``metadata.metrics``: ``timeToFirstByteMs``)."""
    out = {k: v for k, v in message.items() if k != "tracking_id"}
    if "metadata" in out:
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k != "metrics"}
    return out


def rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return [(table, *row) for table in tables if table != "leases" for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]


def source_rows(path: Path) -> list[tuple[object, ...]]:
    return [row for row in rows(path) if "strands.s.default" in row]


def test_every_step_forks_into_a_session_strands_finishes_and_the_original_is_only_read(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    answer, messages, calls, tokens = run("s", store)
    assert (answer, calls, tokens) == ("done", ["Oslo", "Rome"], [45, 45])
    with closing(SQLiteStore(store)) as runs:
        steps = runs.history("strands.s.default")
    assert len(steps) >= 6
    # each model call's step shows its tokens (Strands counts a response's usage after storing it)
    assert [step.model["total_tokens"] for step in steps if step.position == "after_model"] == [15, 15, 15]
    before = source_rows(store)
    for step in steps:
        ends = []
        for copy in ("a", "b"):
            new_id = fork_session("s", step.step, new_session_id=f"s-{step.step}-{copy}", store=store)
            assert new_id == f"strands.s-{step.step}-{copy}.default"
            ends.append(run(f"s-{step.step}-{copy}", store))
        assert ends[0] == ends[1], step
        answer, forked, ran, counted = ends[0]
        if step.status == "running":  # a fork inside the turn finishes it: the original's conversation
            # (each message with its metadata) and token counts
            assert (answer, forked, counted) == ("done", messages, tokens), step
            # the tool calls recorded at the step are not run again, the others are
            at_step = messages[: step.message_count]
            recorded = {b["toolResult"]["toolUseId"] for m in at_step for b in m["content"] if "toolResult" in b}
            assert ran == [city for use, city in (("t1", "Oslo"), ("t2", "Rome")) if use not in recorded], step
        else:  # a fork of the finished turn: the same call is a new turn on the whole conversation
            assert (answer, forked[: len(messages)], len(forked), ran) == ("again", messages, len(messages) + 2, []), step
    assert source_rows(store) == before


def test_the_fork_is_a_session_of_its_own(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run("s", store)
    fork_session("s", 2, new_session_id="b", store=store)
    with closing(SQLiteStore(store)) as runs:
        head = runs.head("strands.b.default")
        assert head is not None
        assert head["strands"]["session_id"] == "b" and head["strands"]["agent_id"] == "default"
        assert runs.history("strands.b.default")[0].forked_from == {"run_id": "strands.s.default", "step": 2}


def test_bad_input_is_refused_and_nothing_stored_changes(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run("s", store)
    fork_session("s", 2, new_session_id="taken", store=store)
    native = TetherAgent(model=ScriptedModel(["hi"]), store=SQLiteStore(store))
    native("hello", run_id="native")
    native.store.close()
    before = rows(store)
    cases: list[tuple[dict[str, Any], type[TetherError], str]] = [
        ({"session_id": "nobody", "at": 1, "new_session_id": "x"}, StoreError, "'nobody'"),
        ({"session_id": "s", "at": 99, "new_session_id": "x"}, StoreError, "99"),
        ({"session_id": "s", "at": 1, "new_session_id": "taken"}, StoreError, "strands.taken.default"),
        ({"session_id": "s", "at": 1, "new_session_id": ""}, StoreError, "new_session_id"),
        ({"session_id": "s", "at": 1, "new_session_id": "x", "agent_id": "other"}, StoreError, "'other'"),
    ]
    for kwargs, error, named in cases:
        with pytest.raises(error) as refused:
            fork_session(store=store, **kwargs)
        assert named in str(refused.value), (kwargs, refused.value)
    assert rows(store) == before
    with closing(SQLiteStore(store)) as runs:  # a native run under a Strands session's run id
        from tether.durable import fork_run

        fork_run(runs, "native", 1, new_run_id="strands.mixed.default")
    before = rows(store)
    with pytest.raises(SessionMismatchError) as mismatch:
        fork_session("mixed", 1, new_session_id="x", store=store)
    assert "strands.mixed.default" in str(mismatch.value)
    assert rows(store) == before


def test_tether_fork_of_a_strands_run_makes_a_session_and_no_hint_names_tether_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tether.cli import main

    store = tmp_path / "runs.db"
    _, messages, _, tokens = run("s", store)

    def tether(*args: str) -> tuple[int, str, str]:
        code = main(["--store", str(store), *args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, out, _ = tether("fork", "strands.s.default", "--at", "4")
    assert code == 0 and "session 's-fork-1'" in out and "TetherSessionManager('s-fork-1')" in out, out
    assert tether("fork", "strands.s.default", "--at", "4", "--session", "mine")[0] == 0
    for listing in (tether("runs")[1], tether("show", "strands.s-fork-1.default")[1], tether("unlock", "strands.mine.default")[1]):
        assert "tether resume strands" not in listing and "resume strands." not in listing, listing
    code, _, err = tether("resume", "strands.s-fork-1.default")  # no tether command runs Strands: its program does
    assert code != 0 and "TetherSessionManager('s-fork-1')" in err and "Traceback" not in err, err
    assert run("s-fork-1", store)[1:] == (messages, ["Rome"], tokens)
    before = rows(store)
    code, _, err = tether("fork", "strands.s.default", "--at", "4", "--new-id", "x")
    assert code != 0 and "--session" in err and "Traceback" not in err, err
    assert rows(store) == before
    native = TetherAgent(model=ScriptedModel(["hi"]), store=SQLiteStore(store))
    native("hello", run_id="native")
    native.store.close()
    before = rows(store)
    code, _, err = tether("fork", "native", "--at", "1", "--session", "x")
    assert code != 0 and "'native' is not one" in err and "Traceback" not in err, err
    assert rows(store) == before
