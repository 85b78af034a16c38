"""Strands' ``strands.multiagent._snapshot`` on Tether: a graph's or swarm's state in the
versioned ``multiAgent`` snapshot envelope, ``data = {"orchestrator_id": ..., "state": ...}``
(Strands 1.57+), where ``state`` is the orchestrator's ``serialize_state()``.

Loading checks the envelope (schema version, scope, the orchestrator id) before anything
changes, then hands the state to ``deserialize_state``, which validates all of it before it
replaces the orchestrator's state: a refused snapshot changes nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from ...errors import SnapshotError
from ...snapshot import MULTI_AGENT_SCOPE, SNAPSHOT_SCHEMA_VERSION, Snapshot


class Orchestrator(Protocol):
    """What snapshots need of a Graph or Swarm."""

    id: str

    def serialize_state(self) -> dict[str, Any]: ...

    def deserialize_state(self, payload: dict[str, Any]) -> None: ...


def take_snapshot(orchestrator: Orchestrator, *, app_data: dict[str, Any] | None = None) -> Snapshot:
    """Capture ``orchestrator``'s state as a ``multiAgent`` snapshot.

    Args:
        orchestrator: The Graph or Swarm.
        app_data: The application's own JSON, stored verbatim.
    """
    data = {"orchestrator_id": orchestrator.id, "state": orchestrator.serialize_state()}
    return Snapshot.from_dict(
        {"schema_version": SNAPSHOT_SCHEMA_VERSION, "scope": MULTI_AGENT_SCOPE, "data": data, "app_data": app_data or {}},
        path="multiAgent snapshot",
    )


def load_snapshot(orchestrator: Orchestrator, snapshot: Snapshot | dict[str, Any]) -> None:
    """Restore ``orchestrator`` from a ``multiAgent`` snapshot (Strands' or Tether's).

    Raises:
        SnapshotError: (Strands' ``SnapshotException``) An unsupported schema version, another
            scope, an ``orchestrator_id`` that is not ``orchestrator.id``, or a state this
            orchestrator cannot continue (naming the field); the orchestrator is unchanged.
    """
    if isinstance(snapshot, dict):
        snapshot = Snapshot.from_dict(snapshot, path="multiAgent snapshot")
    if not isinstance(snapshot, Snapshot):
        raise SnapshotError(f"load_snapshot: expected a Snapshot or its dict, got {type(snapshot).__name__}")
    snapshot.validate()
    if snapshot.scope != MULTI_AGENT_SCOPE:
        raise SnapshotError(f"Expected snapshot scope 'multiAgent', got {snapshot.scope!r}")
    data = snapshot.data
    ident = data.get("orchestrator_id")
    if ident != orchestrator.id:
        raise SnapshotError(f"Snapshot orchestrator id mismatch: snapshot.data.orchestrator_id is {ident!r}, expected {orchestrator.id!r}")
    state = data.get("state")
    if not isinstance(state, dict):
        raise SnapshotError(f"snapshot.data.state must be an object, got {type(state).__name__}")
    orchestrator.deserialize_state(state)


__all__ = ["Orchestrator", "load_snapshot", "take_snapshot"]
