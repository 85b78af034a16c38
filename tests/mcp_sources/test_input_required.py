"""MCP multi-round-trip results (2026-07-28) as durable interrupts: a real MCP server asks for
input mid-call, the run stops with an interrupt per question, the process is killed, another
process answers and the call is retried once with the answers and the stored requestState."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.durable import SQLiteStore
from tether.errors import HandleRejectedError
from tether.mcp import IDEMPOTENCY_META_KEY, MCPServerStdio
from tether.models import tool_call

from .fixtures import CallLog, alive

ROOT = Path(__file__).resolve().parents[2]
ASKER = Path(__file__).parent / "servers" / "asker.py"


class Worker:
    """``tests.mcp_sources.rounds_worker`` in a child process."""

    def __init__(self, *args: str, exit_after: bool = False, env: dict[str, str] | None = None) -> None:
        env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        if exit_after:
            env["ROUNDS_EXIT"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.mcp_sources.rounds_worker", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def outcome(self) -> tuple[str, str, Any]:
        """The worker's ``stopped``/``error`` line: (kind, stop reason or error type, details)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"the worker ended without an outcome: {self.proc.communicate()}")
            if line.startswith("stopped "):
                _, reason, rest = line.rstrip("\n").split(" ", 2)
                return "stopped", reason, json.loads(rest)
            if line.startswith("error "):
                _, kind, rest = line.rstrip("\n").split(" ", 2)
                return "error", kind, json.loads(rest)
        raise AssertionError("no outcome within 90 s")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        assert self.proc.returncode == -signal.SIGKILL


def _stop_servers(log: CallLog) -> None:
    for pid in log.pids():
        if alive(pid):
            os.kill(pid, signal.SIGKILL)  # the killed worker's orphaned server


def test_questions_interrupt_the_run_and_an_answer_in_a_new_process_completes_the_call_once(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.db", CallLog(tmp_path / "asker.jsonl")
    args = [str(db), "r1", str(ASKER), str(log.path), "book", json.dumps({"city": "Oslo"})]
    first = Worker(*args, "start")
    try:
        kind, reason, pending = first.outcome()
        assert (kind, reason) == ("stopped", "interrupt")
        assert [item["name"] for item in pending] == ["book/seat", "book/confirm"]  # one interrupt per question
        seat = pending[0]["reason"]
        assert seat["message"] == "Which seat on the flight to Oslo?" and seat["method"] == "elicitation/create"
        assert seat["requestedSchema"]["properties"] == {"seat": {"type": "string"}} and seat["server"] and seat["input"] == "seat"
    finally:
        first.kill9()
    _stop_servers(log)
    stored = SQLiteStore(db).load("r1")
    assert stored is not None
    entry = stored.head["state"]["tether.mcp"]["calls"]["t1"]  # the round is part of the run's JSON
    assert entry["round"] == 1 and entry["tool"] == "book" and entry["requestState"].startswith('{"city": "Oslo"')
    assert [e.get("call") for e in log.entries()] == ["book"]

    ids = {item["name"]: item["id"] for item in pending}
    answers = [
        {"interruptId": ids["book/seat"], "response": "12A"},  # a bare value: the form's one field
        {"interruptId": ids["book/confirm"], "response": {"action": "accept", "content": {"ok": True}}},
    ]
    second = Worker(*args, "resume", json.dumps(answers), exit_after=True)
    kind, reason, pending = second.outcome()
    assert (kind, reason, pending) == ("stopped", "end_turn", [])
    second.proc.communicate(timeout=60)
    calls = [e for e in log.entries() if "call" in e]
    effects = [e for e in log.entries() if e.get("effect") == "booked"]
    assert len(calls) == 2 and len(effects) == 1  # the question, then exactly one retry that booked
    retry = calls[1]
    assert retry["state"] == entry["requestState"]  # the stored state, echoed
    assert retry["answers"] == {
        "seat": {"action": "accept", "content": {"seat": "12A"}},
        "confirm": {"action": "accept", "content": {"ok": True}},
    }
    assert retry["meta"][IDEMPOTENCY_META_KEY] == "r1/t1" and effects[0]["seat"] == "12A"
    final = SQLiteStore(db).load("r1")
    assert final is not None and "tether.mcp" not in final.head["state"]  # dropped with the recorded result
    results = [block["toolResult"] for message in final.messages for block in message["content"] if "toolResult" in block]
    assert results[0]["content"] == [{"text": "booked Oslo seat 12A"}]

    again = Worker(*args, "resume", exit_after=True)  # a finished run: nothing is called again
    assert again.outcome()[:2] == ("stopped", "end_turn")
    again.proc.communicate(timeout=60)
    assert len([e for e in log.entries() if "call" in e]) == 2


def test_questions_answered_one_at_a_time_ask_only_what_is_left(tmp_path: Path) -> None:
    log = CallLog(tmp_path / "asker.jsonl")
    source = MCPServerStdio(sys.executable, [str(ASKER), "--log", str(log.path)], protocol="auto", startup_timeout=30)
    agent = Agent(model=ScriptedModel([tool_call("book", {"city": "Rome"}, tool_use_id="t1"), "ok"]), tools=[source])
    try:
        result = agent("go")
        seat, confirm = result.interrupts
        result = agent([{"interruptResponse": {"interruptId": seat.id, "response": {"seat": "3C"}}}])
        assert result.stop_reason == "interrupt" and [i.name for i in result.interrupts] == ["book/confirm"]
        result = agent([{"interruptResponse": {"interruptId": confirm.id, "response": "decline"}}])
        assert result.stop_reason == "end_turn"
    finally:
        agent.close()
    calls = [e for e in log.entries() if "call" in e]
    assert len(calls) == 2 and calls[1]["answers"]["confirm"] == {"action": "decline"}
    assert not [e for e in log.entries() if e.get("effect")]  # declined: nothing booked


def test_a_stored_request_state_the_server_refuses_is_a_clear_error_and_nothing_is_lost(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.db", CallLog(tmp_path / "asker.jsonl")
    args = [str(db), "r2", str(ASKER), str(log.path), "book", json.dumps({"city": "Lima"})]
    first = Worker(*args, "start")
    try:
        kind, reason, pending = first.outcome()
        assert (kind, reason) == ("stopped", "interrupt")
    finally:
        first.kill9()
    _stop_servers(log)
    before = _stored(db, "r2")
    ids = [item["id"] for item in pending]
    answers = [{"interruptId": ids[0], "response": "1A"}, {"interruptId": ids[1], "response": {"ok": True}}]
    # The server's signing key rotated meanwhile: it refuses the stored state.
    second = Worker(*args, "resume", json.dumps(answers), exit_after=True, env={"ASKER_KEY": "rotated"})
    kind, error, message = second.outcome()
    second.proc.communicate(timeout=60)
    assert (kind, error) == ("error", "HandleRejectedError")
    assert "run 'r2'" in message and "tool call 't1'" in message and 'state["tether.mcp"]["calls"]["t1"]["requestState"]' in message
    assert not [e for e in log.entries() if e.get("effect")]
    after = _stored(db, "r2")
    for key in ("messages", "results", "round"):
        assert after[key] == before[key], key  # nothing lost: the messages, recorded results, the stored round
    assert after["steps"][: len(before["steps"])] == before["steps"]
    assert after["steps"][len(before["steps"]) :] == [("turn_end", "failed")]  # the failed turn is recorded, as any
    assert after["answers"] == {ids[0]: "1A", ids[1]: {"ok": True}}  # the answers are kept with the run

    # The key is back: a resume retries with the kept state and answers, and books once.
    third = Worker(*args, "resume", exit_after=True)
    assert third.outcome()[:2] == ("stopped", "end_turn")
    third.proc.communicate(timeout=60)
    effects = [e for e in log.entries() if e.get("effect") == "booked"]
    assert len(effects) == 1 and effects[0]["seat"] == "1A"


def _stored(db: Path, run_id: str) -> dict[str, Any]:
    """What the store holds of a run: messages, recorded results, steps, the MCP round, the answers."""
    store = SQLiteStore(db)
    run = store.load(run_id)
    assert run is not None
    interrupts = run.head["interrupt_state"].get("interrupts") or {}
    return {
        "messages": run.messages,
        "results": run.results,
        "steps": [(step.position, step.status) for step in store.history(run_id)],
        "round": run.head["state"]["tether.mcp"],
        "answers": {ident: item["response"] for ident, item in interrupts.items() if "response" in item},
    }


def test_a_malformed_stored_round_names_the_field_and_sends_nothing(tmp_path: Path) -> None:
    log = CallLog(tmp_path / "asker.jsonl")
    source = MCPServerStdio(sys.executable, [str(ASKER), "--log", str(log.path)], protocol="auto", startup_timeout=30)
    agent = Agent(model=ScriptedModel([tool_call("book", {"city": "Rome"}, tool_use_id="t1"), "ok"]), tools=[source])
    try:
        result = agent("go")
        agent.run_state.state["tether.mcp"]["calls"]["t1"]["requestState"] = 42
        with pytest.raises(HandleRejectedError) as caught:
            agent([{"interruptResponse": {"interruptId": i.id, "response": "x"}} for i in result.interrupts])
    finally:
        agent.close()
    assert caught.value.field == 'state["tether.mcp"]["calls"]["t1"]["requestState"]' and caught.value.tool_use_id == "t1"
    assert len(log.entries()) == 1  # the first call only


def test_a_retry_cut_by_kill_9_is_in_doubt_and_rerun_sends_it_again_once(tmp_path: Path) -> None:
    db, log, gate = tmp_path / "runs.db", CallLog(tmp_path / "asker.jsonl"), tmp_path / "gate"
    args = [str(db), "r5", str(ASKER), str(log.path), "book", json.dumps({"city": "Kyiv", "gate": str(gate)})]
    first = Worker(*args, "start")
    try:
        pending = first.outcome()[2]
    finally:
        first.kill9()
    _stop_servers(log)
    answers = [{"interruptId": pending[0]["id"], "response": "7F"}, {"interruptId": pending[1]["id"], "response": {"ok": True}}]
    second = Worker(*args, "resume", json.dumps(answers))
    try:
        deadline = time.monotonic() + 60
        while len([e for e in log.entries() if "call" in e]) < 2:  # polling the server's log: the retry is in flight
            assert time.monotonic() < deadline, "the retry never reached the server"
            time.sleep(0.02)
    finally:
        second.kill9()
    _stop_servers(log)  # the retry dies with its server: nothing was booked
    third = Worker(*args, "resume", exit_after=True)
    kind, reason, asked = third.outcome()
    third.proc.communicate(timeout=60)
    assert (kind, reason) == ("stopped", "interrupt") and [item["name"] for item in asked] == ["tether.in_doubt"]
    assert "retry with the answers was sent" in asked[0]["reason"]["question"]
    assert len([e for e in log.entries() if "call" in e]) == 2  # asked, not re-sent blindly
    gate.touch()
    fourth = Worker(*args, "resume", json.dumps([{"interruptId": asked[0]["id"], "response": "rerun"}]), exit_after=True)
    assert fourth.outcome()[:2] == ("stopped", "end_turn")
    fourth.proc.communicate(timeout=60)
    calls = [e for e in log.entries() if "call" in e]
    effects = [e for e in log.entries() if e.get("effect") == "booked"]
    assert len(calls) == 3 and calls[2]["state"] == calls[1]["state"] and calls[2]["answers"] == calls[1]["answers"]
    assert [c["meta"][IDEMPOTENCY_META_KEY] for c in calls] == ["r5/t1"] * 3
    assert len(effects) == 1 and effects[0]["seat"] == "7F"
