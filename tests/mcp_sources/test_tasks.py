"""MCP tasks survive restarts: a call answered with a task stores the task id in the run; a
process killed while the task is pending leaves it to the resumed run, which polls ``tasks/get``
instead of calling the tool again; a cancelled run sends ``tasks/cancel``; a task the server lost
is in doubt; a stored task id the server refuses is a clear error with nothing lost."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.durable import SQLiteStore
from tether.mcp import IDEMPOTENCY_META_KEY, MCPServerHTTP
from tether.models import tool_call

from .fixtures import CallLog, serve_http
from .test_input_required import Worker

TASKER = Path(__file__).parent / "servers" / "tasker.py"


@pytest.fixture
def tasker(tmp_path: Path) -> Iterator[tuple[str, CallLog]]:
    """The tasker MCP server over HTTP on loopback (it outlives the clients a test kills)."""
    log = CallLog(tmp_path / "tasker.jsonl")
    for url in serve_http(log, script=TASKER):
        yield url, log


def _wait_for(log: CallLog, what: str, count: int = 1) -> None:
    deadline = time.monotonic() + 60
    while sum(1 for e in log.entries() if e.get("tasks") == what or e.get("call") == what) < count:
        assert time.monotonic() < deadline, f"the server never saw {what}"
        time.sleep(0.02)  # polling the server's log for progress, not timing the run


def _task_id(db: Path, run_id: str) -> str:
    stored = SQLiteStore(db).load(run_id)
    assert stored is not None
    task_id: str = stored.head["state"]["tether.mcp"]["calls"]["t1"]["task"]["taskId"]
    return task_id


def _start_and_kill(db: Path, url: str, log: CallLog, run_id: str, gate: Path) -> list[str]:
    args = [str(db), run_id, url, str(log.path), "render", json.dumps({"name": "film", "gate": str(gate)})]
    first = Worker(*args, "start")
    try:
        _wait_for(log, "tasks/get")  # the task exists and is being polled
        assert _task_id(db, run_id)  # its id was stored before anything waited on it
    finally:
        first.kill9()
    return args


def test_a_task_pending_at_kill_9_is_polled_by_the_resumed_run_and_not_called_again(tmp_path: Path, tasker: tuple[str, CallLog]) -> None:
    url, log = tasker
    db, gate = tmp_path / "runs.db", tmp_path / "gate"
    args = _start_and_kill(db, url, log, "r1", gate)
    task_id = _task_id(db, "r1")
    gate.touch()  # the work finishes while no client runs
    second = Worker(*args, "resume", exit_after=True)
    assert second.outcome()[:2] == ("stopped", "end_turn")
    second.proc.communicate(timeout=60)
    calls = [e for e in log.entries() if "call" in e]
    assert len(calls) == 1 and calls[0]["meta"][IDEMPOTENCY_META_KEY] == "r1/t1"  # one call, over two processes
    assert {e["taskId"] for e in log.entries() if e.get("tasks") == "tasks/get"} == {task_id}
    stored = SQLiteStore(db).load("r1")
    assert stored is not None and "tether.mcp" not in stored.head["state"]
    results = [block["toolResult"] for message in stored.messages for block in message["content"] if "toolResult" in block]
    assert results[0]["status"] == "success" and results[0]["content"] == [{"text": "rendered film"}]
    resumed = [step for step in SQLiteStore(db).history("r1") if step.position == "resumed"]
    assert [marker["action"] for marker in resumed[0].in_doubt] == ["poll"]  # in doubt, decided: poll, not redo


def test_a_cancelled_run_cancels_its_task_on_the_server(tmp_path: Path, tasker: tuple[str, CallLog]) -> None:
    url, log = tasker
    source = MCPServerHTTP(url, protocol="auto", startup_timeout=30)
    script: list[Any] = [tool_call("render", {"name": "long", "gate": str(tmp_path / "never")}, tool_use_id="t1"), "unused"]
    agent = Agent(model=ScriptedModel(script), tools=[source], store=SQLiteStore(tmp_path / "runs.db"))
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("result", agent("go", run_id="c1")))
    thread.start()
    try:
        _wait_for(log, "tasks/get")
        agent.cancel()
        thread.join(60)
    finally:
        agent.close()
    assert outcome["result"].stop_reason == "cancelled"
    task_ids = {e["taskId"] for e in log.entries() if e.get("tasks") == "tasks/get"}
    assert [e["taskId"] for e in log.entries() if e.get("tasks") == "tasks/cancel"] == sorted(task_ids)
    assert len([e for e in log.entries() if "call" in e]) == 1


def test_a_task_the_server_lost_is_in_doubt_and_rerun_calls_again_with_the_same_key(tmp_path: Path) -> None:
    db, gate = tmp_path / "runs.db", tmp_path / "gate"
    log = CallLog(tmp_path / "tasker.jsonl")
    servers = serve_http(log, script=TASKER)
    url = next(servers)
    args = _start_and_kill(db, url, log, "r3", gate)
    servers.close()  # the server restarts and forgets its tasks (an expired task looks the same)
    servers = serve_http(log, script=TASKER)
    args[2] = next(servers)
    try:
        second = Worker(*args, "resume", exit_after=True)
        kind, reason, pending = second.outcome()
        second.proc.communicate(timeout=60)
        assert (kind, reason) == ("stopped", "interrupt") and [item["name"] for item in pending] == ["tether.in_doubt"]
        assert pending[0]["reason"]["mcp_task"] and "unknown to its server" in pending[0]["reason"]["question"]
        gate.touch()
        third = Worker(*args, "resume", json.dumps([{"interruptId": pending[0]["id"], "response": "rerun"}]), exit_after=True)
        assert third.outcome()[:2] == ("stopped", "end_turn")
        third.proc.communicate(timeout=60)
    finally:
        servers.close()
    calls = [e for e in log.entries() if "call" in e]
    assert [c["meta"][IDEMPOTENCY_META_KEY] for c in calls] == ["r3/t1", "r3/t1"]  # called again only on 'rerun', same key


def test_a_stored_task_id_the_server_refuses_is_a_clear_error_and_nothing_is_lost(tmp_path: Path, tasker: tuple[str, CallLog]) -> None:
    url, log = tasker
    db, gate = tmp_path / "runs.db", tmp_path / "gate"
    args = _start_and_kill(db, url, log, "r4", gate)
    task_id = _task_id(db, "r4")
    with sqlite3.connect(db) as conn:  # the stored id is damaged: the server refuses it as malformed
        (head,) = conn.execute("SELECT head FROM runs WHERE run_id = 'r4'").fetchone()
        assert head.count(task_id) == 1
        conn.execute("UPDATE runs SET head = ? WHERE run_id = 'r4'", (head.replace(task_id, "bad" + task_id),))
    before = SQLiteStore(db).load("r4")
    assert before is not None
    second = Worker(*args, "resume", exit_after=True)
    kind, error, message = second.outcome()
    second.proc.communicate(timeout=60)
    assert (kind, error) == ("error", "HandleRejectedError")
    assert "run 'r4'" in message and "tool call 't1'" in message and 'state["tether.mcp"]["calls"]["t1"]["task"]["taskId"]' in message
    after = SQLiteStore(db).load("r4")
    assert after is not None
    assert after.messages == before.messages and after.results == before.results  # nothing lost
    assert after.head["state"] == before.head["state"]  # the task id is kept
    assert len([e for e in log.entries() if "call" in e]) == 1  # and the tool was not called again


def test_a_lost_task_goes_to_the_agents_reconcile(tmp_path: Path, tasker: tuple[str, CallLog]) -> None:
    url, log = tasker
    asked: list[Any] = []

    def reconcile(call: Any) -> Any:
        asked.append(call)
        return "the film was rendered by hand"

    # The run already keeps a task for call t1 (as a killed process leaves it); the server does not know it.
    book = {"tether.mcp": {"calls": {"t1": {"server": "tasker", "tool": "render", "task": {"taskId": "expired-1"}}}}}
    script: list[Any] = [tool_call("render", {"name": "x", "gate": str(tmp_path / "never")}, tool_use_id="t1"), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[MCPServerHTTP(url, protocol="auto")], state=book, reconcile=reconcile)
    try:
        result = agent("go")
    finally:
        agent.close()
    assert result.stop_reason == "end_turn" and [call.tool_use["toolUseId"] for call in asked] == ["t1"]
    tool_results = [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]
    assert tool_results[0]["content"] == [{"text": "the film was rendered by hand"}]
    assert [e.get("taskId") for e in log.entries()] == ["expired-1"] and not [e for e in log.entries() if "call" in e]
    assert "tether.mcp" not in agent.state.get()


def test_a_task_result_over_max_result_bytes_is_dropped_with_an_error(tmp_path: Path, tasker: tuple[str, CallLog]) -> None:
    url, _ = tasker
    gate = tmp_path / "gate"
    gate.touch()
    script: list[Any] = [tool_call("render", {"name": "x" * 5000, "gate": str(gate)}, tool_use_id="t1"), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[MCPServerHTTP(url, protocol="auto", max_result_bytes=1000)])
    try:
        assert agent("go").stop_reason == "end_turn"
    finally:
        agent.close()
    tool_results = [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]
    assert tool_results[0]["status"] == "error" and "larger than max_result_bytes=1000" in tool_results[0]["content"][0]["text"]
