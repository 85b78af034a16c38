"""Compensation on Temporal (tether.temporal.unwinding): a failed or cancelled agent workflow
undoes its performed calls newest first, one ``tether.undo`` activity each, recorded in the
workflow's history (the ``tether.compensation`` query); a worker killed (kill -9) during an undo
leaves that undo to run again with the same undo key, and the undos completed before the kill
never run again."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError

from tether.temporal import BlobStore, TetherClient

from .fixtures import kill_9, running_worker, scheduled_activities, wait_for_file

BOOKED = ["book {run}/flight", "book {run}/hotel", "book {run}/charge"]


async def test_a_failed_run_unwinds_with_one_activity_per_undo_each_once_across_a_worker_kill(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    log, marker = tmp_path / "side.log", tmp_path / "undo-started"
    run = "trip-t1"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 1.0})
    handle = await tc.start("booking", "Book.", run_id=run, config={"log": str(log), "sleep": 60.0, "started_marker": str(marker)})
    await wait_for_file(marker)  # the hotel's undo has started (the charge's is done)
    kill_9(worker_process)
    async with running_worker(client, task_queue, blobs):
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        record = await handle.query("tether.compensation")
        history = await handle.fetch_history()
    lines = [line for line in log.read_text().splitlines() if not line.startswith("model")]
    keys = [f"{run}/{ident}/undo" for ident in ("charge", "hotel", "flight")]
    assert lines == [
        *(line.format(run=run) for line in BOOKED),
        f"undo-start {keys[0]} charged 740",
        f"undo-end {keys[0]}",
        f"undo-start {keys[1]} hotel in Lisbon",  # killed here: in doubt
        f"undo-start {keys[1]} hotel in Lisbon",  # run again, on the new worker, with the same key
        f"undo-end {keys[1]}",
        f"undo-start {keys[2]} flight to Lisbon",
        f"undo-end {keys[2]}",
    ]
    assert record["trigger"] == "failed" and record["status"] == "compensated"
    assert [entry["toolUseId"] for entry in record["plan"]] == ["charge", "hotel", "flight"]
    assert {ident: undo["outcome"] for ident, undo in record["undos"].items()} == dict.fromkeys(["charge", "hotel", "flight"], "undone")
    assert record["undos"]["hotel"]["attempt"] == 2 and record["undos"]["charge"]["attempt"] == 1
    assert scheduled_activities(history).count("tether.undo") == 3  # one activity per undo; its retry is an attempt of it


async def test_a_cancelled_run_unwinds_and_a_raising_compensation_is_recorded(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    run = "trip-t2"
    tc = TetherClient(client, blobs, task_queue)
    config = {"log": str(log), "script": "wait", "compensate_on": ["cancelled"], "refuse": "book_flight"}
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("booking", "Book.", run_id=run, config=config)
        await tc.wait_for_interrupts(run)
        await handle.cancel()
        result = await tc.result(run)
        record = await handle.query("tether.compensation")
    assert result.stop_reason == "cancelled"
    assert record["trigger"] == "cancelled" and record["status"] == "compensation_failed"
    assert [entry["toolUseId"] for entry in record["plan"]] == ["charge", "hotel", "flight"]  # not the approval: no compensation
    assert record["undos"]["flight"]["outcome"] == "failed" and "the airline refuses" in record["undos"]["flight"]["error"]
    assert [record["undos"][i]["outcome"] for i in ("charge", "hotel")] == ["undone", "undone"]
    undos = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("undo-start")]
    assert undos == [f"{run}/{ident}/undo" for ident in ("charge", "hotel", "flight")]


async def test_an_ended_run_is_compensated_on_request_once(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    log = tmp_path / "side.log"
    run = "trip-t3"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("booking", "Book.", run_id=run, config={"log": str(log), "compensate_on": []})
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        assert await handle.query("tether.compensation") is None  # it did not unwind by itself
        record = await tc.compensate(run)
        again = await tc.compensate(run)  # the same record: the compensation workflow's id is taken
        history = await client.get_workflow_handle(f"{run}.compensate").fetch_history()
    assert record == again
    assert record["trigger"] == "requested" and record["status"] == "compensated"
    assert [entry["toolUseId"] for entry in record["plan"]] == ["charge", "hotel", "flight"]
    undos = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("undo-start")]
    assert undos == [f"{run}/{ident}/undo" for ident in ("charge", "hotel", "flight")]  # each once
    assert scheduled_activities(history) == ["tether.compensation_plan", "tether.undo", "tether.undo", "tether.undo"]


async def test_a_budget_stop_unwinds(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    config = {"log": str(log), "script": "wait", "compensate_on": ["budget"], "max_tool_calls": 3}
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("booking", "Book.", run_id="trip-t4", config=config)
        raw = await handle.result()
    assert raw["stop_reason"] == "budget_exhausted"  # the fourth call (the approval) was refused
    record = raw["compensation"]
    assert (record["trigger"], record["status"]) == ("budget", "compensated")
    undos = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("undo-start")]
    assert undos == [f"trip-t4/{ident}/undo" for ident in ("charge", "hotel", "flight")]


async def test_a_parent_unwinds_its_agent_tools_child_workflow_in_its_turn(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    run = "trip-t5"
    child = f"{run}.booker"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("trip", "Book.", run_id=run, config={"log": str(log)})
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        record = await handle.query("tether.compensation")
        nested = await client.get_workflow_handle(f"{child}.compensate").result()
    assert [(e["toolUseId"], e.get("run_id")) for e in record["plan"]] == [("charge", None), ("booker", child)]
    assert record["status"] == "compensated" and record["undos"]["booker"]["run_id"] == child
    assert nested["status"] == "compensated" and [e["toolUseId"] for e in nested["plan"]] == ["hotel", "flight"]
    undos = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("undo-start")]
    assert undos == [f"{run}/charge/undo", f"{child}/hotel/undo", f"{child}/flight/undo"]  # the whole tree, newest first
