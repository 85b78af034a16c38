"""Claim-check of every run value that is not a message, and the hard limit of one value.

On the dev server: megabyte-sized agent state and interrupt reasons/answers leave every
history event (and so every payload) far below 512 KiB, the run ends normally, and the
workflow result does not repeat the state. Unit tests cover the helpers of
:mod:`tether.temporal.payloads`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from tether.errors import PayloadTooLargeError
from tether.temporal import BlobStore, TetherClient
from tether.temporal.payloads import (
    MAX_COMPACT_BYTES,
    compact_interrupt,
    compact_state,
    expand_interrupt,
    expand_state,
    is_placeholder,
    offload,
    restore,
)

from .fixtures import history_events, running_worker

EVENT_LIMIT = 512 * 1024


async def _largest_event(client: Client, workflow_id: str) -> int:
    """The largest history event of the workflow (all its executions); it bounds every payload."""
    return max(event.ByteSize() for event in await history_events(client, workflow_id))


@pytest.mark.parametrize("size", [1_200_000, 3_000_000])
async def test_a_megabytes_agent_state_ends_normally_with_small_history_events(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, size: int
) -> None:
    log = tmp_path / "side.log"
    run_id = f"bulky-state-{size}"
    tc = TetherClient(client, blobs, task_queue)
    config = {"log": str(log), "state_size": size, "grow_size": size, "notes_size": size}
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("bulky", "Grow.", run_id=run_id, config=config)
        snapshot = await tc.final_snapshot(run_id)
        raw: dict[str, Any] = await client.get_workflow_handle(run_id).result()
    assert result.stop_reason == "end_turn" and result.text == "bulky done"
    assert len(result.state["seed"]) == size and len(result.state["grown"]) == size and result.state["small"] == 1
    assert snapshot.data["state"] == result.state
    assert len(snapshot.data["conversation_manager_state"]["notes"]) == size  # the conversation manager's state
    assert log.read_text().splitlines().count("grow") == 1  # the tool ran once
    assert "state" not in raw  # the result does not repeat the state ...
    assert is_placeholder(raw["run"]["state"]["grown"]) and raw["run"]["state"]["small"] == 1  # ... and carries it compact
    assert is_placeholder(raw["run"]["conversation_manager_state"])
    assert await _largest_event(client, run_id) < EVENT_LIMIT


async def test_a_3_mb_interrupt_reason_and_a_1_mb_answer(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    tc = TetherClient(client, blobs, task_queue)
    config = {"grow_size": 10, "reason_size": 3_000_000}
    async with running_worker(client, task_queue, blobs):
        await tc.start("bulky", "Ask.", run_id="bulky-reason", config=config)
        interrupts = await tc.wait_for_interrupts("bulky-reason")
        assert len(interrupts[0].reason["document"]) == 3_000_000  # type: ignore[index]
        live = await tc.snapshot("bulky-reason")
        assert len(live.data["interrupt_state"]["interrupts"][interrupts[0].id]["reason"]["document"]) == 3_000_000
        await tc.answer_interrupts("bulky-reason", [{"interruptId": interrupts[0].id, "response": "a" * 1_000_000}])
        result = await tc.result("bulky-reason")
        snapshot = await tc.final_snapshot("bulky-reason")
    assert result.stop_reason == "end_turn"
    assert snapshot.data["messages"][-2]["content"][0]["toolResult"]["content"] == [{"text": "answer of 1000000 chars"}]
    assert await _largest_event(client, "bulky-reason") < EVENT_LIMIT


async def test_a_value_over_the_hard_limit_fails_the_run_at_once_naming_it(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, max_value_bytes=1_000_000):
        with pytest.raises(PayloadTooLargeError, match=r"state\['grown'\] is 2000002 bytes .* hard limit of 1000000"):
            await tc.execute("bulky", "Grow.", run_id="bulky-hard", config={"log": str(log), "grow_size": 2_000_000})
    assert log.read_text().splitlines().count("grow") == 1  # non-retryable: not run again


async def test_the_client_refuses_a_prompt_part_over_its_hard_limit(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue, max_value_bytes=1000)
    with pytest.raises(PayloadTooLargeError, match=r"prompt\[0\]\.content\[0\]"):
        await tc.start("two_tools", "x" * 5000, run_id="refused-prompt")


# -- the helpers ----------------------------------------------------------------------------


def test_offload_keeps_small_values_and_stores_large_ones_by_hash(blobs: BlobStore) -> None:
    assert offload(blobs, {"a": 1}, "f", limit=100, hard_limit=None) == {"a": 1}
    big = {"text": "x" * 500}
    placeholder = offload(blobs, big, "f", limit=100, hard_limit=None)
    assert is_placeholder(placeholder)
    assert offload(blobs, big, "f", limit=100, hard_limit=None) == placeholder  # content-addressed
    assert restore(blobs, placeholder) == big
    assert offload(blobs, placeholder, "f", limit=100, hard_limit=None) is placeholder  # never wrapped twice


def test_a_damaged_blob_is_reported_not_returned(blobs: BlobStore) -> None:
    placeholder = offload(blobs, "y" * 500, "f", limit=100, hard_limit=None)
    digest = placeholder["$blob"].split(":")[1]
    (blobs.root / digest[:2] / f"{digest[2:]}.json").write_text('"tampered"')
    with pytest.raises(Exception, match="damaged"):
        restore(blobs, placeholder)


def test_compact_state_offloads_key_by_key_and_limits_what_stays_inline(blobs: BlobStore) -> None:
    state = {"small": 1, "big": "b" * 1000}
    compact = compact_state(blobs, state, "state", limit=100, hard_limit=None)
    assert compact["small"] == 1 and is_placeholder(compact["big"])
    assert expand_state(blobs, compact) == state
    with pytest.raises(PayloadTooLargeError, match=r"state\['big'\] is 1002 bytes"):
        compact_state(blobs, state, "state", limit=100, hard_limit=500)
    many = {f"k{i}": i for i in range(MAX_COMPACT_BYTES // 8)}
    with pytest.raises(PayloadTooLargeError, match=r"^state is"):
        compact_state(blobs, many, "state", limit=100, hard_limit=None)


def test_interrupt_reasons_and_responses_round_trip(blobs: BlobStore) -> None:
    record = {"id": "int_1", "name": "review", "reason": {"doc": "r" * 1000}, "response": "a" * 1000, "tool_use_id": "t1"}
    compact = compact_interrupt(blobs, record, limit=100, hard_limit=None)
    assert is_placeholder(compact["reason"]) and is_placeholder(compact["response"]) and compact["name"] == "review"
    assert expand_interrupt(blobs, compact) == record
    with pytest.raises(PayloadTooLargeError, match="interrupt int_1 reason"):
        compact_interrupt(blobs, record, limit=100, hard_limit=500)
