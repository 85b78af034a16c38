"""An agent used as a tool, on Temporal: each call is a child workflow.

The child's model and tool calls are activities of its own history (its workflow id is the
local nested run id); its interrupt is the parent's interrupt, and the answer continues the
child from the state the parent's run carries (its agent state). The same snapshot moves
between a local run and Temporal, both ways.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from tether import Agent, ScriptedModel, tool
from tether.agent_tool import STATE_KEY
from tether.interrupts import Interrupt
from tether.models.scripted import tool_call, tool_calls
from tether.multiagent import child_run_id
from tether.temporal import AgentRegistry, AgentWorkflow, BlobStore, TetherClient
from tether.types import Message

from .agents import log, publish_tool
from .fixtures import running_worker, scheduled_activities
from .replays import replay

registry = AgentRegistry()


def _last_tool_text(messages: list[Message]) -> str:
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block:
                return str(block["toolResult"]["content"][0].get("text"))
    return ""


def _researcher(config: dict[str, Any]) -> Agent:
    def child_model(messages: list[Message]) -> Any:
        log(config, "child model 0")
        topic = next(b["text"] for b in messages[0]["content"] if "text" in b)
        return tool_call("publish", {"title": topic}) if config.get("ask") else f"found: {topic}"

    def child_answer(messages: list[Message]) -> str:
        log(config, "child model 1")
        return f"child: {_last_tool_text(messages)}"

    return Agent(model=ScriptedModel([child_model, child_answer], stateful=True), tools=[publish_tool(config)], name="researcher")


@registry.register("lead")
def _lead(config: dict[str, Any]) -> Agent:
    script: list[Any] = [tool_call("researcher", {"input": "tides"}), lambda m: f"parent: {_last_tool_text(m)}"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[_researcher(config)], name="lead")


@registry.register("chief")
def _chief(config: dict[str, Any]) -> Agent:
    """Two levels: chief -> lead -> researcher (whose tool asks a human)."""
    script: list[Any] = [tool_call("lead", {"input": "tides"}), lambda m: f"chief: {_last_tool_text(m)}"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[_lead(config)], name="chief")


@registry.register("memo")
def _memo(config: dict[str, Any]) -> Agent:
    """An agent tool that keeps its conversation across calls (and across invocations)."""

    def seen(messages: list[Message]) -> str:
        return f"scribe saw {len(messages)} messages"

    scribe = Agent(model=ScriptedModel([seen], stateful=True), name="scribe")
    script: list[Any] = [
        tool_call("scribe", {"input": "one"}),
        tool_call("scribe", {"input": "two"}),
        lambda m: f"memo: {_last_tool_text(m)}",
        tool_call("scribe", {"input": "three"}),
        lambda m: f"memo again: {_last_tool_text(m)}",
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[scribe.as_tool(keep_conversation=True)], name="memo")


@registry.register("bulk")
def _bulk(config: dict[str, Any]) -> Agent:
    """Inputs and answers large enough to travel as blob references; then an invalid input."""

    def shout(messages: list[Message]) -> str:
        text = next(b["text"] for b in messages[0]["content"] if "text" in b)
        return text.upper()

    echo = Agent(model=ScriptedModel([shout], stateful=True), name="echo")
    script: list[Any] = [
        tool_call("echo", {"input": "tide " * 3000}),
        tool_call("echo", {"input": 5}),
        lambda m: f"{len(m)} messages",
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[echo], name="bulk")


@registry.register("fragile")
def _fragile(config: dict[str, Any]) -> Agent:
    """Its agent tool's child fails (a model with no script left: an error no retry fixes)."""
    broken = Agent(model=ScriptedModel([], stateful=True), name="broken").as_tool(name="attempt")
    script: list[Any] = [tool_call("attempt", {"input": "try"}), lambda m: f"noted: {_last_tool_text(m)}"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[broken], name="fragile")


@registry.register("pair")
def _pair(config: dict[str, Any]) -> Agent:
    """Two agent tools in one cycle: ``quick`` answers at once, ``researcher`` asks a human after
    waiting (in a tool) until quick's model has answered, so quick finishes first."""
    marker = Path(config["marker"])

    @tool
    async def wait_for_quick() -> str:
        """Wait until the quick agent has answered."""
        while not marker.exists():
            await asyncio.sleep(0.02)
        return "go"

    def first(messages: list[Message]) -> Any:
        log(config, "researcher model 0")
        return tool_call("wait_for_quick", {})

    script: list[Any] = [first, tool_call("publish", {"title": "T"}), lambda m: f"child: {_last_tool_text(m)}"]
    tools = [wait_for_quick, publish_tool(config, log_verdict=False)]
    researcher = Agent(model=ScriptedModel(script, stateful=True), tools=tools, name="researcher")

    def quick_answer(messages: list[Message]) -> str:
        marker.write_text("done")
        return "quick done"

    quick = Agent(model=ScriptedModel([quick_answer], stateful=True), name="quick")
    calls = tool_calls([("researcher", {"input": "a"}), ("quick", {"input": "b"})])
    return Agent(model=ScriptedModel([calls, "both"], stateful=True), tools=[researcher, quick], name="pair")


async def _history(client: Client, workflow_id: str) -> WorkflowHistory:
    return await client.get_workflow_handle(workflow_id).fetch_history()


def _local_activities(history: WorkflowHistory) -> list[str]:
    """The activity types of the local activities a history recorded (in its markers)."""
    names = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            for payloads in event.marker_recorded_event_attributes.details.values():
                for payload in payloads.payloads:
                    data = json.loads(payload.data or b"null")
                    if isinstance(data, dict) and "activity_type" in data:
                        names.append(data["activity_type"])
    return names


async def _executed(
    client: Client, blobs: BlobStore, task_queue: str, agent: str, prompt: str, run_id: str, config: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    """``agent`` run to its end on Temporal as ``run_id``: its result and its final snapshot."""
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        result = await tc.execute(agent, prompt, run_id=run_id, config=config)
        return result, await tc.final_snapshot(run_id)


@asynccontextmanager
async def _lead_asking(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path, run_id: str
) -> AsyncIterator[tuple[TetherClient, Interrupt, Path]]:
    """``lead`` started as ``run_id`` (its child's tool asks a human, logging to the returned
    side-effect file), a worker running, once the interrupt is up."""
    side = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        await tc.start("lead", "research tides", run_id=run_id, config={"log": str(side), "ask": True})
        [interrupt] = await tc.wait_for_interrupts(run_id)
        yield tc, interrupt, side


async def test_an_agent_tool_call_is_a_child_workflow(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    config = {"log": str(tmp_path / "side.log")}
    result, snapshot = await _executed(client, blobs, task_queue, "lead", "research tides", "ma-1", config)
    child = child_run_id("ma-1", "tooluse_1_0")  # the local nested run's id
    description = await client.get_workflow_handle(child).describe()
    assert description.parent_id == "ma-1"
    parent_history, child_history = await _history(client, "ma-1"), await _history(client, child)
    assert scheduled_activities(child_history).count("tether.call_model") == 1  # the child's model call is the child's activity
    assert "tether.run_tool" not in scheduled_activities(parent_history)  # not run inside a parent's tool activity
    assert scheduled_activities(parent_history).count("tether.call_model") == 2
    await replay([parent_history, child_history], AgentWorkflow)
    assert result.stop_reason == "end_turn"
    assert result.text == "parent: found: tides"
    assert result.metrics.model_call_count == 3  # the child's call rolled up into the workflow's metrics
    assert result.metrics.usage["total_tokens"] == 45
    assert STATE_KEY not in snapshot.data["state"]
    local = registry.build("lead", config)
    assert str(await local.invoke_async("research tides")) == result.text


async def test_a_childs_interrupt_is_the_workflows_and_the_answer_resumes_the_child(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    async with _lead_asking(client, blobs, task_queue, tmp_path, "ma-2") as (tc, interrupt, side):
        assert (interrupt.name, interrupt.reason) == ("researcher/approve", {"title": "tides"})
        paused = await tc.snapshot("ma-2")
        [entry] = paused.data["state"][STATE_KEY]["calls"].values()  # the interrupted child, in the workflow's state
        assert entry["pending"][0]["name"] == "approve"
        await tc.answer_interrupts("ma-2", [{"interruptId": interrupt.id, "response": "yes"}])
        result = await tc.result("ma-2")
    assert result.text == "parent: child: published tides (yes)"
    assert result.metrics.model_call_count == 4
    # the child's first model call was not redone when it resumed
    assert side.read_text().splitlines() == ["child model 0", "ask tides", "ask tides", "publish tides yes", "child model 1"]


async def test_a_local_run_interrupted_by_its_child_is_finished_on_temporal(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side), "ask": True}
    local = registry.build("lead", config)
    paused = await local.invoke_async("research tides")
    [interrupt] = paused.interrupts
    answer = [{"interruptResponse": {"interruptId": interrupt.id, "response": "ok"}}]
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        await tc.promote("lead", local.take_snapshot(preset="all"), run_id="ma-3", prompt=answer, config=config)
        result = await tc.result("ma-3")
    assert result.text == "parent: child: published tides (ok)"
    # the child's tool asks again on Temporal and gets the answer; its first model call is not redone
    assert side.read_text().splitlines() == ["child model 0", "ask tides", "ask tides", "publish tides ok", "child model 1"]
    assert result.metrics.model_call_count == 4  # the parent's 2 and the child's 2, across the move


async def test_interrupts_cross_two_levels_and_ids_match_a_local_run(client: Client, blobs: BlobStore, task_queue: str) -> None:
    local = registry.build("chief", {"ask": True})
    paused = await local.invoke_async("research tides")
    [expected] = paused.interrupts
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        await tc.start("chief", "research tides", run_id="ma-4", config={"ask": True})
        [interrupt] = await tc.wait_for_interrupts("ma-4")
        assert (interrupt.id, interrupt.name, interrupt.reason) == (expected.id, "lead/researcher/approve", {"title": "tides"})
        await tc.answer_interrupts("ma-4", [{"interruptId": interrupt.id, "response": "yes"}])
        result = await tc.result("ma-4")
        grandchild = child_run_id(child_run_id("ma-4", "tooluse_1_0"), "tooluse_1_0")
        assert (await client.get_workflow_handle(grandchild).describe()).parent_id == child_run_id("ma-4", "tooluse_1_0")
    answered = await local.invoke_async([{"interruptResponse": {"interruptId": expected.id, "response": "yes"}}])
    assert result.text == str(answered) == "chief: parent: child: published tides (yes)"
    assert result.metrics.model_call_count == answered.metrics.model_call_count == 6


async def test_a_temporal_run_interrupted_by_its_child_is_finished_locally(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    async with _lead_asking(client, blobs, task_queue, tmp_path, "ma-5") as (tc, interrupt, side):
        paused = await tc.snapshot("ma-5")
        await client.get_workflow_handle("ma-5").terminate(reason="moved to a local agent")  # it would wait forever
    [entry] = paused.data["state"][STATE_KEY]["calls"].values()
    assert "snapshot" in entry and "carried" not in entry  # the local shape: a snapshot of the child
    local = registry.build("lead", {"log": str(side), "ask": True})
    local.load_snapshot(paused)
    result = await local.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": "sure"}}])
    assert result.text == "parent: child: published tides (sure)"
    assert side.read_text().splitlines() == ["child model 0", "ask tides", "ask tides", "publish tides sure", "child model 1"]


async def test_a_kept_conversation_lives_in_the_parents_state_and_moves_to_a_local_run(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    result, snapshot = await _executed(client, blobs, task_queue, "memo", "take notes", "ma-6")
    local = registry.build("memo", {})
    expected = await local.invoke_async("take notes")
    assert result.text == str(expected) == "memo: scribe saw 3 messages"
    kept = snapshot.data["state"][STATE_KEY]["conversations"]["scribe"]
    assert [m["role"] for m in kept["data"]["messages"]] == ["user", "assistant", "user", "assistant"]
    moved = registry.build("memo", {})
    moved.load_snapshot(snapshot)
    again = await moved.invoke_async("more")
    assert str(again) == str(await local.invoke_async("more")) == "memo again: scribe saw 5 messages"


async def test_large_inputs_and_answers_travel_as_blobs_and_bad_input_is_an_error_result(
    client: Client, blobs: BlobStore, task_queue: str
) -> None:
    result, snapshot = await _executed(client, blobs, task_queue, "bulk", "echo", "ma-7")
    local_activities = _local_activities(await _history(client, "ma-7"))
    assert local_activities.count("tether.child_prompt") == 1  # the offloaded input, read by a local activity
    assert local_activities.count("tether.child_answer") == 1  # the offloaded answer
    local = registry.build("bulk", {})
    expected = await local.invoke_async("echo")
    assert result.text == str(expected) == "5 messages"
    assert snapshot.data["messages"] == local.messages
    results = [b["toolResult"] for m in local.messages for b in m["content"] if "toolResult" in b]
    assert results[0]["content"][0]["text"] == "TIDE " * 2999 + "TIDE "
    assert results[1]["status"] == "error" and "input: a string is required" in results[1]["content"][0]["text"]


async def test_a_failed_child_is_an_error_result_the_parent_model_reads(client: Client, blobs: BlobStore, task_queue: str) -> None:
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        result = await tc.execute("fragile", "go", run_id="ma-8")
    expected = await registry.build("fragile", {}).invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert result.text == str(expected)
    assert result.text.startswith("noted: Error: agent 'broken' failed: ScriptExhaustedError:")


async def test_a_parallel_call_finishing_first_keeps_the_interrupted_calls_child(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side), "marker": str(tmp_path / "quick-answered")}
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs, registry):
        await tc.start("pair", "go", run_id="ma-9", config=config)
        [interrupt] = await tc.wait_for_interrupts("ma-9")
        paused = await tc.snapshot("ma-9")
        assert list(paused.data["state"][STATE_KEY]["calls"]) == ["tooluse_1_0"]
        await tc.answer_interrupts("ma-9", [{"interruptId": interrupt.id, "response": "yes"}])
        result = await tc.result("ma-9")
    assert result.text == "both"
    assert side.read_text().splitlines() == ["researcher model 0", "ask T", "ask T"]  # continued, not restarted
