"""Stores written by the release before packed heads (schema 2) open, migrate in place and resume.

``data/v2_store.db`` was made by ``data/make_v2_store.py`` with that release's code: a finished
run of two turns with a 5 KB state, a run whose process died inside a tool call, and a run
waiting for an interrupt answer. The PostgreSQL case copies the same rows into a schema-2
PostgreSQL database (the row format is the same in every store).
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ToolContext, tool
from tether.durable import RunStore, SQLiteStore
from tether.durable.store import SCHEMA_VERSION
from tether.models import ScriptedModel
from tether.models.scripted import tool_call

FIXTURE = Path(__file__).parent / "data" / "v2_store.db"


@tool
def note(text: str, context: ToolContext) -> str:
    """Note something in the state (as the tool that wrote the fixture, without dying).

    Args:
        text: What to note.
    """
    context.agent.state.set("notes", [*(context.agent.state.get("notes") or []), text])
    if text == "ask":
        return f"approved: {context.interrupt('approve', reason={'what': text})}"
    return f"noted {text}"


def _old_rows() -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(FIXTURE) as conn:
        return {
            "runs": conn.execute("SELECT run_id, head, rev FROM runs").fetchall(),
            "leases": conn.execute("SELECT run_id, epoch FROM leases").fetchall(),
            "messages": conn.execute("SELECT run_id, seq, body FROM messages").fetchall(),
            "results": conn.execute("SELECT run_id, cycle, tool_use_id, body FROM results").fetchall(),
            "steps": conn.execute("SELECT run_id, step, body FROM steps").fetchall(),
        }


@pytest.fixture(params=["sqlite", "postgres"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """The schema-2 fixture, opened by this Tether (which migrates it)."""
    if request.param == "sqlite":
        path = tmp_path / "runs.db"
        shutil.copy(FIXTURE, path)
        store: RunStore = SQLiteStore(path)
    else:
        import psycopg

        from tether.durable.postgres import PostgresStore

        conninfo = request.getfixturevalue("pg_conninfo")
        with psycopg.connect(conninfo, autocommit=True) as pg:
            pg.execute("CREATE TABLE tether_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            pg.execute("INSERT INTO tether_meta VALUES ('schema_version', '2')")
            pg.execute("CREATE TABLE tether_runs (run_id TEXT PRIMARY KEY, head TEXT NOT NULL, rev BIGINT)")
            pg.execute("CREATE TABLE tether_leases (run_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL)")
            pg.execute("CREATE TABLE tether_messages (run_id TEXT, seq BIGINT, body TEXT NOT NULL, PRIMARY KEY (run_id, seq))")
            pg.execute(
                "CREATE TABLE tether_results (run_id TEXT, cycle BIGINT, tool_use_id TEXT, body TEXT NOT NULL,"
                " PRIMARY KEY (run_id, cycle, tool_use_id))"
            )
            pg.execute("CREATE TABLE tether_steps (run_id TEXT, step BIGINT, body TEXT NOT NULL, PRIMARY KEY (run_id, step))")
            for table, rows in _old_rows().items():
                if rows:
                    marks = ", ".join(["%s"] * len(rows[0]))
                    pg.cursor().executemany(f"INSERT INTO tether_{table} VALUES ({marks})", rows)
        store = PostgresStore(conninfo)
    yield store
    store.close()


def test_the_fixture_is_a_schema_2_store() -> None:
    with sqlite3.connect(FIXTURE) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
        assert "blobs" not in {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}


def test_an_old_store_lists_reads_and_time_travels(old_store: RunStore) -> None:
    summaries = {run.run_id: run.status for run in old_store.list_runs()}
    assert summaries == {"finished": "finished", "crashed": "stalled", "waiting": "interrupted"}
    history = old_store.history("finished")
    assert [step.position for step in history][:3] == ["turn_start", "after_model", "after_tools"]
    for step in history:
        at = old_store.load_at("finished", step.step)
        assert at.head == step.head and len(at.messages) == step.message_count
    loaded = old_store.load("finished")
    assert loaded is not None and loaded.head["state"]["big"] == {"doc": "d" * 5000}


def test_old_runs_resume_and_go_on_in_the_new_format(old_store: RunStore) -> None:
    crashed = Agent(model=ScriptedModel(["after"]), tools=[note], store=old_store)
    assert str(crashed.resume("crashed")) == "after"
    assert crashed.state.get("notes") == ["x", "die"]  # the in-doubt idempotent call ran again

    waiting = Agent(model=ScriptedModel(["answered"]), tools=[note], store=old_store)
    pending = waiting.resume("waiting")
    assert pending.stop_reason == "interrupt"
    answer = [{"interruptResponse": {"interruptId": pending.interrupts[0].id, "response": "yes"}}]
    assert str(waiting.resume("waiting", answer)) == "answered"

    finished = Agent(model=ScriptedModel([tool_call("note", {"text": "d"}), "third"]), tools=[note], store=old_store)
    before = len(old_store.history("finished"))
    assert str(finished("three", run_id="finished")) == "third"
    history = old_store.history("finished")  # old whole-head rows, then new packed rows
    assert len(history) > before and history[-1].status == "finished"
    for step in history:
        assert old_store.load_at("finished", step.step).head == step.head
    assert history[-1].head["state"]["big"] == {"doc": "d" * 5000}
    assert history[-1].head["state"]["notes"] == ["a", "b", "c", "d"]


def test_an_old_sqlite_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(FIXTURE, path)
    SQLiteStore(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert "blobs" in {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
