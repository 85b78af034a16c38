"""The swarm's turn logic as pure functions over its JSON state (no agents, no I/O)."""

from __future__ import annotations

import json

import pytest

from tether.errors import SnapshotError
from tether.multiagent.swarm_turns import SwarmSpec, begin, check_state, new_state, record_turn, start_turn, turn_input


def spec(**limits: int) -> SwarmSpec:
    values = {"max_handoffs": 5, "max_iterations": 5, "window": 0, "min_unique": 0, **limits}
    return SwarmSpec(("a", "b", "c"), {"a": "the a", "b": "", "c": "the c"}, "a", **values)


def test_the_spec_is_json() -> None:
    s = spec(window=4, min_unique=2)
    assert SwarmSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_a_turn_starts_with_the_task_the_handoff_and_the_context() -> None:
    s = spec()
    data, order = new_state(s, "the task"), []
    running = start_turn(s, data, order)
    assert running == data["running"] and running is not None
    assert (running["member"], running["n"], data["turns"], data["nodes"]["a"]["status"]) == ("a", 1, 1, "executing")
    assert running["input"].startswith("the task\n\nYou may hand off")
    assert "- b: no description" in running["input"] and "- c: the c" in running["input"] and "- a:" not in running["input"]
    event = record_turn(s, data, order, "a", 1, interrupted=False, handoff={"to": "b", "message": "go", "context": {"k": 1}})
    assert event == {"type": "handoff", "from": "a", "to": "b", "message": "go"}
    assert (data["current"], data["previous"], data["handoffs"], data["context"], order) == ("b", "a", 1, {"k": 1}, ["a"])
    text = turn_input(s, data, order, "b")
    assert "Handoff from a: go" in text and 'Shared context: {"k": 1}' in text and "worked on this so far: a" in text
    record_turn(s, data, order, "b", 2, interrupted=False, handoff=None)
    assert data["status"] == "completed" and data["running"] is None


def test_an_interrupted_turn_keeps_running_until_answered() -> None:
    s = spec()
    data, order = new_state(s, "t"), []
    start_turn(s, data, order)
    record_turn(s, data, order, "a", 1, interrupted=True, handoff={"to": "b"})
    assert data["status"] == "interrupted" and data["running"] == {"member": "a", "n": 1, "input": None}
    assert data["handoffs"] == 0  # an interrupted turn hands nothing off
    assert begin(data) and data["status"] == "executing"


def test_the_limits_fail_the_run() -> None:
    s = spec(max_handoffs=1)
    data, order = new_state(s, "t"), []
    for name, to in (("a", "b"), ("b", "a")):
        start_turn(s, data, order)
        record_turn(s, data, order, name, data["turns"], interrupted=False, handoff={"to": to})
    assert data["status"] == "failed" and "max handoffs (1)" in data["error"]
    assert not begin(data)  # the outcome stands

    s = spec(max_iterations=1)
    data = new_state(s, "t")
    start_turn(s, data, [])
    record_turn(s, data, ["a"], "a", 1, interrupted=False, handoff={"to": "b"})
    assert start_turn(s, data, ["a"]) is None and "max iterations (1)" in data["error"]

    s = spec(window=3, min_unique=3)
    data, order = new_state(s, "t"), []
    for name, to in (("a", "b"), ("b", "a")):
        start_turn(s, data, order)
        record_turn(s, data, order, name, data["turns"], interrupted=False, handoff={"to": to})
    assert data["status"] == "failed" and "repetitive handoffs" in data["error"] and "a -> b -> a" in data["error"]


def test_a_state_of_another_swarm_is_refused() -> None:
    s = spec()
    good = new_state(s, "t")
    check_state(s, good, [], "snapshot")
    with pytest.raises(SnapshotError, match="members"):
        check_state(s, {**good, "nodes": {"x": {}}}, [], "snapshot")
    with pytest.raises(SnapshotError, match="no 'handoffs'"):
        check_state(s, {k: v for k, v in good.items() if k != "handoffs"}, [], "snapshot")
    with pytest.raises(SnapshotError, match="turn in flight"):
        check_state(s, {**good, "running": {"member": "x"}}, [], "snapshot")
    with pytest.raises(SnapshotError, match="history"):
        check_state(s, good, ["x"], "snapshot")
