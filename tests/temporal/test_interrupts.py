"""Interrupts answered by update and by signal; snapshots read by query and continued locally."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError

from tether.errors import InterruptError, RunEndedError, RunNotFoundError
from tether.temporal import BlobStore, TetherClient

from .agents import registry
from .fixtures import running_worker


async def test_interrupt_answered_by_update_after_a_refused_answer(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.start("asker", "Book Lisbon.", run_id="ask-update", config={"log": str(log)})
        interrupts = await tc.wait_for_interrupts("ask-update")
        assert [(i.name, i.reason) for i in interrupts] == [("approve", {"city": "Lisbon"})]
        snapshot = await tc.snapshot("ask-update")
        assert snapshot.data["interrupt_state"]["activated"] is True
        assert snapshot.data["messages"][-1]["content"][0]["toolUse"]["name"] == "book"
        with pytest.raises(InterruptError, match="unknown interrupt id 'int_unknown'") as refused:
            await tc.answer_interrupts("ask-update", [{"interruptId": "int_unknown", "response": "yes"}])
        assert isinstance(refused.value.__cause__, WorkflowUpdateFailedError)  # the Temporal failure stays visible
        outcome = await tc.answer_interrupts("ask-update", [{"interruptResponse": {"interruptId": interrupts[0].id, "response": "yes"}}])
        assert outcome["status"] in ("running", "done")
        result = await tc.result("ask-update")
    assert result.stop_reason == "end_turn"
    assert result.text == "Booking handled."
    assert log.read_text().splitlines() == ["model 0", "book Lisbon yes", "model 1"]


async def test_interrupt_answered_by_signal(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.start("asker", "Book Lisbon.", run_id="ask-signal")
        interrupts = await tc.wait_for_interrupts("ask-signal")
        await tc.signal_interrupts("ask-signal", [{"interruptId": interrupts[0].id, "response": "no"}])
        result = await tc.result("ask-signal")
        snapshot = await tc.final_snapshot("ask-signal")
    assert result.stop_reason == "end_turn"
    tool_result = snapshot.data["messages"][-2]["content"][0]["toolResult"]
    assert tool_result["content"] == [{"text": "booked Lisbon: no"}]
    assert snapshot.data["interrupt_state"] == {"interrupts": {}, "context": {}, "activated": False}  # nothing pending


async def test_a_temporal_run_exported_at_an_interrupt_continues_locally(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("asker", "Book Lisbon.", run_id="ask-export")
        interrupts = await tc.wait_for_interrupts("ask-export")
        snapshot = await tc.snapshot("ask-export")
        await handle.terminate("continued locally")
    agent = registry.build("asker", {})
    agent.load_snapshot(snapshot)
    result = await agent.invoke_async([{"interruptResponse": {"interruptId": interrupts[0].id, "response": "ok"}}])
    assert result.stop_reason == "end_turn"
    assert result.text == "Booking handled."
    assert agent.messages[-2]["content"][0]["toolResult"]["content"] == [{"text": "booked Lisbon: ok"}]
    assert result.metrics.model_call_count == 2  # one on Temporal, one locally


async def test_wait_for_interrupts_raises_at_once_for_runs_that_ended(client: Client, blobs: BlobStore, task_queue: str) -> None:
    # Each wait has a generous timeout of its own; the run's end, not the timeout, ends it
    # (a TimeoutError would fail the test).
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.execute("two_tools", "Compute.", run_id="ended-done")
        with pytest.raises(RunEndedError, match=r"run 'ended-done' has ended \(completed\)"):
            await tc.wait_for_interrupts("ended-done", timeout=30.0)
        await tc.start("failing", "Hi.", run_id="ended-failed", config={"error": "auth"})
        with pytest.raises(RunEndedError, match=r"\(failed\)"):
            await tc.wait_for_interrupts("ended-failed", timeout=30.0)
        handle = await tc.start("asker", "Book Lisbon.", run_id="ended-terminated")
        await tc.wait_for_interrupts("ended-terminated")
        await handle.terminate("no longer needed")
        with pytest.raises(RunEndedError, match=r"\(terminated\)"):
            await tc.wait_for_interrupts("ended-terminated", timeout=30.0)
    with pytest.raises(RunNotFoundError):
        await tc.wait_for_interrupts("never-started", timeout=30.0)
