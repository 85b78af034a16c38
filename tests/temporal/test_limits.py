"""Runs whose conversations outgrow any payload limit: claim-check and continue-as-new."""

from __future__ import annotations

import json

import pytest
from temporalio.client import Client

from tether.temporal import BlobStore, TetherClient
from tether.temporal.versions import canonical_text

from .agents import note_text
from .fixtures import history_stats, running_worker

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


@pytest.mark.soak
async def test_a_long_run_completes_across_continue_as_new(client: Client, blobs: BlobStore, task_queue: str, soak: bool) -> None:
    # On the session's dev server: two real activities a cycle (a model call, a tool call);
    # 2,000 cycles (4,000 activities) with --soak, 500 in CI. The server suggests continue-as-new
    # past 300 history events and the workflow also continues as new every 250 cycles, so the
    # run spans several executions either way.
    cycles = 2000 if soak else 500
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 250})
    async with running_worker(client, task_queue, blobs):
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
    assert stats["runs"] >= cycles // 250
    assert stats["max_event_bytes"] < LIMIT


async def test_a_large_state_edited_every_cycle_stores_its_changes_not_a_copy_per_cycle(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    # Issue 34 at a small size: a 200 KB agent state, one note of it rewritten in each of 200
    # cycles. Storing every version whole would write 200 x 200 KB = 40 MB of blobs.
    count, size, cycles = 200, 1000, 200
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 60})
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("notes", "Note.", run_id="notes-1", config={"count": count, "size": size, "cycles": cycles})
        result = await tc.result("notes-1")
        snapshot = await tc.final_snapshot("notes-1")
        stats = await history_stats(client, "notes-1", handle.result_run_id or "")
    assert result.text == "noted" and result.metrics.cycle_count == cycles
    expected = {f"n{j:05d}": note_text(-1 - j, size) for j in range(count)}
    for i in range(cycles - 1):
        expected[f"n{i % count:05d}"] = note_text(i, size)
    assert snapshot.data["state"]["notes"] == expected
    state_size = len(canonical_text(expected))
    # The state once, then about one note per cycle (a patch) and the changed chunks of a
    # keyframe every 32 versions; messages and conversation nodes are small.
    assert blobs.bytes_written < 3 * state_size + cycles * 4 * 1024
    assert stats["runs"] >= 3  # across continue-as-new: the carried state names the latest version
    assert stats["max_event_bytes"] < 512 * 1024
