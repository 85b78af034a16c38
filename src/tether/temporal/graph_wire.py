"""A graph snapshot in its two shapes: local (``Graph.take_snapshot()``) and Temporal (compact).

Both are ``{"type": "tether.graph", "version": 1, "state": ..., "execution_order": [...]}`` with
the same state. They differ in two places only:

- large values (the task, a node's latest result ``state.nodes[id].result``, the input of an
  execution in flight ``state.running[id].input``) are inline locally, and on Temporal one
  ``{"$blob": ref}`` placeholder each;
- an agent node stopped on interrupts keeps, locally, its agent's snapshot
  (``state.paused[id]``, a :class:`~tether.Snapshot` dict) and, on Temporal, its child
  workflow's carried state and pending interrupts (``state.running[id].carried`` and
  ``.pending``, compact).

The client converts one into the other, so a graph run moves between a laptop and Temporal
both ways.
"""

from __future__ import annotations

import copy
from typing import Any, Unpack, cast

from ..errors import SnapshotError
from ..multiagent.state import SNAPSHOT_TYPE, SNAPSHOT_VERSION
from .blobs import BlobStore
from .payloads import check_compact, restore
from .policy import PayloadLimits, PayloadPolicy
from .shapes import MultiAgentSnapshot
from .wire import carried_from_paused, checked_copy, map_results, snapshot_of


def _check(snapshot: Any) -> MultiAgentSnapshot:
    if not isinstance(snapshot, dict) or snapshot.get("type") != SNAPSHOT_TYPE or snapshot.get("version") != SNAPSHOT_VERSION:
        raise SnapshotError(
            f"not a graph snapshot (type {SNAPSHOT_TYPE!r}, version {SNAPSHOT_VERSION}); pass what Graph.take_snapshot() returns"
        )
    state = snapshot.get("state")
    if not isinstance(state, dict) or not isinstance(state.get("nodes"), dict) or not isinstance(state.get("running"), dict):
        raise SnapshotError("graph snapshot: 'state' must be an object with 'nodes' and 'running'")
    if not isinstance(snapshot.get("execution_order"), list):
        raise SnapshotError("graph snapshot: 'execution_order' must be a list of node ids")
    return cast(MultiAgentSnapshot, snapshot)


def graph_to_temporal(blobs: BlobStore | PayloadPolicy, snapshot: Any, **limits: Unpack[PayloadLimits]) -> MultiAgentSnapshot:
    """The Temporal shape of a local graph snapshot (large values offloaded to ``blobs``).

    Args:
        blobs: Where large values go, or the whole :class:`~tether.temporal.policy.PayloadPolicy`.
        snapshot: What ``Graph.take_snapshot()`` returned (JSON).
        **limits: ``inline_limit`` and ``max_value_bytes``, as for :func:`~tether.temporal.carried_from_run`.

    Raises:
        SnapshotError: ``snapshot`` is not a graph snapshot, or one of its interrupted agent
            nodes is not in it (a durable local run keeps it in its store).
    """
    policy = PayloadPolicy.of(blobs, **limits)
    out = checked_copy(snapshot, _check, "graph snapshot")
    state = out["state"]
    state["task"] = policy.offload(state.get("task"), "the graph's task")
    map_results(state, lambda node_id, result: policy.offload(result, f"the result of node {node_id!r}"))
    paused = state.pop("paused", None) or {}
    for node_id, running in state["running"].items():
        if not isinstance(running, dict):
            raise SnapshotError(f"graph snapshot: the execution in flight of node {node_id!r} is malformed")
        if running.get("input") is not None:
            running["input"] = policy.offload(running["input"], f"the input of node {node_id!r}")
        if (state["nodes"].get(node_id) or {}).get("status") != "interrupted":
            continue
        agent = paused.get(node_id)
        if agent is None:
            raise SnapshotError(
                f"graph snapshot: node {node_id!r} stopped on interrupts in a durable local graph run; "
                "its node run lives in that run's store: answer it there (graph.resume(run_id, responses))"
            )
        running["carried"], running["pending"] = carried_from_paused(policy, agent)
    check_compact(out, "graph snapshot")
    return out


def graph_to_local(blobs: BlobStore, snapshot: MultiAgentSnapshot) -> MultiAgentSnapshot:
    """The local shape of a graph workflow's snapshot (``Graph.load_snapshot`` takes it).

    Args:
        blobs: The blob store the snapshot's references point into.
        snapshot: The workflow's ``snapshot`` query answer or result.
    """
    out = copy.deepcopy(_check(snapshot))
    state = out["state"]
    state["task"] = restore(blobs, state.get("task"))
    map_results(state, lambda _, result: restore(blobs, result))
    paused: dict[str, Any] = {}
    for node_id, running in state["running"].items():
        if running.get("input") is not None:
            running["input"] = restore(blobs, running["input"])
        if running.get("carried") is not None:
            paused[node_id] = snapshot_of(blobs, running.pop("carried")).to_dict()
        running.pop("pending", None)
    state["paused"] = paused
    return out


__all__ = ["graph_to_local", "graph_to_temporal"]
