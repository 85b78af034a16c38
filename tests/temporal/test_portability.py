"""Runs move between a local process and Temporal: promotion from SQLite and from a checkpoint."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from tether.durable import SQLiteStore
from tether.temporal import BlobStore, TetherClient

from .agents import registry
from .fixtures import running_worker


async def test_a_local_sqlite_run_is_promoted_and_finished_on_temporal(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    config = {"log": str(log)}
    store = SQLiteStore(tmp_path / "runs.db")
    local = registry.build("asker", config)
    local.store = store
    paused = await local.invoke_async("Book Lisbon.", run_id="trip-1")
    assert paused.stop_reason == "interrupt"
    answer = [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "yes"}}]

    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.promote_stored("asker", store, "trip-1", prompt=answer, config=config)
        result = await tc.result("trip-1")
        snapshot = await tc.final_snapshot("trip-1")
    store.close()

    reference = registry.build("asker", {})
    first = await reference.invoke_async("Book Lisbon.")
    await reference.invoke_async([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
    assert result.stop_reason == "end_turn"
    assert result.text == "Booking handled."
    assert snapshot.data["messages"] == reference.take_snapshot(preset="all").data["messages"]
    assert result.metrics.model_call_count == 2  # the local call is counted too
    assert log.read_text().splitlines() == ["model 0", "book Lisbon yes", "model 1"]


async def test_a_local_checkpoint_continues_on_temporal(client: Client, blobs: BlobStore, task_queue: str) -> None:
    local = registry.build("asker", {"checkpointing": True})
    paused = await local.invoke_async("Book Lisbon.")
    assert paused.stop_reason == "checkpoint" and paused.checkpoint is not None
    assert paused.checkpoint.position == "after_model"

    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.start("asker", {"checkpointResume": {"checkpoint": paused.checkpoint.to_dict()}}, run_id="cp-1")
        interrupts = await tc.wait_for_interrupts("cp-1")
        await tc.answer_interrupts("cp-1", [{"interruptId": interrupts[0].id, "response": "fine"}])
        result = await tc.result("cp-1")
        snapshot = await tc.final_snapshot("cp-1")
    assert result.stop_reason == "end_turn"
    assert result.metrics.model_call_count == 2
    assert snapshot.data["messages"][-2]["content"][0]["toolResult"]["content"] == [{"text": "booked Lisbon: fine"}]


async def test_a_finished_temporal_turn_continues_locally_and_back(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        first = await tc.execute("two_tools", "Compute things.", run_id="round-1")
        exported = await tc.final_snapshot("round-1")
        # Temporal -> local: a fresh agent loads the exported snapshot and sees the same conversation.
        config = {"extra": ["And that is all."]}
        local = registry.build("two_tools", config)
        local.load_snapshot(exported)
        assert local.messages == exported.data["messages"]
        # local -> Temporal: promote the snapshot with a new prompt; the script continues from model_state.
        handle = await tc.promote("two_tools", local.take_snapshot(preset="all"), run_id="round-2", prompt="Anything else?", config=config)
        assert handle.id == "round-2"
        with_extra = await tc.result("round-2")
    assert first.stop_reason == "end_turn"
    assert with_extra.stop_reason == "end_turn"
    assert with_extra.text == "And that is all."
    assert with_extra.metrics.model_call_count == 1  # snapshots carry no metrics: counted from the promotion
    local_reference = registry.build("two_tools", config)
    await local_reference.invoke_async("Compute things.")
    await local_reference.invoke_async("Anything else?")
    assert (await tc.final_snapshot("round-2")).data["messages"] == local_reference.messages
