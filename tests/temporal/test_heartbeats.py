"""Heartbeats that cannot starve, and tool activities that fail for good without failing the run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import TimeoutType
from temporalio.client import Client, WorkflowFailureError

from tether.temporal import BlobStore, TetherClient
from tether.temporal.workflow import DEFAULT_OPTIONS

from .fixtures import activity_starts, history_events, kill_9, running_worker, wait_for_file


async def test_a_blocking_sync_tool_runs_once_and_the_run_succeeds(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    # run_in_thread=False and a 3 s sleep against a 1 s heartbeat timeout: locally the tool
    # blocks the loop; on a worker it runs in a thread, so the heartbeats go on.
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 1.0})
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("blocking", "Block.", run_id="block-1", config={"log": str(log), "sleep": 3.0})
    assert result.stop_reason == "end_turn" and result.text == "unblocked"
    assert log.read_text().splitlines() == ["model 0", "block-start", "block-end", "model 1"]  # one execution
    starts = activity_starts(await history_events(client, "block-1"), "tether.run_tool")
    assert [start.attempt for start in starts] == [1]


async def test_an_always_timing_out_tool_becomes_an_error_result_for_the_model(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue, options={"tool_timeout_s": 0.5, "heartbeat_s": 10.0, "tool_attempts": 2})
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("stuck", "Try.", run_id="stuck-1", config={"log": str(log)})
        snapshot = await tc.final_snapshot("stuck-1")
    assert result.stop_reason == "end_turn" and result.text == "gave up"
    tool_result = snapshot.data["messages"][-2]["content"][0]["toolResult"]
    assert tool_result["status"] == "error"
    assert "did not complete" in tool_result["content"][0]["text"] and "timed out" in tool_result["content"][0]["text"]
    assert log.read_text().splitlines().count("stuck-start") == 2  # both attempts ran (an idempotent tool keeps its retries)


async def test_tool_failure_fail_makes_an_exhausted_tool_fail_the_run(client: Client, blobs: BlobStore, task_queue: str) -> None:
    options = {"tool_timeout_s": 0.5, "heartbeat_s": 10.0, "tool_attempts": 1, "tool_failure": "fail"}
    tc = TetherClient(client, blobs, task_queue, options=options)  # type: ignore[arg-type]
    async with running_worker(client, task_queue, blobs):
        with pytest.raises(WorkflowFailureError):
            await tc.execute("stuck", "Try.", run_id="stuck-fail")


def test_the_model_heartbeat_timeout_defaults_to_30_s() -> None:
    assert DEFAULT_OPTIONS["model_heartbeat_s"] == 30.0


async def test_a_worker_killed_mid_model_call_is_noticed_by_the_heartbeat_timeout(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    # The model call's start-to-close timeout is an hour: only its heartbeat timeout can notice
    # the dead worker, and the history says which timeout fired.
    log, marker = tmp_path / "side.log", tmp_path / "started"
    tc = TetherClient(client, blobs, task_queue, options={"model_heartbeat_s": 1.0, "model_timeout_s": 3600.0})
    await tc.start("sleepy", "Wake up.", run_id="sleepy-1", config={"log": str(log), "sleep": 3600.0, "started_marker": str(marker)})
    await wait_for_file(marker)
    kill_9(worker_process)
    async with running_worker(client, task_queue, blobs):
        result = await tc.result("sleepy-1")
    assert result.stop_reason == "end_turn" and result.text == "awake"
    starts = activity_starts(await history_events(client, "sleepy-1"), "tether.call_model")
    assert [start.attempt for start in starts] == [2]
    assert starts[0].last_failure.timeout_failure_info.timeout_type == TimeoutType.TIMEOUT_TYPE_HEARTBEAT
