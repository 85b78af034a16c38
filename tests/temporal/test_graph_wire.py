"""A graph snapshot converted between its local and Temporal shapes (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.durable import MemoryStore
from tether.errors import SnapshotError
from tether.temporal import BlobStore
from tether.temporal.graph_wire import graph_to_local, graph_to_temporal
from tether.temporal.payloads import is_placeholder

from .graphs import registry


async def test_an_interrupted_graph_snapshot_goes_to_temporal_and_back(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    graph = registry.build_graph("approval", {})
    paused = await graph.invoke_async("publish something " + "x" * 200)
    local = json.loads(json.dumps(graph.take_snapshot()))
    remote = graph_to_temporal(blobs, local, inline_limit=64, max_value_bytes=None)
    state = remote["state"]
    assert is_placeholder(state["task"]) and is_placeholder(state["nodes"]["publish"]["result"])
    assert "paused" not in state
    running = state["running"]["publish"]
    assert running["carried"]["conv"] is not None
    assert [item["id"] for item in running["pending"]] == [i.id for i in paused.interrupts]
    back = graph_to_local(blobs, json.loads(json.dumps(remote)))
    assert back["state"]["nodes"] == local["state"]["nodes"] and back["execution_order"] == local["execution_order"]
    assert back["state"]["task"] == local["state"]["task"]
    assert back["state"]["paused"]["publish"]["data"]["messages"] == local["state"]["paused"]["publish"]["data"]["messages"]
    fresh = registry.build_graph("approval", {})
    fresh.load_snapshot(back)
    [interrupt] = paused.interrupts
    result = await fresh.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert str(result.results["publish"]) == "done: published tides (yes)"


async def test_the_input_of_an_execution_in_flight_travels_compact(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    graph = registry.build_graph("review", {})
    events = graph.stream_async("explain tides " + "y" * 300)
    async for event in events:
        if event["type"] == "node_result" and event["node_id"] == "plan":
            local = json.loads(json.dumps(graph.take_snapshot()))
            break
    await events.aclose()
    assert set(local["state"]["running"]) == {"facts", "tally"}
    remote = graph_to_temporal(blobs, local, inline_limit=64, max_value_bytes=None)
    assert all(is_placeholder(r["input"]) for r in remote["state"]["running"].values())
    assert graph_to_local(blobs, remote) == local


def test_what_is_not_a_graph_snapshot_is_refused(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    for bad in (None, {"type": "tether.swarm", "version": 1}, {"type": "tether.graph", "version": 2}):
        with pytest.raises(SnapshotError, match="not a graph snapshot"):
            graph_to_temporal(blobs, bad, inline_limit=64, max_value_bytes=None)
    with pytest.raises(SnapshotError, match="'state'"):
        graph_to_temporal(
            blobs, {"type": "tether.graph", "version": 1, "state": [], "execution_order": []}, inline_limit=64, max_value_bytes=None
        )


async def test_an_interrupted_durable_graph_run_cannot_move_without_its_node_run(tmp_path: Path) -> None:
    graph = registry.build_graph("approval", {})
    graph.store = MemoryStore()
    paused = await graph.invoke_async("publish something", run_id="d")
    assert paused.status == "interrupted"
    with pytest.raises(SnapshotError, match="durable local graph run"):
        graph_to_temporal(BlobStore(tmp_path / "blobs"), graph.take_snapshot(), inline_limit=64, max_value_bytes=None)
