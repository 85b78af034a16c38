"""A killed worker and a restarted server: the run completes, completed activities are not re-run."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from temporalio.client import Client

from tether.multiagent import child_run_id
from tether.temporal import BlobStore, TetherClient

from .fixtures import killed_in_the_slow_tool, running_worker, wait_for_file
from .server import DevServer, require_binary

_wait_for = wait_for_file


async def _killed_in_the_slow_tool(
    client: Client, blobs: BlobStore, task_queue: str, process: subprocess.Popen[str], tmp_path: Path, agent: str, prompt: str, run_id: str
) -> tuple[Any, list[str]]:
    """``agent`` started as ``run_id`` on the worker ``process``, killed in its slow tool, finished in-process."""
    return await killed_in_the_slow_tool(
        client,
        blobs,
        task_queue,
        process,
        tmp_path,
        lambda tc, config: tc.start(agent, prompt, run_id=run_id, config=config),
        lambda tc: tc.result(run_id),
    )


async def _cancelled_in_the_slow_tool(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, agent: str, prompt: str, run_id: str, child_id: str | None = None
) -> tuple[Any, Any, Any]:
    """``agent`` started as ``run_id`` and cancelled once its slow tool started; returns its result,
    its final snapshot and (``child_id``) the result of its agent tool's child run."""
    marker = tmp_path / "slow-started"
    tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 0.5})
    config = {"sleep": 1.0, "started_marker": str(marker)}
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start(agent, prompt, run_id=run_id, config=config)
        await _wait_for(marker)
        await handle.cancel()
        result = await tc.result(run_id)
        snapshot = await tc.final_snapshot(run_id)
        child = await tc.result(child_id) if child_id else None
    return result, snapshot, child


async def test_kill_9_worker_during_a_slow_tool(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    result, lines = await _killed_in_the_slow_tool(client, blobs, task_queue, worker_process, tmp_path, "slow", "Go.", "crash-1")
    assert result.stop_reason == "end_turn"
    assert result.text == "all done"
    # Completed activities ran once; only the killed (idempotent) tool call ran again, and both
    # attempts saw the same idempotency key.
    key = "crash-1/tooluse_3_0"
    assert lines == ["model 0", "fast 1", "model 1", f"slow-start 2 {key}", f"slow-start 2 {key}", "slow-end 2", "model 2"]
    assert result.metrics.tool_call_count == 2


async def test_dev_server_restart_mid_run(blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    server = DevServer(require_binary(), db_file=tmp_path / "t.db")
    await asyncio.to_thread(server.start)
    try:
        log = tmp_path / "side.log"
        marker = tmp_path / "slow-started"
        client = await Client.connect(server.address)
        tc = TetherClient(client, blobs, task_queue, options={"heartbeat_s": 2.0})
        config = {"log": str(log), "sleep": 2.0, "started_marker": str(marker)}
        async with running_worker(client, task_queue, blobs):
            await tc.start("slow", "Go.", run_id="restart-1", config=config)
            await _wait_for(marker)
            await asyncio.to_thread(server.stop)
            await asyncio.to_thread(server.start)
            result = await tc.result("restart-1")
        assert result.stop_reason == "end_turn"
        assert result.text == "all done"
        lines = log.read_text().splitlines()
        assert lines[:3] == ["model 0", "fast 1", "model 1"]  # recorded before the restart: not re-run
        assert lines[-1] == "model 2" and lines.count("model 2") == 1
        assert "slow-end 2" in lines
    finally:
        await asyncio.to_thread(server.stop)


async def test_cancelling_a_run_ends_it_like_agent_cancel(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    result, snapshot, _ = await _cancelled_in_the_slow_tool(client, blobs, task_queue, tmp_path, "slow", "Go.", "cancel-1")
    assert result.stop_reason == "cancelled"
    last = snapshot.data["messages"][-1]["content"][0]["toolResult"]
    assert last["status"] == "error" and "cancelled" in last["content"][0]["text"]
    assert result.metrics.model_call_count == 2


async def test_kill_9_worker_inside_an_agent_tools_child_redoes_no_finished_child_work(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, worker_process: subprocess.Popen[str]
) -> None:
    # The agent tool's call is a child workflow: the child's model calls and its fast tool are
    # activities of the child's own history, so the worker dying in the child's slow tool
    # re-runs that tool only (in-activity children used to redo the whole child).
    args = (client, blobs, task_queue, worker_process, tmp_path)
    result, lines = await _killed_in_the_slow_tool(*args, "delegator", "Delegate.", "crash-nested")
    assert result.stop_reason == "end_turn"
    assert result.text == "parent done"
    key = f"{child_run_id('crash-nested', 'tooluse_1_0')}/tooluse_3_0"  # the child run's id and its tool call
    assert lines == [
        "parent 0",
        "model 0",
        "fast 1",
        "model 1",
        f"slow-start 2 {key}",
        f"slow-start 2 {key}",
        "slow-end 2",
        "model 2",
        "parent 1",
    ]
    assert result.metrics.model_call_count == 5  # the parent's 2 and the child's 3, rolled up once


async def test_cancelling_a_run_cancels_its_agent_tools_child(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    child_id = child_run_id("cancel-nested", "tooluse_1_0")
    result, snapshot, child = await _cancelled_in_the_slow_tool(
        client, blobs, task_queue, tmp_path, "delegator", "Delegate.", "cancel-nested", child_id
    )
    assert result.stop_reason == "cancelled"
    assert child.stop_reason == "cancelled"  # the child ended like Agent.cancel() too, not abandoned
    last = snapshot.data["messages"][-1]["content"][0]["toolResult"]
    assert last["status"] == "error" and "cancelled" in last["content"][0]["text"]
