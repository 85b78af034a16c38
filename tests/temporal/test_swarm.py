"""Swarms on Temporal: a ``SwarmWorkflow`` whose member turns are child agent workflows.

The members' models are stateful scripts that decide from their prompt, so a local swarm built
from the same registry gives the reference result; every model call and tool start is logged to
a side-effect file named in the config, so the tests count what ran (and what did not run again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from tether.durable import MemoryStore
from tether.durable.ids import child_run_id
from tether.errors import ConfigurationError, InterruptError
from tether.multiagent import SwarmResult
from tether.temporal import BlobStore, TetherClient, create_worker
from tether.temporal.payloads import is_placeholder
from tether.temporal.swarm_workflow import SWARM_WORKFLOW_NAME, SwarmWorkflow
from tether.temporal.workflow import WORKFLOW_NAME, AgentWorkflow

from .agents import relay_log
from .fixtures import child_executions
from .orchestrations import Orchestration
from .record_histories import histories_of
from .replays import HISTORIES, assert_reordering_breaks_replay, load_histories, replay, run_histories
from .server import DevServer
from .swarms import registry


@pytest.fixture
def runs(client: Client, blobs: BlobStore, task_queue: str) -> Orchestration:
    """Swarm runs of this file's registry on the test's task queue."""
    return Orchestration("swarm", registry, client, blobs, task_queue)


def _summary(result: SwarmResult) -> tuple[Any, ...]:
    texts = {name: r.text for name, r in result.results.items()}
    statuses = {name: (r.status, r.executions) for name, r in result.results.items()}
    return (result.status, result.node_history, result.context, str(result), result.error, result.execution_count, texts, statuses)


def _approval_log(answer: str) -> list[str]:
    """The side-effect log of an ``approval`` swarm answered ``answer``: the drafter's turn and the
    publisher's first model call once; the tool asked, asked again and got the answer."""
    return ["drafter model 0", "publisher model 0", "ask tides", "ask tides", f"publish tides {answer}", "publisher model 1"]


async def test_a_swarm_with_two_handoffs_gives_the_local_result(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    async with runs.worker():
        result = await runs.execute("team", "explain tides", run_id="sw-1", config=config)
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


async def test_each_member_turn_is_a_child_workflow_with_the_local_turn_run_id(runs: Orchestration, tmp_path: Path) -> None:
    async with runs.worker():
        await runs.execute("team", "explain tides", run_id="sw-ids", config={})
    store = MemoryStore()
    swarm = registry.build_swarm("team", {})
    swarm.store = store
    await swarm.invoke_async("explain tides", run_id="sw-ids")
    local_turns = sorted(r.run_id for r in store.list_runs() if r.parent_run_id == "sw-ids")
    assert local_turns == ["sw-ids.editor:3", "sw-ids.researcher:1", "sw-ids.writer:2"]
    history = await runs.client.get_workflow_handle("sw-ids").fetch_history()
    assert sorted(execution.workflow_id for execution in child_executions(history)) == local_turns
    for name, n in (("researcher", 1), ("writer", 2), ("editor", 3)):
        ident = child_run_id("sw-ids", f"{name}:{n}")
        description = await runs.client.get_workflow_handle(ident).describe()
        assert description.parent_id == "sw-ids"
        assert description.workflow_type == WORKFLOW_NAME
    parent = await runs.client.get_workflow_handle("sw-ids").describe()
    assert parent.workflow_type == SWARM_WORKFLOW_NAME


async def test_the_handoff_limit_fails_the_run_as_locally(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    async with runs.worker():
        result = await runs.execute("pingpong", "task", run_id="sw-loop", config={"log": str(side), "max_handoffs": 3})
    local = registry.build_swarm("pingpong", {"max_handoffs": 3})("task")
    assert result.status == "failed"
    assert result.error is not None and "max handoffs (3)" in result.error
    assert result.node_history == ["ping", "pong", "ping", "pong"]
    assert _summary(result) == _summary(local)
    assert len(side.read_text().splitlines()) == 4  # no turn after the limit


async def test_a_members_interrupt_is_answered_through_the_client_without_redoing_finished_turns(
    runs: Orchestration, tmp_path: Path
) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    async with runs.worker():
        await runs.start("approval", "publish something", run_id="sw-ask", config=config)
        [interrupt] = await runs.tc.wait_for_interrupts("sw-ask")
        assert (interrupt.name, interrupt.reason) == ("approve", {"title": "tides"})
        waiting = await runs.snapshot("sw-ask")
        assert waiting["state"]["status"] == "interrupted"
        assert waiting["state"]["running"]["member"] == "publisher"
        assert waiting["state"]["running"]["paused"]["data"]["interrupt_state"]  # the member agent as it stopped
        with pytest.raises(InterruptError, match="unknown interrupt id"):
            await runs.tc.answer_interrupts("sw-ask", [{"interruptId": "nope", "response": "yes"}])
        status = await runs.tc.answer_interrupts("sw-ask", [{"interruptId": interrupt.id, "response": "yes"}])
        assert status["status"] in ("running", "done")
        result = await runs.result("sw-ask")
    assert result.status == "completed"
    assert str(result) == "done: published tides (yes)"
    assert result.context == {"title": "tides"}
    # the drafter's turn and the publisher's first model call ran once; the tool asked again and got the answer
    assert side.read_text().splitlines() == _approval_log("yes")
    # the interrupted turn and its continuation are one child workflow id (two executions)
    children = child_executions(await runs.client.get_workflow_handle("sw-ask").fetch_history())
    assert [c.workflow_id for c in children] == ["sw-ask.drafter:1", "sw-ask.publisher:2", "sw-ask.publisher:2"]
    assert len({c.run_id for c in children}) == 3


async def test_a_snapshot_moves_local_to_temporal_and_back(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    reference = await registry.build_swarm("team", {}).invoke_async("explain tides")

    def handed_to_writer(event: Any) -> bool:
        return bool(event["type"] == "handoff" and event["to"] == "writer")

    at_move, result, back, again = await runs.moved_to_temporal_and_back("team", "explain tides", "sw-move", config, handed_to_writer)
    assert at_move == ["researcher model 0"]
    assert _summary(again) == _summary(result)
    assert _summary(result) == _summary(reference)
    assert result.results["researcher"].executions == 1  # the researcher's turn was not run again on Temporal
    assert side.read_text().splitlines() == ["researcher model 0", "writer model 0", "editor model 0"]
    fresh = registry.build_swarm("team", config)
    fresh.load_snapshot(back)  # the Temporal state, in the local shape
    assert fresh.take_snapshot()["node_history"] == ["researcher", "writer", "editor"]
    assert back["state"]["context"] == reference.context
    assert back["state"]["status"] == "completed"


async def test_the_swarm_history_replays(runs: Orchestration, tmp_path: Path) -> None:
    config = {"log": str(tmp_path / "side.log")}
    async with runs.worker():
        await runs.start("approval", "publish something", run_id="sw-replay", config=config)
        [interrupt] = await runs.tc.wait_for_interrupts("sw-replay")
        await runs.tc.answer_interrupts("sw-replay", [{"interruptId": interrupt.id, "response": "ok"}])
        await runs.result("sw-replay")
    histories = await run_histories(runs.client, "sw-replay")
    assert len(histories) == 4  # the swarm, the drafter's turn, the publisher's turn twice (asked, answered)
    await replay(histories, AgentWorkflow, SwarmWorkflow)


async def test_a_member_that_fails_fails_the_swarm_run_with_its_error_as_locally(runs: Orchestration) -> None:
    failed = await runs.failed("sw-broken", {})
    assert failed["state"]["status"] == "failed"
    assert failed["state"]["nodes"]["second"]["status"] == "failed"
    assert failed["node_history"] == ["first"]


async def test_large_prompts_and_results_travel_as_blob_references(client: Client, blobs: BlobStore, task_queue: str) -> None:
    task = "explain tides " + "x" * 10_000  # the member prompts are over the default inline limit
    tc = TetherClient(client, blobs, task_queue, inline_limit=256)
    async with create_worker(client, task_queue, registry, blobs, inline_limit=256):
        result = await tc.execute_swarm("team", task, run_id="sw-large", config={})
        raw = await client.get_workflow_handle("sw-large").query("snapshot", result_type=dict)
        children = child_executions(await client.get_workflow_handle("sw-large").fetch_history())
        first = await client.get_workflow_handle(children[0].workflow_id, run_id=children[0].run_id).fetch_history()
    local = await registry.build_swarm("team", {}).invoke_async(task)
    assert _summary(result) == _summary(local)
    assert all(is_placeholder(entry["result"]) for entry in raw["state"]["nodes"].values())  # the workflow keeps references
    started = first.events[0].workflow_execution_started_event_attributes
    params = json.loads(started.input.payloads[0].data)
    assert is_placeholder(params["prompt"]["messages"][0]["content"][0])  # the child's prompt is compact


async def test_a_swarm_waiting_on_temporal_is_answered_locally(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    result = await runs.answered_locally("sw-home", {"log": str(side)}, "fine")
    assert result.status == "completed"
    assert str(result) == "done: published tides (fine)"
    assert side.read_text().splitlines() == _approval_log("fine")


async def test_a_local_swarm_waiting_on_an_interrupt_is_answered_on_temporal(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    result = await runs.answered_on_temporal("sw-away", {"log": str(side)}, "sure")
    assert str(result) == "done: published tides (sure)"
    assert result.node_history == ["drafter", "publisher"]  # the answered turn once, where it ended
    assert side.read_text().splitlines() == _approval_log("sure")


SWARM_HISTORIES = HISTORIES / "swarm"


async def test_the_stored_swarm_histories_replay_against_the_current_workflow() -> None:
    paths = sorted(SWARM_HISTORIES.glob("*.json"))
    assert {p.name.split(".")[0] for p in paths} >= {"r1-swarm_handoffs", "r1-swarm_limit", "r1-swarm_interrupt"}
    assert len([p for p in paths if p.name.startswith("r1-swarm_handoffs.")]) == 2  # a continue-as-new chain
    await replay(load_histories(folder=SWARM_HISTORIES), AgentWorkflow, SwarmWorkflow)


async def test_a_long_swarm_run_continues_as_new_between_turns(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    async with runs.worker():
        result = await runs.execute("team", "explain tides", run_id="sw-can", config={"log": str(side)}, options={"turns_per_execution": 1})
        executions = await histories_of(runs.client, "sw-can")
    assert len(executions) == 3  # one member turn per execution
    local = await registry.build_swarm("team", {}).invoke_async("explain tides")
    assert _summary(result) == _summary(local)
    assert side.read_text().splitlines() == ["researcher model 0", "writer model 0", "editor model 0"]  # no turn ran twice


async def test_the_swarm_replay_catches_a_change_that_would_break_runs_in_flight() -> None:
    [history] = load_histories("r1-swarm_limit.0.json", SWARM_HISTORIES)
    await assert_reordering_breaks_replay(SwarmWorkflow, SWARM_WORKFLOW_NAME, history)


async def test_signalled_answers_work_and_invalid_ones_are_ignored(runs: Orchestration) -> None:
    result = await runs.signalled("sw-signal")
    assert str(result) == "done: published tides (later)"


async def test_a_name_that_is_not_a_registered_swarm_fails_the_run_with_a_configuration_error(runs: Orchestration) -> None:
    async with runs.worker():
        with pytest.raises(ConfigurationError, match="no factory named 'nobody'"):
            await runs.execute("nobody", "task", run_id="sw-nobody")
        with pytest.raises(ConfigurationError, match="not a swarm"):
            await runs.execute("team/writer", "task", run_id="sw-agent")


async def test_kill_9_of_the_worker_inside_a_member_turn_redoes_no_finished_work(
    runs: Orchestration, tmp_path: Path, dev_server: DevServer
) -> None:
    # The builder's turn is a child workflow: its model calls and its fast tool are activities
    # of its own history, the scout's turn is done; the worker dying in the slow tool re-runs
    # that tool only (with the same idempotency key), on another worker.
    result, lines = await runs.killed_in_the_slow_tool("sw-kill", dev_server, tmp_path, "swarms")
    assert (result.status, str(result), result.node_history) == ("completed", "built", ["scout", "builder"])
    key = f"{child_run_id('sw-kill', 'builder:2')}/tooluse_3_0"  # the member turn's run id and its tool call
    assert lines == relay_log(key)


async def test_the_plugin_serves_swarm_runs(runs: Orchestration) -> None:
    async with runs.plugin_worker():
        result = await runs.execute("team", "explain tides", run_id="sw-plugin")
    assert result.node_history == ["researcher", "writer", "editor"] and str(result).startswith("final: explain tides")
