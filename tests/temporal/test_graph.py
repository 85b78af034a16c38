"""Graphs on Temporal: a ``GraphWorkflow`` whose agent nodes are child agent workflows.

The node agents' models are scripts that answer from their prompt, so a local graph built from
the same registry gives the reference result; every model call, tool start and callable run is
logged to a side-effect file named in the config, so the tests count what ran (and what did not
run again).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.service import RPCError

from tether.durable import MemoryStore
from tether.durable.ids import child_run_id
from tether.errors import ConfigurationError, InterruptError, PromptError
from tether.multiagent import GraphResult
from tether.temporal import BlobStore, TetherClient
from tether.temporal.graph_workflow import GRAPH_WORKFLOW_NAME, GraphWorkflow
from tether.temporal.payloads import is_placeholder
from tether.temporal.workflow import WORKFLOW_NAME, AgentWorkflow

from .agents import relay_log
from .fixtures import child_executions, running_worker, scheduled_activities
from .graphs import registry
from .orchestrations import Orchestration
from .record_histories import histories_of
from .replays import HISTORIES, assert_reordering_breaks_replay, load_histories, replay, run_histories
from .server import DevServer


async def _exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError:
        return False
    return True


@pytest.fixture
def runs(client: Client, blobs: BlobStore, task_queue: str) -> Orchestration:
    """Graph runs of this file's registry on the test's task queue."""
    return Orchestration("graph", registry, client, blobs, task_queue)


def _summary(result: GraphResult) -> tuple[Any, ...]:
    texts = {n: r.text for n, r in result.results.items()}
    statuses = {n: (r.status, r.executions) for n, r in result.results.items()}
    return (result.status, str(result), result.error, result.execution_count, texts, statuses)


async def test_a_graph_with_a_conditional_edge_and_a_parallel_branch_gives_the_local_result(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    async with runs.worker():
        result = await runs.execute("review", "explain tides", run_id="g-1", config={"log": str(side)})
    local = await registry.build_graph("review", {}).invoke_async("explain tides")
    assert result.status == "completed" and result.run_id == "g-1"
    assert _summary(result) == _summary(local)
    assert "urgent" not in result.results  # the conditional edge was not taken, as locally
    # the parallel branch: facts and tally in either order, between plan and writer
    assert result.execution_order[0] == "plan" and result.execution_order[-1] == "writer"
    assert set(result.execution_order[1:3]) == {"facts", "tally"} == set(local.execution_order[1:3])
    assert str(result).startswith("report: Original task: explain tides")
    assert "From facts:" in str(result) and "From tally:" in str(result)
    assert sorted(side.read_text().splitlines()) == ["facts model 0", "plan model 0", "tally", "writer model 0"]
    facts = result.results["facts"].result
    local_facts = local.results["facts"].result
    assert facts is not None and local_facts is not None and not isinstance(facts, str) and not isinstance(local_facts, str)
    assert facts.metrics.model_call_count == local_facts.metrics.model_call_count == 1  # type: ignore[union-attr]


async def test_the_conditional_edge_is_taken_on_temporal_when_its_condition_holds(runs: Orchestration) -> None:
    async with runs.worker():
        result = await runs.execute("review", "urgent: explain tides", run_id="g-urgent")
    local = await registry.build_graph("review", {}).invoke_async("urgent: explain tides")
    assert str(result.results["urgent"]) == "escalated"
    assert _summary(result) == _summary(local)


async def test_each_agent_node_is_a_child_workflow_with_the_local_node_run_id(runs: Orchestration) -> None:
    async with runs.worker():
        await runs.execute("review", "explain tides", run_id="g-ids")
        history = await runs.client.get_workflow_handle("g-ids").fetch_history()
        children = child_executions(history)
        child_histories = [await runs.client.get_workflow_handle(c.workflow_id, run_id=c.run_id).fetch_history() for c in children]
    store = MemoryStore()
    graph = registry.build_graph("review", {})
    graph.store = store
    await graph.invoke_async("explain tides", run_id="g-ids")
    local_agents = sorted(r.run_id for r in store.list_runs() if r.parent_run_id == "g-ids")
    assert local_agents == ["g-ids.facts:1", "g-ids.plan:1", "g-ids.writer:1"]  # the callable node has no run
    assert sorted(c.workflow_id for c in children) == local_agents
    for child in child_histories:
        assert "tether.call_model" in scheduled_activities(child)  # the node's model call is the child's activity
    for ident in local_agents:
        description = await runs.client.get_workflow_handle(ident).describe()
        assert (description.parent_id, description.workflow_type) == ("g-ids", WORKFLOW_NAME)
    assert (await runs.client.get_workflow_handle("g-ids").describe()).workflow_type == GRAPH_WORKFLOW_NAME
    assert "tether.graph_callable" in scheduled_activities(history)  # the callable node ran in an activity


async def test_a_cycle_stops_at_the_execution_limit_as_locally(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    async with runs.worker():
        bounded = await runs.execute("loop", "write", run_id="g-loop", config={"max": 10})
        limited = await runs.execute("loop", "write", run_id="g-limit", config={"max": 3, "log": str(side)})
    assert _summary(bounded) == _summary(registry.build_graph("loop", {"max": 10})("write"))
    assert bounded.execution_order == ["draft", "check", "draft", "check"]
    assert _summary(limited) == _summary(registry.build_graph("loop", {"max": 3})("write"))
    assert limited.status == "failed" and limited.error is not None and "max node executions (3)" in limited.error
    assert len(side.read_text().splitlines()) == 3  # nothing ran after the limit


async def test_a_nodes_interrupt_is_answered_through_the_client_without_redoing_finished_nodes(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    async with runs.worker():
        await runs.start("approval", "publish something", run_id="g-ask", config=config)
        [interrupt] = await runs.tc.wait_for_interrupts("g-ask")
        assert (interrupt.name, interrupt.reason) == ("approve", {"title": "tides"})
        waiting = await runs.snapshot("g-ask")
        assert waiting["state"]["status"] == "interrupted"
        assert waiting["state"]["nodes"]["notes"]["status"] == "completed"  # the parallel branch finished
        assert waiting["state"]["paused"]["publish"]["data"]["interrupt_state"]  # the node agent as it stopped
        with pytest.raises(InterruptError, match="unknown interrupt id"):
            await runs.tc.answer_interrupts("g-ask", [{"interruptId": "nope", "response": "yes"}])
        status = await runs.tc.answer_interrupts("g-ask", [{"interruptId": interrupt.id, "response": "yes"}])
        assert status["status"] in ("running", "done")
        result = await runs.result("g-ask")
        children = child_executions(await runs.client.get_workflow_handle("g-ask").fetch_history())
    assert result.status == "completed"
    assert str(result.results["publish"]) == "done: published tides (yes)"
    assert result.results["publish"].executions == 1 and result.results["plan"].executions == 1
    lines = side.read_text().splitlines()
    assert lines[0] == "plan model 0"
    # publish and notes ran in parallel (in either order) until publish asked; after the answer
    # only publish's tool and its last model call ran: nothing finished ran again
    assert sorted(lines[1:-3]) == ["ask tides", "notes model 0", "publish model 0"]
    assert lines[-3:] == ["ask tides", "publish tides yes", "publish model 1"]
    # the interrupted node execution and its continuation are one child workflow id (two executions)
    publish = [c for c in children if c.workflow_id == child_run_id("g-ask", "publish:1")]
    assert len(publish) == 2 and publish[0].run_id != publish[1].run_id
    assert len(children) == 4


async def test_a_snapshot_moves_local_to_temporal_and_back(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    reference = await registry.build_graph("review", {}).invoke_async("explain tides")

    def after_plan(event: Any) -> bool:
        return bool(event["type"] == "node_result" and event["node_id"] == "plan")

    at_move, result, back, again = await runs.moved_to_temporal_and_back("review", "explain tides", "g-move", config, after_plan)
    assert at_move == ["plan model 0"]
    assert _summary(result) == _summary(reference)
    assert _summary(again) == _summary(result)
    assert result.results["plan"].executions == 1  # plan was not run again on Temporal
    assert sorted(side.read_text().splitlines()) == ["facts model 0", "plan model 0", "tally", "writer model 0"]
    fresh = registry.build_graph("review", config)
    fresh.load_snapshot(back)  # the Temporal state, in the local shape
    assert fresh.take_snapshot()["execution_order"] == result.execution_order
    assert back["state"]["status"] == "completed"
    assert {n: e["status"] for n, e in back["state"]["nodes"].items()} == {
        "plan": "completed",
        "facts": "completed",
        "tally": "completed",
        "writer": "completed",
        "urgent": "pending",
    }


async def test_a_graph_waiting_on_temporal_is_answered_locally(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    result = await runs.answered_locally("g-home", {"log": str(side)}, "fine")
    assert result.status == "completed"
    assert str(result.results["publish"]) == "done: published tides (fine)"
    lines = side.read_text().splitlines()
    assert sorted(lines[:-3]) == ["ask tides", "notes model 0", "plan model 0", "publish model 0"]  # on Temporal, once each
    assert lines[-3:] == ["ask tides", "publish tides fine", "publish model 1"]  # locally: the answered node only


async def test_a_local_graph_waiting_on_an_interrupt_is_answered_on_temporal(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    result = await runs.answered_on_temporal("g-away", {"log": str(side)}, "sure")
    assert str(result.results["publish"]) == "done: published tides (sure)"
    assert result.results["notes"].executions == 1
    lines = side.read_text().splitlines()
    assert lines[-3:] == ["ask tides", "publish tides sure", "publish model 1"]  # on Temporal: the answered node only
    assert sorted(lines[:-3]) == ["ask tides", "notes model 0", "plan model 0", "publish model 0"]  # locally, once each


async def test_a_nested_graph_node_is_a_child_graph_workflow(runs: Orchestration) -> None:
    async with runs.worker():
        result = await runs.execute("outer", "go", run_id="g-outer")
        inner = child_run_id("g-outer", "inner:1")
        description = await runs.client.get_workflow_handle(inner).describe()
        inner_children = child_executions(await runs.client.get_workflow_handle(inner).fetch_history())
    local = await registry.build_graph("outer", {}).invoke_async("go")
    assert _summary(result) == _summary(local)
    nested = result.results["inner"].result
    assert isinstance(nested, GraphResult) and nested.execution_order == ["left", "right"]
    assert (description.parent_id, description.workflow_type) == ("g-outer", GRAPH_WORKFLOW_NAME)
    assert [c.workflow_id for c in inner_children] == [child_run_id(inner, "left:1"), child_run_id(inner, "right:1")]


async def test_the_graph_history_replays(runs: Orchestration, tmp_path: Path) -> None:
    async with runs.worker():
        await runs.start("approval", "publish something", run_id="g-replay", config={})
        [interrupt] = await runs.tc.wait_for_interrupts("g-replay")
        await runs.tc.answer_interrupts("g-replay", [{"interruptId": interrupt.id, "response": "ok"}])
        await runs.result("g-replay")
        await runs.execute("review", "urgent: tides", run_id="g-replay-2")
        histories = await run_histories(runs.client, "g-replay", "g-replay-2")
    assert len(histories) == 2 + 4 + 4  # the graphs; plan, publish twice, notes; plan, facts, urgent, writer
    await replay(histories, AgentWorkflow, GraphWorkflow)


async def test_a_node_that_fails_fails_the_graph_run_with_its_error_as_locally(runs: Orchestration) -> None:
    failed = await runs.failed("g-broken")
    assert failed["state"]["status"] == "failed"
    assert failed["state"]["nodes"]["second"]["status"] == "failed"
    assert failed["execution_order"] == ["first"]


async def test_large_inputs_and_results_travel_as_blob_references(client: Client, blobs: BlobStore, task_queue: str) -> None:
    task = "explain tides " + "x" * 10_000
    tc = TetherClient(client, blobs, task_queue, inline_limit=256)
    async with running_worker(client, task_queue, blobs, registry, inline_limit=256):
        result = await tc.execute_graph("review", task, run_id="g-large")
        raw = await client.get_workflow_handle("g-large").query("snapshot", result_type=dict)
    local = await registry.build_graph("review", {}).invoke_async(task)
    assert _summary(result) == _summary(local)
    assert is_placeholder(raw["state"]["task"])
    assert all(is_placeholder(raw["state"]["nodes"][n]["result"]) for n in ("plan", "writer"))


async def test_bad_graph_names_fail_with_a_configuration_error(runs: Orchestration) -> None:
    async with runs.worker():
        with pytest.raises(ConfigurationError, match="no factory named 'nowhere'"):
            await runs.execute("nowhere", "task", run_id="g-nowhere")
        with pytest.raises(ConfigurationError, match="not a graph"):
            await runs.execute("review/plan", "task", run_id="g-agent")
        with pytest.raises(PromptError, match="a graph task must be"):
            await runs.start("review", 42, run_id="g-bad-task")


async def test_the_plugin_serves_graph_runs(runs: Orchestration) -> None:
    async with runs.plugin_worker():
        result = await runs.execute("review", "explain tides", run_id="g-plugin")
    assert result.status == "completed" and str(result).startswith("report: Original task: explain tides")


async def test_a_long_graph_run_continues_as_new_between_node_executions(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    async with runs.worker():
        result = await runs.execute("loop", "write", run_id="g-can", config={"log": str(side)}, options={"nodes_per_execution": 1})
        executions = await histories_of(runs.client, "g-can")
    assert len(executions) == 4  # the cycle runs one node at a time: one node execution per workflow execution
    assert _summary(result) == _summary(registry.build_graph("loop", {})("write"))
    assert side.read_text().splitlines() == ["draft model 0", "check model 0", "draft model 0", "check model 0"]  # none twice


GRAPH_HISTORIES = HISTORIES / "graph"


async def test_the_stored_graph_histories_replay_against_the_current_workflow() -> None:
    paths = sorted(GRAPH_HISTORIES.glob("*.json"))
    assert {p.name.split(".")[0] for p in paths} >= {"r1-graph_parallel", "r1-graph_loop", "r1-graph_interrupt", "r1-graph_nested"}
    assert len([p for p in paths if p.name.startswith("r1-graph_loop.")]) == 2  # a continue-as-new chain
    await replay(load_histories(folder=GRAPH_HISTORIES), AgentWorkflow, GraphWorkflow)


async def test_the_graph_replay_catches_a_change_that_would_break_runs_in_flight() -> None:
    [history] = load_histories("r1-graph_parallel.0.json", GRAPH_HISTORIES)
    await assert_reordering_breaks_replay(GraphWorkflow, GRAPH_WORKFLOW_NAME, history)


async def test_signalled_answers_work_and_invalid_ones_are_ignored(runs: Orchestration) -> None:
    result = await runs.signalled("g-signal")
    assert str(result.results["publish"]) == "done: published tides (later)"


async def test_kill_9_of_the_worker_inside_a_node_redoes_no_finished_work(
    runs: Orchestration, tmp_path: Path, dev_server: DevServer
) -> None:
    # The builder node is a child workflow: its model calls and its fast tool are activities of
    # its own history, the scout node is done; the worker dying in the slow tool re-runs that
    # tool only (with the same idempotency key), on another worker.
    result, lines = await runs.killed_in_the_slow_tool("g-kill", dev_server, tmp_path, "graphs")
    assert (result.status, str(result), result.execution_order) == ("completed", "built", ["scout", "builder"])
    assert (result.results["scout"].executions, result.results["builder"].executions) == (1, 1)
    key = f"{child_run_id('g-kill', 'builder:1')}/tooluse_3_0"  # the node execution's run id and its tool call
    assert lines == relay_log(key)


async def test_parallel_interrupts_are_answered_one_at_a_time_each_to_its_node(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    config = {"log": str(side)}
    local = registry.build_graph("two_approvals", {})
    first = await local.invoke_async("ship")
    by_node = {i.reason["what"]: i for i in first.interrupts}
    local_mid = await local.invoke_async([{"interruptResponse": {"interruptId": by_node["left"].id, "response": "ok"}}])
    local_end = await local.invoke_async([{"interruptResponse": {"interruptId": by_node["right"].id, "response": "fine"}}])
    async with runs.worker():
        await runs.start("two_approvals", "ship", run_id="g-two", config=config)
        asked = await runs.tc.wait_for_interrupts("g-two")  # interrupted once nothing is in flight: both nodes asked
        ids = {i.reason["what"]: i.id for i in asked}
        assert set(ids) == {"left", "right"}
        status = await runs.tc.answer_interrupts("g-two", [{"interruptId": ids["left"], "response": "ok"}])
        [still] = await runs.tc.wait_for_interrupts("g-two")  # right still waits
        assert still.id == ids["right"] and status["status"] in ("running", "interrupted")
        mid = await runs.snapshot("g-two")
        assert (mid["state"]["status"], mid["state"]["nodes"]["left"]["status"]) == ("interrupted", "completed")
        await runs.tc.answer_interrupts("g-two", [{"interruptId": ids["right"], "response": "fine"}])
        result = await runs.result("g-two")
    assert (result.status, str(result.results["left"]), str(result.results["right"])) == (
        "completed",
        "shipped left (ok)",
        "shipped right (fine)",
    )
    assert local_mid.status == "interrupted" and _summary(result) == _summary(local_end)
    assert sorted(result.execution_order) == sorted(local_end.execution_order)
    lines = side.read_text().splitlines()
    assert lines.count("plan model 0") == 1 and lines.count("ship left ok") == 1 and lines.count("ship right fine") == 1
    assert lines.count("ask left") == 2 and lines.count("ask right") == 2  # asked, then asked again with the answer


async def test_an_interrupt_inside_a_nested_graph_node_is_answered_on_the_nested_graph_run(runs: Orchestration, tmp_path: Path) -> None:
    side = tmp_path / "side.log"
    inner = child_run_id("g-nest", "inner:1")
    async with runs.worker():
        await runs.start("outer_approval", "publish", run_id="g-nest", config={"log": str(side)})
        async with asyncio.timeout(60):  # poll until the outer graph has started its nested graph node
            while not await _exists(runs.client, inner):
                await asyncio.sleep(0.05)
        [interrupt] = await runs.tc.wait_for_interrupts(inner)  # the nested graph's own run waits
        assert (await runs.tc.status("g-nest"))["status"] == "running"  # the outer graph waits on its node
        await runs.tc.answer_interrupts(inner, [{"interruptId": interrupt.id, "response": "yes"}])
        result = await runs.result("g-nest")
    nested = result.results["inner"].result
    assert isinstance(nested, GraphResult) and str(nested.results["publish"]) == "done: published tides (yes)"
    assert result.status == "completed" and result.execution_order == ["intro", "inner"]
    lines = side.read_text().splitlines()
    assert lines.count("intro model 0") == 1 and lines.count("plan model 0") == 1 and lines.count("notes model 0") == 1


async def test_a_branch_finishing_while_a_node_waits_on_an_interrupt_still_runs_its_successor(runs: Orchestration, tmp_path: Path) -> None:
    # ask || slow -> after: `slow` finishes only after `ask` stopped on its interrupt; `after`
    # still runs before the graph waits, as locally (where the shared scheduler used to refuse
    # to start it once the run was interrupted: tests/multiagent/test_graph_interrupts.py).
    side = tmp_path / "side.log"
    config = {"log": str(side), "marker": str(tmp_path / "asked")}
    async with runs.worker():
        await runs.start("late_branch", "go", run_id="g-late", config=config)
        [interrupt] = await runs.tc.wait_for_interrupts("g-late")
        waiting = await runs.snapshot("g-late")
        assert waiting["state"]["nodes"]["after"]["status"] == "completed"
        await runs.tc.answer_interrupts("g-late", [{"interruptId": interrupt.id, "response": "yes"}])
        result = await runs.result("g-late")
    assert result.status == "completed"
    assert str(result.results["after"]) == "after done" and result.results["after"].executions == 1
    assert str(result.results["ask"]) == "asked"
    assert sorted(side.read_text().splitlines()) == ["after model 0", "ask model 0", "slow"]
