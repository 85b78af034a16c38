"""Nested runs unwind with their parent (tether.durable.compensation): the parent's agent tool ran
a nested durable run that booked the flight and the hotel; compensating the parent undoes the
whole tree newest first (the parent's charge, then the child's hotel and flight), each once, each
recorded in the run that made it, and a kill at any save point of the nested unwinding resumes
it without undoing anything twice."""

from __future__ import annotations

import json
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tether.durable import RunStore, SQLiteStore
from tether.durable.ids import child_run_id
from tether.errors import StoreError
from tether.testing.faults import open_store

from .compensation_worker import build_nested, load_example
from .test_compensation import worker

example = load_example()
RUN = example.RUN_ID
CHILD = child_run_id(RUN, "booker")
TREE = [f"{RUN}/charge/undo", f"{CHILD}/hotel/undo", f"{CHILD}/flight/undo"]


def provider(folder: Path) -> dict[str, Any]:
    return example.Provider(folder).read()


def failed_nested(folder: Path, store: RunStore) -> None:
    agent = build_nested(folder, store)
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)


def test_compensating_a_parent_unwinds_its_nested_run_in_reverse_once_each(tmp_path: Path, store: RunStore) -> None:
    """Memory, SQLite and PostgreSQL."""
    agent = build_nested(tmp_path, store, compensate_on=("failed",))
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)
    log = provider(tmp_path)
    assert sorted(log["effects"]) == sorted(key.removesuffix("/undo") for key in TREE)
    assert log["attempts"] == TREE
    statuses = {run.run_id: run.status for run in store.list_runs()}
    assert statuses == {RUN: "compensated", CHILD: "compensated"}
    parent_undos = [s.undo or {} for s in store.history(RUN) if s.position == "undo"]
    assert [(u.get("toolUseId"), u.get("run_id"), u.get("outcome")) for u in parent_undos] == [
        ("charge", None, "undone"),
        ("booker", CHILD, "undone"),
    ]
    child_steps = store.history(CHILD)
    assert [s.position for s in child_steps][-4:] == ["unwind", "undo", "undo", "unwound"]
    assert [(s.undo or {}).get("toolUseId") for s in child_steps if s.position == "undo"] == ["hotel", "flight"]
    report = agent.compensate(RUN)  # again: the stored report, nothing undone twice
    assert [(u.tool_use_id, u.run_id, u.outcome) for u in report.undos] == [("charge", None, "undone"), ("booker", CHILD, "undone")]
    assert provider(tmp_path)["attempts"] == TREE


def test_a_failed_nested_undo_fails_the_parents_undo_of_that_call(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    failed_nested(tmp_path, store)
    agent = build_nested(tmp_path, store)
    booker = agent.tool_registry.get("booker")
    assert booker is not None
    tools = booker.nested_tools()
    assert tools is not None
    hotel = tools("book_hotel")
    assert hotel is not None

    def refuse(undo: object) -> None:
        raise RuntimeError("the hotel keeps the deposit")

    hotel.compensate = refuse
    report = agent.compensate(RUN)
    assert report.status == "compensation_failed"
    (failed,) = report.failed
    assert (failed.tool_use_id, failed.run_id) == ("booker", CHILD)
    assert failed.error is not None and "the hotel keeps the deposit" in failed.error
    assert provider(tmp_path)["attempts"] == [TREE[0], TREE[2]]  # the flight is still cancelled
    assert {r.run_id: r.status for r in store.list_runs()} == {RUN: "compensation_failed", CHILD: "compensation_failed"}


def test_a_kill_at_every_save_point_of_a_nested_unwinding_undoes_each_once(tmp_path: Path) -> None:
    """The parent's and the nested run's unwinding writes, each killed (SIGKILL) before and after;
    a second process finishes. Each undo is done once; one runs twice only when the kill fell
    before its outcome was stored (in doubt, the same undo key)."""
    counting = tmp_path / "count"
    counting.mkdir()
    failed_nested(counting, SQLiteStore(counting / "runs.db"))
    clean = worker(counting, "compensate-nested")
    assert clean.returncode == 0, clean.stderr
    writes = json.loads(clean.stdout)["commits"]
    assert writes == 2 + 2 * 2 + 2 + 2 * 2  # the parent: unwind, 2 x (start, undo), unwound; the child the same
    rerun = 0
    for point in range(1, writes + 1):
        for when in ("before", "after"):
            folder = tmp_path / f"{point}-{when}"
            folder.mkdir()
            failed_nested(folder, SQLiteStore(folder / "runs.db"))
            killed = worker(folder, "compensate-nested", str(point), when)
            assert killed.returncode == -signal.SIGKILL, f"{point} {when}: {killed.stderr}"
            resumed = worker(folder, "compensate-nested")
            assert resumed.returncode == 0, f"{point} {when}: {resumed.stderr}"
            assert json.loads(resumed.stdout)["status"] == "compensated"
            log = provider(folder)
            assert sorted(log["undone"]) == sorted(TREE), f"{point} {when}"
            assert list(dict.fromkeys(log["attempts"])) == TREE, f"{point} {when}: undone out of order"
            counts = Counter(log["attempts"])
            assert all(n <= 2 for n in counts.values()) and sum(n == 2 for n in counts.values()) <= 1, f"{point} {when}: {log['attempts']}"
            assert when == "before" or max(counts.values()) == 1, f"{point} {when}: {log['attempts']}"
            rerun += max(counts.values()) == 2
            store = open_store(str(folder / "runs.db"))
            for run_id, undos in ((RUN, ["charge", "booker"]), (CHILD, ["hotel", "flight"])):
                steps = store.history(run_id)
                assert [s.position for s in steps].count("unwind") == 1, f"{point} {when} {run_id}"
                assert [s.position for s in steps].count("unwound") == 1, f"{point} {when} {run_id}"
                assert [(s.undo or {}).get("toolUseId") for s in steps if s.position == "undo"] == undos, f"{point} {when} {run_id}"
            store.close()
    assert rerun == 3  # the kill before each of the three effects' outcome was stored


def test_a_stored_record_naming_another_run_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    """The record is data: a plan entry whose nested run is not its call's child run (a damaged or
    edited store naming some other run to undo) is a StoreError before anything runs or is written."""
    store = SQLiteStore(tmp_path / "runs.db")
    failed_nested(tmp_path, store)
    plan = [{"toolUseId": "booker", "name": "booker", "in_doubt": False, "run_id": "someone-else"}]
    with sqlite3.connect(tmp_path / "runs.db") as db:
        (text,) = db.execute("SELECT head FROM runs WHERE run_id = ?", (RUN,)).fetchone()
        head = {**json.loads(text), "compensation": {"trigger": "requested", "plan": plan, "undos": {}, "done": False}}
        db.execute("UPDATE runs SET head = ? WHERE run_id = ?", (json.dumps(head), RUN))
    db.close()
    before = store.head(RUN)
    with pytest.raises(StoreError, match=r"trip-7.*head.compensation: not a compensation record"):
        build_nested(tmp_path, store).compensate(RUN)
    assert store.head(RUN) == before
    assert provider(tmp_path)["attempts"] == []
