"""End-to-end runs of the agent workflow on a real Temporal dev server."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from tether.errors import ScriptExhaustedError
from tether.temporal import BlobStore, TetherClient, TetherPlugin

from .agents import registry
from .fixtures import running_worker


def _application_error(failure: WorkflowFailureError) -> ApplicationError:
    """The ``ApplicationError`` a workflow failure wraps (the cause of the cause, as deep as it is)."""
    cause: BaseException | None = failure.cause
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.__cause__
    assert isinstance(cause, ApplicationError), failure
    return cause


async def test_two_tool_agent_matches_a_local_run(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    remote_log = tmp_path / "remote.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("two_tools", "Compute things.", run_id="calc-1", config={"log": str(remote_log)})
        snapshot = await tc.snapshot("calc-1")

    local = registry.build("two_tools", {})
    expected = await local.invoke_async("Compute things.")

    assert result.stop_reason == expected.stop_reason == "end_turn"
    assert result.text == expected.text
    assert snapshot.data["messages"] == local.take_snapshot(preset="all").data["messages"]
    assert snapshot.data == local.take_snapshot(preset="all").data
    assert result.metrics.to_dict()["tool_call_count"] == 3
    assert result.metrics.cycle_count == expected.metrics.cycle_count == 3
    assert result.metrics.usage == expected.metrics.usage
    assert result.state == {"owner": "tests"}
    # One model activity per model call.
    assert remote_log.read_text().splitlines() == ["model 0", "model 1", "model 2"]


async def test_an_error_retrying_cannot_fix_fails_the_run_at_once(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        await tc.execute("two_tools", "Compute things.", run_id="exhaust-1", config={"log": str(log)})
        carried_over = await tc.continue_run(
            "two_tools", "More?", previous_run_id="exhaust-1", run_id="exhaust-2", config={"log": str(log)}
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await carried_over.result()
    cause = _application_error(failure.value)
    assert cause.non_retryable and cause.type == "ScriptExhaustedError"
    assert "ran out of responses" in str(cause)
    assert log.read_text().splitlines().count("model 3") == 1  # not retried
    # The client maps the failure back to the Tether error a local agent would have raised.
    with pytest.raises(ScriptExhaustedError, match="ran out of responses") as mapped:
        await tc.result("exhaust-2")
    assert isinstance(mapped.value.__cause__, WorkflowFailureError)


async def test_a_second_turn_continues_the_conversation(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    config = {"extra": ["Anything else?"]}
    async with running_worker(client, task_queue, blobs):
        await tc.execute("two_tools", "Compute things.", run_id="turn-1", config=config)
        await tc.continue_run("two_tools", "Thanks.", previous_run_id="turn-1", run_id="turn-2", config=config)
        second = await tc.result("turn-2")
        snapshot = await tc.final_snapshot("turn-2")
    local = registry.build("two_tools", config)
    await local.invoke_async("Compute things.")
    expected = await local.invoke_async("Thanks.")
    assert second.text == expected.text == "Anything else?"
    assert snapshot.data == local.take_snapshot(preset="all").data
    assert second.metrics.model_call_count == 4
    assert second.metrics.invocation.model_call_count == 1


async def test_parallel_tool_calls_are_parallel_activities(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("two_tools", "Compute things.", run_id="parallel-1")
        await handle.result()
    history = await handle.fetch_history()
    kinds = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            kinds.append(("scheduled", event.activity_task_scheduled_event_attributes.activity_type.name))
        elif event.HasField("activity_task_completed_event_attributes"):
            kinds.append(("completed", ""))
    tools = [i for i, kind in enumerate(kinds) if kind == ("scheduled", "tether.run_tool")]
    assert len(tools) == 3
    assert tools[1] == tools[0] + 1  # both calls of the first cycle were scheduled before either completed
    assert [kind[1] for kind in kinds if kind[0] == "scheduled"].count("tether.call_model") == 3


async def test_hooks_fire_in_the_same_order_as_locally(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    remote_log, local_log = tmp_path / "remote.log", tmp_path / "local.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("hooked", "Add.", run_id="hooked-1", config={"log": str(remote_log)})
    local = registry.build("hooked", {"log": str(local_log)})
    expected = await local.invoke_async("Add.")
    assert result.text == expected.text == "done"
    assert remote_log.read_text().splitlines() == local_log.read_text().splitlines()
    assert "after-tool [{'json': 42}]" in remote_log.read_text()  # the BeforeToolCall rewrite took effect


@pytest.mark.parametrize(("error", "kind"), [("overflow", "ContextWindowExhaustedError"), ("auth", "ModelAuthError")])
async def test_model_errors_no_retry_can_fix_are_not_retried(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, error: str, kind: str
) -> None:
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        handle = await tc.start("failing", "Hi.", run_id=f"fail-{error}", config={"log": str(log), "error": error})
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    cause = _application_error(failure.value)
    assert cause.non_retryable and cause.type == kind
    # One model call: the manager cannot reduce the overflow, and neither error is retried.
    assert log.read_text().splitlines() == ["model 0"]


async def test_the_worker_plugin_serves_runs(client: Client, blobs: BlobStore, task_queue: str) -> None:
    worker = Worker(client, task_queue=task_queue, plugins=[TetherPlugin(registry, blobs)])
    async with worker:
        result = await TetherClient(client, blobs, task_queue).execute("two_tools", "Compute things.", run_id="plugin-1")
    assert result.text == "2 + 3 = 5, 4 * 5 = 20 and 5 * 20 = 100."


async def test_tools_write_the_agent_state_as_locally(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("counter", "Count.", run_id="counter-1")
    local = registry.build("counter", {})
    expected = await local.invoke_async("Count.")
    assert result.state == expected.state == {"keep": "me", "a": 2, "b": 1}
