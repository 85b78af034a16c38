"""The graph's scheduling as pure functions over its JSON state (no agents, no I/O)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether.errors import SnapshotError
from tether.multiagent import GraphBuilder
from tether.multiagent.schedule import (
    GraphSpec,
    SpecEdge,
    begin,
    check_spec_state,
    compose_input,
    finish,
    follow,
    input_sources,
    node_failed,
    record,
    start,
)
from tether.multiagent.state import GraphRunState


def diamond(limit: int | None = None) -> GraphSpec:
    """``a`` fans out to ``b`` and ``c`` (``a -> c`` conditional), which join in ``d``."""
    edges = (SpecEdge("a", "b", False), SpecEdge("a", "c", True), SpecEdge("c", "d", False), SpecEdge("b", "d", False))
    return GraphSpec(("a", "b", "c", "d"), dict.fromkeys("abcd", "agent"), edges, ("a",), limit)


def fresh(spec: GraphSpec, task: Any = "the task") -> dict[str, Any]:
    return GraphRunState.new(task, list(spec.nodes)).data


def texts(mapping: dict[str, str]) -> Any:
    def input_of_with(data: dict[str, Any], s: GraphSpec) -> Any:
        return lambda node: compose_input(data["task"], [(src, mapping[src]) for src in input_sources(s, data, node)])

    return input_of_with


def test_the_spec_is_json_and_matches_a_built_graph() -> None:
    s = diamond(7)
    assert GraphSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    builder = GraphBuilder()
    builder.add_node(str.upper, "up")
    builder.add_node(str.lower, "down")
    builder.add_edge("up", "down", condition=lambda state: True)
    spec = builder.build().spec
    assert spec.to_dict() == {
        "nodes": ["up", "down"],
        "kinds": {"up": "callable", "down": "callable"},
        "edges": [{"source": "up", "target": "down", "conditional": True}],
        "entry_points": ["up"],
        "max_node_executions": None,
    }
    assert spec.conditional("up") and not spec.conditional("down")


def test_a_run_starts_its_entry_points_and_a_join_waits_for_all_its_sources() -> None:
    s = diamond()
    data, order = fresh(s), []
    assert start(s, data) == ["a"]
    assert data["running"] == {"a": {"n": 1, "input": "the task"}} and data["status"] == "executing"
    assert record(data, order, "a", interrupted=False) == 1
    starts: list[str] = []
    follow(s, data, "a", [True, True], texts({"a": "A"})(data, s), starts)
    assert starts == ["b", "c"] and data["executions"] == 3
    assert data["running"]["b"]["input"] == "Original task: the task\n\nInputs from previous nodes:\n\nFrom a:\nA"
    record(data, order, "c", interrupted=False)
    follow(s, data, "c", [True], texts({"c": "C"})(data, s), starts)
    assert starts == ["b", "c"] and data["inputs"] == {"d": ["c"]}  # d waits for b too
    record(data, order, "b", interrupted=False)
    follow(s, data, "b", [True], texts({"b": "B", "c": "C"})(data, s), starts)
    assert starts[-1] == "d"
    # the sources in the order their edges were added (c -> d first), not the order they finished
    assert data["running"]["d"]["input"].endswith("From c:\nC\n\nFrom b:\nB")
    record(data, order, "d", interrupted=False)
    follow(s, data, "d", [], texts({})(data, s), starts)
    finish(data)
    assert (data["status"], order, data["running"]) == ("completed", ["a", "c", "b", "d"], {})


def test_a_false_condition_leaves_its_edge_unsatisfied() -> None:
    s = diamond()
    data, order = fresh(s), []
    start(s, data)
    record(data, order, "a", interrupted=False)
    starts: list[str] = []
    follow(s, data, "a", [True, False], texts({"a": "A"})(data, s), starts)
    assert starts == ["b"] and "c" not in data["inputs"]
    with pytest.raises(ValueError, match="2 outgoing edges, got 1"):
        follow(s, data, "a", [True], texts({"a": "A"})(data, s), starts)


def test_the_execution_limit_fails_the_run_instead_of_starting_a_node() -> None:
    s = diamond(2)
    data, order = fresh(s), []
    start(s, data)
    record(data, order, "a", interrupted=False)
    starts: list[str] = []
    follow(s, data, "a", [True, True], texts({"a": "A"})(data, s), starts)
    assert starts == ["b"] and data["status"] == "failed"
    assert data["error"] == "max node executions (2) reached: node 'c' was not started"
    assert start(s, {**data, "running": {}}) is None  # stopped with nothing in flight: the outcome stands


def test_a_node_ready_while_it_runs_is_queued_and_starts_again_when_it_finishes() -> None:
    s = GraphSpec(("a", "b"), dict.fromkeys("ab", "agent"), (SpecEdge("a", "b", False),), ("a", "b"), 10)
    data, order = fresh(s), []
    assert start(s, data) == ["a", "b"]
    record(data, order, "a", interrupted=False)
    starts: list[str] = []
    follow(s, data, "a", [True], lambda node: "again", starts)
    assert starts == [] and data["queued"] == ["b"]  # b is still running its first execution
    record(data, order, "b", interrupted=False)
    follow(s, data, "b", [], lambda node: "again", starts)
    assert starts == ["b"] and data["queued"] == [] and data["running"]["b"] == {"n": 2, "input": "again"}


def test_an_interrupted_node_stays_in_flight_and_a_failed_one_fails_the_run() -> None:
    s = diamond()
    data, order = fresh(s), []
    start(s, data)
    record(data, order, "a", interrupted=True)
    assert data["status"] == "interrupted" and data["running"] == {"a": {"n": 1, "input": None}}
    assert start(s, data) == ["a"] and data["status"] == "executing"  # resumed, not restarted
    node_failed(data, "a", RuntimeError("boom"))
    assert (data["status"], data["error"], data["nodes"]["a"]["status"]) == ("failed", "node 'a' failed: RuntimeError: boom", "failed")
    begin(s, data, "b", "x", starts := [])
    assert starts == []  # nothing new starts once the run failed


def test_a_state_of_another_graph_is_refused() -> None:
    s = diamond()
    with pytest.raises(SnapshotError, match="not this graph's nodes"):
        check_spec_state(s, fresh(GraphSpec(("x",), {"x": "agent"}, (), ("x",), None)), [], "snapshot")
    with pytest.raises(SnapshotError, match="unknown nodes"):
        check_spec_state(s, fresh(s), ["zz"], "snapshot")


def self_loop_beside(join: str) -> GraphSpec:
    """``a`` feeds ``b``, which loops on itself (conditionally)."""
    edges = (SpecEdge("a", "b", False), SpecEdge("b", "b", True))
    return GraphSpec(("a", "b"), dict.fromkeys("ab", "agent"), edges, ("a",), 10, join)


def test_all_but_self_lets_a_self_loop_rerun_its_node_beside_other_edges() -> None:
    for join, reruns in (("all", False), ("all_but_self", True)):
        s = self_loop_beside(join)
        data = fresh(s)
        order: list[str] = []
        start(s, data)
        record(data, order, "a", interrupted=False)
        starts: list[str] = []
        follow(s, data, "a", [True], lambda node: "from a", starts)
        assert starts == (["b"] if join == "all_but_self" else [])
        if join == "all":
            continue  # Tether's default join: b waits for its own edge too, and never starts
        record(data, order, "b", interrupted=False)
        starts = []
        follow(s, data, "b", [True], lambda node: "again", starts)
        assert (starts, data["running"]["b"]["n"]) == (["b"], 2)
        assert reruns


def test_a_self_loop_of_a_queued_node_adds_no_second_rerun() -> None:
    edges = (SpecEdge("a", "b", False), SpecEdge("a", "a", True), SpecEdge("b", "b", True))
    s = GraphSpec(("a", "b"), dict.fromkeys("ab", "agent"), edges, ("a",), 10, "all_but_self")
    data = fresh(s)
    order: list[str] = []
    start(s, data)
    record(data, order, "a", interrupted=False)
    starts: list[str] = []
    follow(s, data, "a", [True, True], lambda node: node, starts)  # a again, and b
    assert sorted(starts) == ["a", "b"]
    record(data, order, "a", interrupted=False)
    follow(s, data, "a", [True, False], lambda node: node, [])  # b is running: queued
    assert data["queued"] == ["b"]
    record(data, order, "b", interrupted=False)
    starts = []
    follow(s, data, "b", [True], lambda node: node, starts)  # b's self-loop and its queued re-run: one
    assert starts == ["b"] and data["queued"] == [] and data["executions"] == 4


def test_the_join_rule_is_part_of_the_spec_json() -> None:
    s = self_loop_beside("all_but_self")
    assert s.to_dict()["join"] == "all_but_self"
    assert GraphSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    assert "join" not in self_loop_beside("all").to_dict()  # the default's JSON is as before
