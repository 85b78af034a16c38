"""Swarms on Temporal: a ``SwarmWorkflow`` whose member turns are child agent workflows.

The members' models are stateful scripts that decide from their prompt, so a local swarm built
from the same registry gives the reference result; every model call and tool start is logged to
a side-effect file named in the config, so the tests count what ran (and what did not run again).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer, Worker

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.durable import MemoryStore
from tether.errors import InterruptError, PromptError, ScriptExhaustedError, SnapshotError
from tether.models.scripted import tool_call
from tether.multiagent import Swarm, SwarmResult
from tether.multiagent.nesting import child_run_id
from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker
from tether.temporal.payloads import is_placeholder
from tether.temporal.swarm_workflow import SWARM_WORKFLOW_NAME, SwarmWorkflow
from tether.temporal.worker import workflow_runner
from tether.temporal.workflow import WORKFLOW_NAME, AgentWorkflow
from tether.types import Message

from .agents import log

registry = AgentRegistry()


def _prompt(messages: list[Message]) -> str:
    return str(messages[0]["content"][0]["text"])


def _handoff(to: str, message: str, context: dict[str, Any] | None = None) -> Message:
    args: dict[str, Any] = {"agent_name": to, "message": message}
    if context is not None:
        args["context"] = context
    return tool_call("handoff_to_agent", args)


def _member(config: dict[str, Any], name: str, first: Any, *rest: Any, tools: list[Any] | None = None) -> Agent:
    def logged(messages: list[Message]) -> Any:
        log(config, f"{name} model 0")
        return first(messages) if callable(first) else first

    return Agent(model=ScriptedModel([logged, *rest], stateful=True), name=name, description=f"the {name}", tools=tools or [])


@registry.register_swarm("team")
def _team(config: dict[str, Any]) -> Swarm:
    researcher = _member(config, "researcher", _handoff("writer", "write it up", {"facts": ["tides", "moon"]}), "handed off")
    writer = _member(config, "writer", _handoff("editor", "polish it", {"draft": 1}), "handed off")
    editor = _member(config, "editor", lambda m: "final: " + _prompt(m))
    return Swarm([researcher, writer, editor], max_handoffs=5)


@registry.register_swarm("pingpong")
def _pingpong(config: dict[str, Any]) -> Swarm:
    ping = _member(config, "ping", _handoff("pong", "your turn"), "sent")
    pong = _member(config, "pong", _handoff("ping", "your turn"), "sent")
    return Swarm([ping, pong], max_handoffs=int(config.get("max_handoffs", 3)))


@registry.register_swarm("approval")
def _approval(config: dict[str, Any]) -> Swarm:
    @tool
    def publish(title: str, context: ToolContext) -> str:
        """Publish a title once a human approves it."""
        log(config, f"ask {title}")
        verdict = context.interrupt("approve", {"title": title})
        log(config, f"publish {title} {verdict}")
        return f"published {title} ({verdict})"

    def published(messages: list[Message]) -> str:
        log(config, "publisher model 1")
        result = messages[-1]["content"][0]["toolResult"]
        return "done: " + str(result["content"][0]["text"])

    drafter = _member(config, "drafter", _handoff("publisher", "publish it", {"title": "tides"}), "handed off")
    publisher = _member(config, "publisher", tool_call("publish", {"title": "tides"}), published, tools=[publish])
    return Swarm([drafter, publisher])


@asynccontextmanager
async def worker(client: Client, task_queue: str, blobs: BlobStore) -> AsyncIterator[Worker]:
    async with create_worker(client, task_queue, registry, blobs, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)) as running:
        yield running


def _children(history: WorkflowHistory) -> list[Any]:
    """The child workflow executions a swarm's history started, in order (workflow_id, run_id)."""
    return [
        event.child_workflow_execution_started_event_attributes.workflow_execution
        for event in history.events
        if event.HasField("child_workflow_execution_started_event_attributes")
    ]


def _summary(result: SwarmResult) -> tuple[Any, ...]:
    texts = {name: r.text for name, r in result.results.items()}
    statuses = {name: (r.status, r.executions) for name, r in result.results.items()}
    return (result.status, result.node_history, result.context, str(result), result.error, result.execution_count, texts, statuses)


async def test_a_swarm_with_two_handoffs_gives_the_local_result(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        result = await tc.execute_swarm("team", "explain tides", run_id="sw-1", config=config)
    assert result.status == "completed"
    assert result.node_history == ["researcher", "writer", "editor"]
    assert result.context == {"facts": ["tides", "moon"], "draft": 1}
    assert str(result).startswith("final: explain tides")
    assert "Handoff from writer: polish it" in str(result)
    assert result.run_id == "sw-1"
    on_temporal = side.read_text().splitlines()
    assert on_temporal == ["researcher model 0", "writer model 0", "editor model 0"]
    local = await registry.build_swarm("team", {}).invoke_async("explain tides")
    assert _summary(result) == _summary(local)
    # each member turn's result is the member agent's, as locally (its usage included)
    editor = result.results["editor"].result
    assert editor is not None and not isinstance(editor, str)
    local_editor = local.results["editor"].result
    assert local_editor is not None and not isinstance(local_editor, str)
    assert editor.metrics.model_call_count == local_editor.metrics.model_call_count == 1  # type: ignore[union-attr]


async def test_each_member_turn_is_a_child_workflow_with_the_local_turn_run_id(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        await tc.execute_swarm("team", "explain tides", run_id="sw-ids", config={})
    store = MemoryStore()
    swarm = registry.build_swarm("team", {})
    swarm.store = store
    await swarm.invoke_async("explain tides", run_id="sw-ids")
    local_turns = sorted(r.run_id for r in store.list_runs() if r.parent_run_id == "sw-ids")
    assert local_turns == ["sw-ids.editor:3", "sw-ids.researcher:1", "sw-ids.writer:2"]
    history = await client.get_workflow_handle("sw-ids").fetch_history()
    assert sorted(execution.workflow_id for execution in _children(history)) == local_turns
    for name, n in (("researcher", 1), ("writer", 2), ("editor", 3)):
        ident = child_run_id("sw-ids", f"{name}:{n}")
        description = await client.get_workflow_handle(ident).describe()
        assert description.parent_id == "sw-ids"
        assert description.workflow_type == WORKFLOW_NAME
    parent = await client.get_workflow_handle("sw-ids").describe()
    assert parent.workflow_type == SWARM_WORKFLOW_NAME


async def test_the_handoff_limit_fails_the_run_as_locally(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        result = await tc.execute_swarm("pingpong", "task", run_id="sw-loop", config={"log": str(side), "max_handoffs": 3})
    local = registry.build_swarm("pingpong", {"max_handoffs": 3})("task")
    assert result.status == "failed"
    assert result.error is not None and "max handoffs (3)" in result.error
    assert result.node_history == ["ping", "pong", "ping", "pong"]
    assert _summary(result) == _summary(local)
    assert len(side.read_text().splitlines()) == 4  # no turn after the limit


async def test_a_members_interrupt_is_answered_through_the_client_without_redoing_finished_turns(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        await tc.start_swarm("approval", "publish something", run_id="sw-ask", config=config)
        [interrupt] = await tc.wait_for_interrupts("sw-ask")
        assert (interrupt.name, interrupt.reason) == ("approve", {"title": "tides"})
        waiting = await tc.swarm_snapshot("sw-ask")
        assert waiting["state"]["status"] == "interrupted"
        assert waiting["state"]["running"]["member"] == "publisher"
        assert waiting["state"]["running"]["paused"]["data"]["interrupt_state"]  # the member agent as it stopped
        with pytest.raises(InterruptError, match="unknown interrupt id"):
            await tc.answer_interrupts("sw-ask", [{"interruptId": "nope", "response": "yes"}])
        status = await tc.answer_interrupts("sw-ask", [{"interruptId": interrupt.id, "response": "yes"}])
        assert status["status"] in ("running", "done")
        result = await tc.swarm_result("sw-ask")
    assert result.status == "completed"
    assert str(result) == "done: published tides (yes)"
    assert result.context == {"title": "tides"}
    # the drafter's turn and the publisher's first model call ran once; the tool asked again and got the answer
    assert side.read_text().splitlines() == [
        "drafter model 0",
        "publisher model 0",
        "ask tides",
        "ask tides",
        "publish tides yes",
        "publisher model 1",
    ]
    # the interrupted turn and its continuation are one child workflow id (two executions)
    children = _children(await client.get_workflow_handle("sw-ask").fetch_history())
    assert [c.workflow_id for c in children] == ["sw-ask.drafter:1", "sw-ask.publisher:2", "sw-ask.publisher:2"]
    assert len({c.run_id for c in children}) == 3


async def test_a_snapshot_moves_local_to_temporal_and_back(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    reference = await registry.build_swarm("team", {}).invoke_async("explain tides")
    swarm = registry.build_swarm("team", config)
    events = swarm.stream_async("explain tides")
    async for event in events:
        if event["type"] == "handoff" and event["to"] == "writer":
            snapshot = json.loads(json.dumps(swarm.take_snapshot()))
            break
    await events.aclose()
    assert side.read_text().splitlines() == ["researcher model 0"]
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        with pytest.raises(PromptError, match="not both"):
            await tc.start_swarm("team", "explain tides", run_id="sw-move", snapshot=snapshot, config=config)
        with pytest.raises(SnapshotError, match="not a swarm snapshot"):
            await tc.start_swarm("team", run_id="sw-move", snapshot={"type": "tether.graph"}, config=config)
        result = await tc.execute_swarm("team", run_id="sw-move", snapshot=snapshot, config=config)
        back = await tc.swarm_snapshot("sw-move")
    assert _summary(result) == _summary(reference)
    assert result.results["researcher"].executions == 1  # the researcher's turn was not run again on Temporal
    assert side.read_text().splitlines() == ["researcher model 0", "writer model 0", "editor model 0"]
    fresh = registry.build_swarm("team", config)
    fresh.load_snapshot(back)  # the Temporal state, in the local shape
    assert fresh.take_snapshot()["node_history"] == ["researcher", "writer", "editor"]
    assert back["state"]["context"] == reference.context
    assert back["state"]["status"] == "completed"


async def test_the_swarm_history_replays(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    config = {"log": str(tmp_path / "side.log")}
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        await tc.start_swarm("approval", "publish something", run_id="sw-replay", config=config)
        [interrupt] = await tc.wait_for_interrupts("sw-replay")
        await tc.answer_interrupts("sw-replay", [{"interruptId": interrupt.id, "response": "ok"}])
        await tc.swarm_result("sw-replay")
    histories: list[WorkflowHistory] = [await client.get_workflow_handle("sw-replay").fetch_history()]
    for child in _children(histories[0]):
        histories.append(await client.get_workflow_handle(child.workflow_id, run_id=child.run_id).fetch_history())
    assert len(histories) == 4  # the swarm, the drafter's turn, the publisher's turn twice (asked, answered)
    replayer = Replayer(workflows=[AgentWorkflow, SwarmWorkflow], workflow_runner=workflow_runner())
    for history in histories:
        await replayer.replay_workflow(history)


@registry.register_swarm("broken")
def _broken(config: dict[str, Any]) -> Swarm:
    first = _member(config, "first", _handoff("second", "go on"), "handed off")
    second = Agent(model=ScriptedModel([], stateful=True), name="second")  # no answer scripted: the model call fails
    return Swarm([first, second])


async def test_a_member_that_fails_fails_the_swarm_run_with_its_error_as_locally(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    with pytest.raises(ScriptExhaustedError):
        await registry.build_swarm("broken", {}).invoke_async("task")
    tc = TetherClient(client, blobs, task_queue)
    async with worker(client, task_queue, blobs):
        await tc.start_swarm("broken", "task", run_id="sw-broken", config={})
        with pytest.raises(ScriptExhaustedError):
            await tc.swarm_result("sw-broken")
        failed = await tc.swarm_snapshot("sw-broken")
    assert failed["state"]["status"] == "failed"
    assert failed["state"]["nodes"]["second"]["status"] == "failed"
    assert failed["node_history"] == ["first"]


async def test_large_prompts_and_results_travel_as_blob_references(client: Client, blobs: BlobStore, task_queue: str) -> None:
    task = "explain tides " + "x" * 10_000  # the member prompts are over the default inline limit
    tc = TetherClient(client, blobs, task_queue, inline_limit=256)
    async with create_worker(client, task_queue, registry, blobs, inline_limit=256):
        result = await tc.execute_swarm("team", task, run_id="sw-large", config={})
        raw = await client.get_workflow_handle("sw-large").query("snapshot", result_type=dict)
        children = _children(await client.get_workflow_handle("sw-large").fetch_history())
        first = await client.get_workflow_handle(children[0].workflow_id, run_id=children[0].run_id).fetch_history()
    local = await registry.build_swarm("team", {}).invoke_async(task)
    assert _summary(result) == _summary(local)
    assert all(is_placeholder(entry["result"]) for entry in raw["state"]["nodes"].values())  # the workflow keeps references
    started = first.events[0].workflow_execution_started_event_attributes
    params = json.loads(started.input.payloads[0].data)
    assert is_placeholder(params["prompt"]["messages"][0]["content"][0])  # the child's prompt is compact
