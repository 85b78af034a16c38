"""Deploy simulations on Temporal: a run waits on an interrupt, its worker is replaced by one
running changed code, and the answer is judged against that code (``tether.check_resume``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import Client

from tests.manifest.deploys import build
from tether.errors import IncompatibleResumeError
from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker

from .fixtures import history_events


@asynccontextmanager
async def deployed(client: Client, task_queue: str, blobs: BlobStore, change: str, log: list[str]) -> AsyncIterator[None]:
    """A worker whose agent ``deploy`` is version ``change`` of the deploy simulations (the
    renamed tool with its migration and a new prompt), for the duration of the block."""
    registry = AgentRegistry()

    @registry.register("deploy")
    def factory(config: dict[str, Any]) -> Any:
        agent = build(change, log)
        if change == "renamed":
            agent.migrations.rename_tool("send", "deliver")
            agent.system_prompt = "You deliver messages."  # and a new prompt: it applies too
        return agent

    worker = create_worker(client, task_queue, registry, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1))
    async with worker:
        yield


def answers(interrupts: list[Any]) -> list[dict[str, Any]]:
    return [{"interruptId": i.id, "response": "yes"} for i in interrupts]


async def test_an_answer_on_a_worker_with_a_renamed_tool_and_its_migration_finishes(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    log: list[str] = []
    tc = TetherClient(client, blobs, task_queue, options={"cycles_per_execution": 1})  # continue-as-new after the tool too
    async with deployed(client, task_queue, blobs, "same", log):
        await tc.start("deploy", "go", run_id="deploy-renamed")
        interrupts = await tc.wait_for_interrupts("deploy-renamed")
    async with deployed(client, task_queue, blobs, "renamed", log):
        await tc.answer_interrupts("deploy-renamed", answers(interrupts))
        result = await tc.result("deploy-renamed")
        snapshot = await tc.final_snapshot("deploy-renamed")
    assert str(result) == "done"
    assert log == ["deliver bob yes"]  # the renamed tool, called once
    call = snapshot.data["messages"][1]["content"][0]["toolUse"]
    assert (call["name"], call["input"]) == ("deliver", {"to": "bob"})  # the conversation says so too
    assert snapshot.data["system_prompt"] == [{"text": "You deliver messages."}]  # the deployed prompt applies
    events = await history_events(client, "deploy-renamed")
    checks = [e for e in events if e.HasField("marker_recorded_event_attributes") and b"tether.check_resume" in e.SerializeToString()]
    assert len(checks) == 2  # the answer, then the execution continued as new (on the new code)
    raw = await client.get_workflow_handle("deploy-renamed").result()  # the run as the workflow carried it
    assert set(raw["run"]["manifest"]["tools"]) == {"deliver"}  # the new code's manifest is the run's now


async def test_an_answer_on_a_worker_without_the_pending_calls_tool_is_refused_and_changes_nothing(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    log: list[str] = []
    tc = TetherClient(client, blobs, task_queue)
    async with deployed(client, task_queue, blobs, "same", log):
        await tc.start("deploy", "go", run_id="deploy-removed")
        interrupts = await tc.wait_for_interrupts("deploy-removed")
        before = (await tc.snapshot("deploy-removed")).data
    async with deployed(client, task_queue, blobs, "removed", log):
        with pytest.raises(IncompatibleResumeError, match=r"tool_removed:send \(pending call c1 calls tool 'send'") as refused:
            await tc.answer_interrupts("deploy-removed", answers(interrupts))
        assert "allow=['tool_removed:send']" in str(refused.value)
        assert (await tc.status("deploy-removed"))["status"] == "interrupted"  # still waiting, unchanged
        assert (await tc.snapshot("deploy-removed")).data == before
    async with deployed(client, task_queue, blobs, "same", log):  # the old code back: the same answer goes through
        await tc.answer_interrupts("deploy-removed", answers(interrupts))
        result = await tc.result("deploy-removed")
    assert str(result) == "done" and log == ["send bob yes"]
