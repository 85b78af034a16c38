"""``multiAgent`` snapshots (Strands' envelope of a graph or swarm state) are valid documents:
``data`` is ``{orchestrator_id, state}``, checked as such, never as an agent's fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.errors import SnapshotError
from tether.snapshot import MULTI_AGENT_SCOPE, Snapshot


def envelope(data: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", "scope": "multiAgent", "created_at": "2026-01-01T00:00:00Z", "data": data, "app_data": {"k": 1}}


STATE = {"type": "graph", "id": "g", "status": "completed", "node_results": {}, "next_nodes_to_execute": []}


@pytest.mark.parametrize("parse", ["dict", "json"])
def test_a_multi_agent_snapshot_loads_as_a_document(parse: str) -> None:
    doc = envelope({"orchestrator_id": "g", "state": STATE})
    snapshot = Snapshot.from_dict(doc) if parse == "dict" else Snapshot.from_json(json.dumps(doc))
    assert snapshot.scope == MULTI_AGENT_SCOPE
    assert snapshot.data == {"orchestrator_id": "g", "state": STATE}
    assert snapshot.app_data == {"k": 1}
    assert Snapshot.from_json(snapshot.to_json()).to_dict() == snapshot.to_dict()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"state": STATE}, "snapshot.data.orchestrator_id"),
        ({"orchestrator_id": 3, "state": STATE}, "snapshot.data.orchestrator_id"),
        ({"orchestrator_id": "g"}, "snapshot.data.state"),
        ({"orchestrator_id": "g", "state": [1]}, "snapshot.data.state"),
        ({"orchestrator_id": "g", "state": {"x": {1, 2}}}, "snapshot.data"),
    ],
)
def test_a_malformed_multi_agent_envelope_is_refused_naming_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(SnapshotError, match=field.replace(".", r"\.")):
        Snapshot.from_dict(envelope(data))


def test_an_agent_does_not_load_a_multi_agent_snapshot() -> None:
    agent = Agent(model=ScriptedModel(["hi"]))
    with pytest.raises(SnapshotError, match="multiAgent"):
        agent.load_snapshot(Snapshot.from_dict(envelope({"orchestrator_id": "g", "state": STATE})))
    assert agent.messages == []
