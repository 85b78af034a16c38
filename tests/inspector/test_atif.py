"""ATIF export, validated against the schema generated from Harbor's own trajectory models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tether.durable import SQLiteStore
from tether.inspect import ATIF_VERSION, to_atif

from .runs import ANSWER, CHILD_ANSWER, ERROR, PROMPT

SCHEMA = json.loads((Path(__file__).parent / "data" / "atif-v1.6.schema.json").read_text(encoding="utf-8"))
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


def validate(trajectory: dict[str, Any]) -> None:
    """The schema, then the three rules Harbor's models check in validators (see data/README.md)."""
    jsonschema.validate(trajectory, SCHEMA, cls=jsonschema.Draft202012Validator)
    for index, step in enumerate(trajectory["steps"], start=1):
        assert step["step_id"] == index
        own = {call["tool_call_id"] for call in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results", []):
            assert result.get("source_call_id") is None or result["source_call_id"] in own
        if step["source"] != "agent":
            assert not [name for name in AGENT_ONLY if step.get(name) is not None], step


def test_the_schema_rejects_what_harbor_rejects() -> None:
    """The validator is not vacuous: a wrong version, an unknown field, a bad source fail."""
    good = {
        "schema_version": ATIF_VERSION,
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    jsonschema.validate(good, SCHEMA)
    for bad in (
        {**good, "schema_version": "ATIF-v9"},
        {**good, "surprise": 1},
        {**good, "steps": [{"step_id": 1, "source": "robot", "message": "hi"}]},
        {**good, "steps": []},
    ):
        try:
            jsonschema.validate(bad, SCHEMA)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_run_with_tool_calls_an_error_and_a_nested_run(store: SQLiteStore) -> None:
    trajectory = to_atif(store, "r1")
    validate(trajectory)
    assert trajectory["schema_version"] == "ATIF-v1.6" and trajectory["session_id"] == "r1"
    steps = trajectory["steps"]
    assert steps[0]["source"] == "user" and steps[0]["message"] == PROMPT
    calls = [call["function_name"] for step in steps for call in step.get("tool_calls") or []]
    assert calls == ["lookup", "refund", "approve"]
    first = steps[1]
    assert first["metrics"]["prompt_tokens"] == 11 and first["metrics"]["completion_tokens"] == 4
    results = {r["source_call_id"]: r["content"] for r in first["observation"]["results"]}
    refund_id = next(c["tool_call_id"] for c in first["tool_calls"] if c["function_name"] == "refund")
    assert ERROR in results[refund_id]
    assert first["extra"]["tool_result_status"] == {refund_id: "error"}
    assert [s["message"] for s in steps if s["source"] == "agent"][-1] == ANSWER
    refs = [
        ref for step in steps for r in (step.get("observation") or {}).get("results", []) for ref in r.get("subagent_trajectory_ref") or []
    ]
    assert [ref["session_id"] for ref in refs] == ["r1.child"]
    assert trajectory["final_metrics"] == {
        "total_prompt_tokens": 33,
        "total_completion_tokens": 12,
        "total_steps": len(steps),
        "extra": {"total_tokens": 45, "cycles": 3, "turns": 1},
    }
    assert all(step.get("timestamp", "").endswith("Z") for step in steps if step["source"] != "system")


def test_nested_run_and_fork_export_too(store: SQLiteStore) -> None:
    child = to_atif(store, "r1.child")
    validate(child)
    assert child["extra"]["tether"]["parent_run_id"] == "r1"
    assert child["steps"][-1]["message"] == CHILD_ANSWER
    fork = to_atif(store, "r1.fork")
    validate(fork)
    assert fork["steps"][0]["message"] == PROMPT


def test_a_system_prompt_is_a_system_step(tmp_path: Path) -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    store = SQLiteStore(tmp_path / "s.db")
    Agent(model=ScriptedModel(["hi"]), store=store, system_prompt="Be brief.")("hello", run_id="s")
    trajectory = to_atif(store, "s")
    store.close()
    validate(trajectory)
    assert [(s["source"], s["message"]) for s in trajectory["steps"]] == [("system", "Be brief."), ("user", "hello"), ("agent", "hi")]


def test_reasoning_goes_to_reasoning_content(tmp_path: Path) -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    reply = {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "think"}}}, {"text": "done"}]}
    store = SQLiteStore(tmp_path / "r.db")
    Agent(model=ScriptedModel([reply]), store=store)("go", run_id="r")
    trajectory = to_atif(store, "r")
    store.close()
    validate(trajectory)
    assert trajectory["steps"][-1]["reasoning_content"] == "think" and trajectory["steps"][-1]["message"] == "done"


def test_a_graph_run_exports_its_node_executions_not_internal_rows(tmp_path: Path) -> None:
    from .runs import GRAPH_TASK, build_graph

    store = SQLiteStore(tmp_path / "g.db")
    build_graph(store)
    trajectory = to_atif(store, "g")
    validate(trajectory)
    text = json.dumps(trajectory)
    assert "graph_node" not in text
    steps = trajectory["steps"]
    assert steps[0]["source"] == "user" and steps[0]["message"] == GRAPH_TASK
    assert [s["message"] for s in steps[1:]] == [
        "graph node check execution 1: completed",
        "graph node write execution 1: completed",
        "graph node notify execution 1: completed",
    ]
    refs = [r["subagent_trajectory_ref"][0]["session_id"] for s in steps for r in (s.get("observation") or {}).get("results", [])]
    assert refs == ["g.check:1", "g.write:1"]  # the callable node has no run
    assert trajectory["final_metrics"]["total_prompt_tokens"] == 30  # the node runs' usage, rolled up
