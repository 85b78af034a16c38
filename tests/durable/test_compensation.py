"""Compensation (tether.durable.compensation): a failed, cancelled or budget-stopped run's
performed effects are undone newest first, once each, each undo a recorded step; the example
``examples/compensation.py`` is the agent under test (its provider log is keyed by idempotency key)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, Budget, CompensationError
from tether.durable import RunStore, SQLiteStore
from tether.durable.compensation import performed_calls
from tether.models import tool_call
from tether.testing.faults import open_store

from .compensation_worker import load_example

example = load_example()
ROOT = Path(__file__).resolve().parents[2]

RUN = example.RUN_ID
REVERSED = [f"{RUN}/charge/undo", f"{RUN}/hotel/undo", f"{RUN}/flight/undo"]


def booking(tmp_path: Path, **options: Any) -> tuple[Agent, SQLiteStore]:
    store = SQLiteStore(tmp_path / "runs.db")
    return example.build_agent(tmp_path, store, **options), store


def provider(tmp_path: Path) -> dict[str, Any]:
    return example.Provider(tmp_path).read()


def positions(store: SQLiteStore) -> list[str]:
    return [step.position for step in store.history(RUN)]


def status(store: SQLiteStore) -> str:
    (summary,) = store.list_runs()
    return summary.status


def test_a_failed_run_is_undone_in_reverse_once_each(tmp_path: Path) -> None:
    agent, store = booking(tmp_path)
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)
    log = provider(tmp_path)
    assert sorted(log["effects"]) == [f"{RUN}/charge", f"{RUN}/flight", f"{RUN}/hotel"]
    assert log["attempts"] == REVERSED
    assert [log["undone"][key]["what"] for key in REVERSED] == ["charged 740.0", "3 nights in Lisbon", "flight to Lisbon"]
    assert status(store) == "compensated"
    assert positions(store)[-5:] == ["unwind", "undo", "undo", "undo", "unwound"]
    undos = [step.undo for step in store.history(RUN) if step.position == "undo"]
    assert [(u or {}).get("toolUseId") for u in undos] == ["charge", "hotel", "flight"]
    assert all((u or {}).get("outcome") == "undone" for u in undos)


def test_every_store_records_the_unwinding(tmp_path: Path, store: RunStore) -> None:
    """Memory, SQLite and PostgreSQL: the unwinding's steps, statuses and report (on PostgreSQL the
    failing model call follows a write committing behind: it is stored before the failure is)."""
    agent = example.build_agent(tmp_path, store)
    with pytest.raises(RuntimeError):
        agent("book", run_id=RUN)
    assert provider(tmp_path)["attempts"] == REVERSED
    assert [s.position for s in store.history(RUN)][-6:] == ["turn_end", "unwind", "undo", "undo", "undo", "unwound"]
    assert [s.status for s in store.history(RUN)][-6:] == ["failed", *["compensating"] * 4, "compensated"]
    assert [r.status for r in store.list_runs()] == ["compensated"]
    assert agent.compensate(RUN).status == "compensated"
    assert provider(tmp_path)["attempts"] == REVERSED
    agent.close()


def test_compensation_is_off_by_default_and_on_request_runs_once(tmp_path: Path) -> None:
    agent, store = booking(tmp_path, compensate_on=())
    with pytest.raises(RuntimeError):
        agent("book", run_id=RUN)
    assert provider(tmp_path)["attempts"] == []
    assert status(store) == "failed"
    report = asyncio.run(agent.compensate_async(RUN))
    assert (report.status, report.trigger) == ("compensated", "requested")
    assert [u.tool_use_id for u in report.undos] == ["charge", "hotel", "flight"]
    again = agent.compensate(RUN)  # already compensated: the stored report, nothing undone again
    assert again == report
    assert provider(tmp_path)["attempts"] == REVERSED
    with pytest.raises(CompensationError, match="compensated"):
        agent.resume(RUN)


def test_a_run_that_finishes_undoes_nothing(tmp_path: Path) -> None:
    script = [tool_call("book_flight", {"to": "Oslo"}, tool_use_id="flight"), "booked"]
    agent, store = booking(tmp_path, script=script, compensate_on=("failed", "cancelled", "budget"))
    assert agent("book", run_id=RUN).stop_reason == "end_turn"
    assert provider(tmp_path)["attempts"] == []
    assert status(store) == "finished"
    assert not {"unwind", "undo", "unwound"} & set(positions(store))


def test_a_cancel_mid_run_undoes_what_was_done(tmp_path: Path) -> None:
    holder: list[Agent] = []

    def cancel_then_ticket(_messages: Any) -> Any:
        holder[0].cancel()  # the user cancels while the fourth step is being decided
        return tool_call("book_flight", {"to": "Porto"}, tool_use_id="never")

    script = [*example_script()[:3], cancel_then_ticket]
    agent, store = booking(tmp_path, script=script, compensate_on=("cancelled",))
    holder.append(agent)
    assert agent("book", run_id=RUN).stop_reason == "cancelled"
    assert provider(tmp_path)["attempts"] == REVERSED
    assert status(store) == "compensated"


def test_a_budget_stop_undoes_what_was_done(tmp_path: Path) -> None:
    script = [*example_script()[:3], tool_call("book_flight", {"to": "Porto"}, tool_use_id="fourth"), "done"]
    agent, store = booking(tmp_path, script=script, compensate_on=("budget",), budget=Budget(max_tool_calls=3))
    assert agent("book", run_id=RUN).stop_reason == "budget_exhausted"
    log = provider(tmp_path)
    assert f"{RUN}/fourth" not in log["effects"]
    assert log["attempts"] == REVERSED
    assert status(store) == "compensated"


def test_a_compensation_that_raises_is_recorded_and_the_unwinding_goes_on(tmp_path: Path) -> None:
    agent, store = booking(tmp_path, failing_refund=True)
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)
    assert provider(tmp_path)["attempts"] == REVERSED[1:]  # the hotel and the flight still undone
    assert status(store) == "compensation_failed"
    last = store.history(RUN)[-1]
    assert last.position == "unwound"
    assert last.stop_reason is not None and "charge_card (charge): RuntimeError: the card network refused" in last.stop_reason
    report = agent.compensate(RUN)  # asking again runs nothing: a failed undo is not retried blindly
    assert report.status == "compensation_failed"
    assert [(u.tool, u.outcome) for u in report.undos] == [("charge_card", "failed"), ("book_hotel", "undone"), ("book_flight", "undone")]
    assert report.failed[0].error is not None and "refused the refund of 740.0" in report.failed[0].error
    assert provider(tmp_path)["attempts"] == REVERSED[1:]


def test_performed_calls_are_newest_first_with_in_doubt_calls_and_without_errors() -> None:
    def use(ident: str, name: str = "t") -> dict[str, Any]:
        return {"toolUse": {"toolUseId": ident, "name": name, "input": {"x": ident}}}

    def result(ident: str, status: str = "success") -> dict[str, Any]:
        return {"toolResult": {"toolUseId": ident, "status": status, "content": [{"text": ident}]}}

    messages: list[Any] = [
        {"role": "assistant", "content": [use("a"), use("b")]},
        {"role": "user", "content": [result("a"), result("b", "error")]},
        {"role": "assistant", "content": [use("a")]},  # the same call again (a rewritten history): once
        {"role": "assistant", "content": [use("c"), use("d"), use("e")]},
    ]
    open_results: dict[str, Any] = {"c": result("c")["toolResult"]}
    plan = performed_calls(messages, open_results, ["c", "d"], "tools")
    assert [(p["toolUseId"], p["result"] is None) for p in plan] == [("d", True), ("c", False), ("a", False)]


def test_compensate_on_is_checked(tmp_path: Path) -> None:
    with pytest.raises(CompensationError, match="'failure' is not one of"):
        booking(tmp_path, compensate_on=("failure",))
    with pytest.raises(CompensationError, match="the string"):
        booking(tmp_path, compensate_on="failed")


def example_script() -> list[Any]:
    return [
        tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
        tool_call("book_hotel", {"city": "Lisbon", "nights": 3}, tool_use_id="hotel"),
        tool_call("charge_card", {"amount": 740.0}, tool_use_id="charge"),
    ]


def worker(tmp_path: Path, *args: str, spec: str | None = None) -> subprocess.CompletedProcess[str]:
    """The booking example's worker in a fresh process (see tests/durable/compensation_worker.py),
    on the store ``spec`` (default: ``tmp_path/runs.db``)."""
    spec = spec or str(tmp_path / "runs.db")
    command = [sys.executable, "-m", "tests.durable.compensation_worker", spec, str(tmp_path), *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def failed_booking(tmp_path: Path, spec: str) -> None:
    """A failed booking run, not compensated, in store ``spec`` (one of another point deleted first)."""
    store = open_store(spec)
    if store.head(RUN) is not None:
        store.delete_run(RUN)
    agent = example.build_agent(tmp_path, store, compensate_on=())
    with pytest.raises(RuntimeError):
        agent("book", run_id=RUN)
    agent.close()
    store.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_kill_at_every_save_point_of_the_unwinding_resumes_it_undoing_each_once(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    """Compensation in a child killed (SIGKILL) before and after each of its store writes; a
    second child finishes it. Every effect is undone exactly once (the provider dedupes by undo
    key); an undo runs a second time only when the kill fell before its outcome was stored (it
    was in doubt), with the same key; the history holds one ``undo`` step per call. On SQLite
    each point has its own file; on PostgreSQL the points share a database, one after another."""
    pg = ""
    if kind == "postgres":
        fields = dict(part.split("=", 1) for part in request.getfixturevalue("pg_conninfo").split())
        pg = f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"

    def spec_of(folder: Path) -> str:
        return pg or str(folder / "runs.db")

    counting = tmp_path / "count"
    counting.mkdir()
    failed_booking(counting, spec_of(counting))
    clean = worker(counting, "compensate", spec=spec_of(counting))
    assert clean.returncode == 0, clean.stderr
    writes = json.loads(clean.stdout)["commits"]
    assert writes == 8  # unwind, 3 x (start marker, undo step), unwound
    rerun = 0  # points where an undo in doubt really ran a second time (with the same key)
    for point in range(1, writes + 1):
        for when in ("before", "after"):
            folder = tmp_path / f"{point}-{when}"
            folder.mkdir()
            failed_booking(folder, spec_of(folder))
            killed = worker(folder, "compensate", str(point), when, spec=spec_of(folder))
            assert killed.returncode == -signal.SIGKILL, f"{point} {when}: {killed.stderr}"
            resumed = worker(folder, "compensate", spec=spec_of(folder))
            assert resumed.returncode == 0, f"{point} {when}: {resumed.stderr}"
            assert json.loads(resumed.stdout)["status"] == "compensated"
            log = provider(folder)
            assert sorted(log["undone"]) == sorted(REVERSED), f"{point} {when}"
            assert list(dict.fromkeys(log["attempts"])) == REVERSED, f"{point} {when}: undone out of order"
            repeats = [key for key, count in Counter(log["attempts"]).items() if count > 1]
            assert all(count <= 2 for count in Counter(log["attempts"]).values()), f"{point} {when}: {log['attempts']}"
            assert len(repeats) <= 1 and (not repeats or when == "before"), f"{point} {when}: {log['attempts']}"
            store = open_store(spec_of(folder))
            steps = store.history(RUN)
            store.close()
            assert [s.position for s in steps].count("unwind") == 1
            assert [s.position for s in steps].count("unwound") == 1
            undos = [(s.undo or {}) for s in steps if s.position == "undo"]
            assert [u.get("toolUseId") for u in undos] == ["charge", "hotel", "flight"], f"{point} {when}"
            redone = [key for key, u in zip(REVERSED, undos, strict=True) if u.get("redo")]  # in doubt when resumed
            assert len(redone) <= 1 and set(repeats) <= set(redone), f"{point} {when}: {redone} {repeats}"
            rerun += bool(repeats)
    assert rerun == 3  # the kill before each undo's outcome was stored


def test_an_in_doubt_call_is_undone_with_its_key(tmp_path: Path) -> None:
    """The process dies after the card was charged and before the charge was recorded: the
    charge is in doubt; compensation attempts its undo (``Undo.result`` None) with the call's key."""
    crashed = worker(tmp_path, "book")
    assert crashed.returncode == 1, crashed.stderr
    assert f"{RUN}/charge" in provider(tmp_path)["effects"]
    agent, store = booking(tmp_path, compensate_on=())
    report = agent.compensate(RUN)
    assert [(u.tool_use_id, u.in_doubt, u.outcome) for u in report.undos] == [
        ("charge", True, "undone"),
        ("hotel", False, "undone"),
        ("flight", False, "undone"),
    ]
    first = next(step for step in store.history(RUN) if step.position == "undo")
    assert first.undo is not None and (first.undo["toolUseId"], first.undo["in_doubt"]) == ("charge", True)
    log = provider(tmp_path)
    assert log["attempts"] == REVERSED
    assert log["undone"][f"{RUN}/charge/undo"] == {"call": f"{RUN}/charge", "what": "charged 740.0"}
