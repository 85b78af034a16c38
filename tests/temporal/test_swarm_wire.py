"""A swarm snapshot converted between its local and Temporal shapes (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.durable import MemoryStore
from tether.errors import SnapshotError
from tether.temporal import BlobStore
from tether.temporal.payloads import is_placeholder
from tether.temporal.swarm_wire import swarm_to_local, swarm_to_temporal

from .swarms import registry


async def test_an_interrupted_swarm_snapshot_goes_to_temporal_and_back(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    swarm = registry.build_swarm("approval", {})
    paused = await swarm.invoke_async("publish something")
    local = json.loads(json.dumps(swarm.take_snapshot()))
    remote = swarm_to_temporal(blobs, local, inline_limit=64, max_value_bytes=None)
    nodes = remote["state"]["nodes"]
    assert is_placeholder(nodes["drafter"]["result"]) and is_placeholder(nodes["publisher"]["result"])
    running = remote["state"]["running"]
    assert "paused" not in running and running["carried"]["conv"] is not None
    assert [item["id"] for item in running["pending"]] == [i.id for i in paused.interrupts]
    back = swarm_to_local(blobs, json.loads(json.dumps(remote)))
    assert back["state"]["nodes"] == local["state"]["nodes"] and back["node_history"] == local["node_history"]
    assert back["state"]["running"]["paused"]["data"]["messages"] == local["state"]["running"]["paused"]["data"]["messages"]
    fresh = registry.build_swarm("approval", {})
    fresh.load_snapshot(back)
    [interrupt] = paused.interrupts
    result = await fresh.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert str(result) == "done: published tides (yes)"


def test_what_is_not_a_swarm_snapshot_is_refused(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    for bad in (None, {"type": "tether.graph", "version": 1}, {"type": "tether.swarm", "version": 2}):
        with pytest.raises(SnapshotError, match="not a swarm snapshot"):
            swarm_to_temporal(blobs, bad, inline_limit=64, max_value_bytes=None)
    with pytest.raises(SnapshotError, match="'state'"):
        swarm_to_temporal(
            blobs, {"type": "tether.swarm", "version": 1, "state": [], "node_history": []}, inline_limit=64, max_value_bytes=None
        )


async def test_an_interrupted_durable_swarm_run_cannot_move_without_its_member_run(tmp_path: Path) -> None:
    swarm = registry.build_swarm("approval", {})
    swarm.store = MemoryStore()
    paused = await swarm.invoke_async("publish something", run_id="d")
    assert paused.status == "interrupted"
    with pytest.raises(SnapshotError, match="durable local swarm run"):
        swarm_to_temporal(BlobStore(tmp_path / "blobs"), swarm.take_snapshot(), inline_limit=64, max_value_bytes=None)
