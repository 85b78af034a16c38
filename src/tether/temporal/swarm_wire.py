"""A swarm snapshot in its two shapes: local (``Swarm.take_snapshot()``) and Temporal (compact).

Both are ``{"type": "tether.swarm", "version": 1, "state": ..., "node_history": [...]}`` with
the same state. They differ in two places only:

- a member's latest result (``state.nodes[name].result``, ``encode_result`` JSON) is inline
  locally, and on Temporal one ``{"$blob": ref}`` placeholder when it is large;
- the member turn stopped on interrupts (``state.running``) keeps, locally, the member agent's
  snapshot (``paused``, a :class:`~tether.Snapshot` dict) and, on Temporal, the child workflow's
  carried state (``carried``) and its pending interrupts (``pending``, compact records).

The client converts one into the other, so a swarm run moves between a laptop and Temporal
both ways.
"""

from __future__ import annotations

import copy
from typing import Any, Unpack, cast

from ..errors import SnapshotError
from ..multiagent.swarm import SWARM_KEY
from .blobs import BlobStore
from .payloads import check_compact, restore
from .policy import PayloadLimits, PayloadPolicy
from .shapes import MultiAgentSnapshot
from .wire import carried_from_paused, checked_copy, map_results, snapshot_of

VERSION = 1


def _check(snapshot: Any) -> MultiAgentSnapshot:
    if not isinstance(snapshot, dict) or snapshot.get("type") != SWARM_KEY or snapshot.get("version") != VERSION:
        raise SnapshotError(f"not a swarm snapshot (type {SWARM_KEY!r}, version {VERSION}); pass what Swarm.take_snapshot() returns")
    if not isinstance(snapshot.get("state"), dict) or not isinstance(snapshot["state"].get("nodes"), dict):
        raise SnapshotError("swarm snapshot: 'state' must be an object with 'nodes'")
    if not isinstance(snapshot.get("node_history"), list):
        raise SnapshotError("swarm snapshot: 'node_history' must be a list of member names")
    return cast(MultiAgentSnapshot, snapshot)


def swarm_to_temporal(blobs: BlobStore | PayloadPolicy, snapshot: Any, **limits: Unpack[PayloadLimits]) -> MultiAgentSnapshot:
    """The Temporal shape of ``snapshot``, what ``Swarm.take_snapshot()`` returned: large member
    results offloaded to ``blobs``, the interrupted member's agent snapshot turned into its child
    workflow's carried state (arguments as :func:`~tether.temporal.graph_wire.graph_to_temporal`'s).

    Raises:
        SnapshotError: ``snapshot`` is not a swarm snapshot, or its interrupted member turn is
            not in it (a durable local run keeps it in its store).
    """
    policy = PayloadPolicy.of(blobs, **limits)
    out = checked_copy(snapshot, _check, "swarm snapshot")
    state = out["state"]
    map_results(state, lambda name, result: policy.offload(result, f"the result of member {name!r}"))
    running = state.get("running")
    if state.get("status") == "interrupted" and isinstance(running, dict) and running.get("paused") is None:
        raise SnapshotError(
            f"swarm snapshot: member {running.get('member')!r} stopped on interrupts in a durable local swarm run; "
            "its member run lives in that run's store: answer it there (swarm.resume(run_id, responses))"
        )
    if isinstance(running, dict) and running.get("paused") is not None:
        running["carried"], running["pending"] = carried_from_paused(policy, running.pop("paused"))
    check_compact(out, "swarm snapshot")
    return out


def swarm_to_local(blobs: BlobStore, snapshot: MultiAgentSnapshot) -> MultiAgentSnapshot:
    """The local shape of a swarm workflow's ``snapshot`` query answer or result, whose
    references point into ``blobs`` (``Swarm.load_snapshot`` takes it)."""
    out = copy.deepcopy(_check(snapshot))
    state = out["state"]
    map_results(state, lambda _, result: restore(blobs, result))
    running = state.get("running")
    if isinstance(running, dict) and running.get("carried") is not None:
        running["paused"] = snapshot_of(blobs, running.pop("carried")).to_dict()
        running.pop("pending", None)
    return out


__all__ = ["swarm_to_local", "swarm_to_temporal"]
