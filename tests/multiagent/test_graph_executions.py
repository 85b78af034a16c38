"""What a graph or swarm run records of its node executions: the execution log (which node ran,
in which order, as which nested run), no fake conversation, usage rolled up once, a real stop
reason, and graph runs stored before the log still loading and resuming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import RunStore, SQLiteStore
from tether.errors import SnapshotError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Graph, GraphBuilder, Swarm
from tether.multiagent.executions import record_of
from tether.tools.context import ToolContext

FIGURES = ("cycle_count", "model_call_count", "tool_call_count")


@tool
def approve(ctx: ToolContext, amount: int) -> str:
    """Ask a human to approve an amount.

    Args:
        amount: The amount.
    """
    return f"human said {ctx.interrupt('approval', f'approve {amount}?')}"


def check_then_write(store: Any = None) -> Graph:
    """``check`` (asks a human, then answers) -> ``write`` (answers), both agents."""
    builder = GraphBuilder()
    check = Agent(model=ScriptedModel([tool_call("approve", {"amount": 5}), "checked"], stateful=True), tools=[approve], name="check")
    builder.add_node(check, "check")
    builder.add_node(Agent(model=ScriptedModel(["written"]), name="write"), "write")
    builder.add_edge("check", "write")
    return builder.build(store=store)


def answers(result: Any, value: str = "yes") -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": value}} for i in result.interrupts]


def children_total(store: RunStore, run_id: str) -> dict[str, int]:
    """The sum of the nested runs' own figures (read from their heads)."""
    total = dict.fromkeys((*FIGURES, "total_tokens"), 0)
    for summary in store.list_runs():
        if summary.parent_run_id == run_id:
            metrics = store.head(summary.run_id)["metrics"]  # type: ignore[index]
            for key in FIGURES:
                total[key] += metrics[key]
            total["total_tokens"] += metrics["usage"]["total_tokens"]
    return total


def own_figures(store: RunStore, run_id: str) -> dict[str, int]:
    metrics = store.head(run_id)["metrics"]  # type: ignore[index]
    return {**{key: metrics[key] for key in FIGURES}, "total_tokens": metrics["usage"]["total_tokens"]}


def test_an_answered_interrupt_is_one_execution_in_the_order_in_memory() -> None:
    graph = check_then_write()
    first = graph("go")
    assert first.status == "interrupted" and first.execution_order == [] and first.execution_count == 1
    done = graph(answers(first))
    assert done.execution_order == ["check", "write"] and done.execution_count == 2


def test_an_answered_interrupt_is_one_execution_in_the_order_durably(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    first = check_then_write(SQLiteStore(db))("go", run_id="g")
    assert first.status == "interrupted" and first.execution_order == []
    done = check_then_write(SQLiteStore(db)).resume("g", answers(first))
    assert done.execution_order == ["check", "write"] and done.execution_count == 2
    again = check_then_write(SQLiteStore(db)).resume("g")  # read back from the store
    assert again.execution_order == ["check", "write"]


def test_a_durable_graph_run_has_no_fake_messages_and_logs_each_execution_as_its_nested_run(any_store: RunStore) -> None:
    store = any_store
    graph = check_then_write(store)
    first = graph("go", run_id="g")
    graph.resume("g", answers(first))
    stored = store.load("g")
    assert stored is not None and stored.messages == []
    log = stored.head["state"]["tether.graph"]["log"]
    assert [(e["node"], e["n"], e["status"], e["done"], e["run_id"]) for e in log] == [
        ("check", 1, "completed", 1, "g.check:1"),
        ("write", 1, "completed", 2, "g.write:1"),
    ]
    for entry in log:  # each named run is the node's nested run
        assert store.head(entry["run_id"])["parent_run_id"] == "g"  # type: ignore[index]
    spec = stored.head["state"]["tether.graph"]["spec"]
    assert spec["nodes"] == ["check", "write"] and spec["edges"] == [{"source": "check", "target": "write", "conditional": False}]


def test_the_graph_run_metrics_are_its_node_runs_usage_counted_once(any_store: RunStore) -> None:
    store = any_store
    graph = check_then_write(store)
    first = graph("go", run_id="g")
    # the interrupted node's usage so far is in already ...
    assert own_figures(store, "g") == children_total(store, "g") and own_figures(store, "g")["model_call_count"] == 1
    graph.resume("g")  # nothing answered: nothing new, nothing added again
    assert own_figures(store, "g") == children_total(store, "g")
    graph.resume("g", answers(first))
    # ... and the rest once it completes: check made 2 model calls, write 1
    assert own_figures(store, "g") == children_total(store, "g")
    assert own_figures(store, "g")["model_call_count"] == 3 and own_figures(store, "g")["total_tokens"] == 45
    summary = next(s for s in store.list_runs() if s.run_id == "g")
    assert summary.cycles == 3 and summary.total_tokens == 45


def test_a_nested_graph_node_rolls_its_own_rolled_up_usage_into_the_parent(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    inner = GraphBuilder()
    inner.add_node(Agent(model=ScriptedModel(["a"]), name="a"), "a")
    builder = GraphBuilder()
    builder.add_node(inner.build(), "inner")
    builder.add_node(Agent(model=ScriptedModel(["b"]), name="b"), "b")
    builder.add_edge("inner", "b")
    builder.build(store=store)("go", run_id="outer")
    assert own_figures(store, "outer.inner:1")["model_call_count"] == 1
    assert own_figures(store, "outer")["model_call_count"] == 2 == children_total(store, "outer")["model_call_count"]


def test_the_stop_reason_of_a_graph_run_is_recorded(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    graph = check_then_write(store)
    first = graph("go", run_id="g")
    ends = [s for s in store.history("g") if s.position == "turn_end"]
    assert [(s.status, s.stop_reason) for s in ends] == [("interrupted", "interrupt")]
    graph.resume("g", answers(first))
    ends = [s for s in store.history("g") if s.position == "turn_end"]
    assert [(s.status, s.stop_reason) for s in ends] == [("interrupted", "interrupt"), ("finished", "completed")]
    assert next(s for s in store.list_runs() if s.run_id == "g").stop_reason == "completed"


def test_a_failed_graph_run_records_its_error_as_the_stop_reason(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")

    def broken(prompt: Any) -> str:
        raise ValueError("no ink")

    builder = GraphBuilder()
    builder.add_node(broken, "broken")
    with pytest.raises(ValueError):
        builder.build(store=store)("go", run_id="g")
    [end] = [s for s in store.history("g") if s.position == "turn_end"]
    assert end.status == "failed" and end.stop_reason == "node 'broken' failed: ValueError: no ink"


def swarm_with_interrupt(store: Any) -> Swarm:
    drafter = Agent(
        model=ScriptedModel([tool_call("handoff_to_agent", {"agent_name": "publisher", "message": "publish"}), "handed"]),
        name="drafter",
    )
    publisher = Agent(
        model=ScriptedModel([tool_call("approve", {"amount": 1}), "published"], stateful=True), tools=[approve], name="publisher"
    )
    return Swarm([drafter, publisher], store=store)


def test_a_swarm_turn_answered_after_an_interrupt_is_one_turn_and_usage_rolls_up(any_store: RunStore) -> None:
    store = any_store
    first = swarm_with_interrupt(store)("go", run_id="s")
    assert first.status == "interrupted" and first.node_history == ["drafter"]
    done = swarm_with_interrupt(store).resume("s", answers(first))
    assert done.status == "completed" and done.node_history == ["drafter", "publisher"] and done.execution_count == 2
    stored = store.load("s")
    assert stored is not None and stored.messages == []
    log = stored.head["state"]["tether.swarm"]["log"]
    assert [(e["node"], e["run_id"], e["status"]) for e in log] == [
        ("drafter", "s.drafter:1", "completed"),
        ("publisher", "s.publisher:2", "completed"),
    ]
    assert own_figures(store, "s") == children_total(store, "s") and own_figures(store, "s")["model_call_count"] == 4
    record = record_of("s", stored.head, stored.messages)  # what tether show and the inspector present
    assert record is not None and record["kind"] == "swarm" and record["entry_points"] == ["drafter"]
    assert record["edges"] == [{"source": "drafter", "target": "publisher", "kind": "handoff"}]


def legacy_graph_run(store: SQLiteStore) -> None:
    """Rewrite graph run ``g`` (interrupted at ``check``) as runs were stored before the log: one
    message row per completion (the interrupted one included), no ``log`` in the state."""
    from tether.durable.session import DurableSession, run_state_of

    stored = store.load("g")
    assert stored is not None
    with store.lease("g") as lease:
        rs = run_state_of(stored)
        state = rs.state["tether.graph"]
        del state["log"], state["spec"]
        session = DurableSession(store, "g", rs, stored=stored, lease=lease)
        rs.messages = [{"role": "user", "content": [{"text": json.dumps({"graph_node": "check", "execution": 1})}]}]
        session.sync()


def test_a_graph_run_stored_before_the_log_loads_and_resumes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    first = check_then_write(store)("go", run_id="g")
    legacy_graph_run(store)
    assert len(store.load("g").messages) == 1  # type: ignore[union-attr]
    done = check_then_write(store).resume("g", answers(first))
    assert done.status == "completed" and done.execution_order == ["check", "write"]
    stored = store.load("g")
    assert stored is not None and stored.messages == []  # the old rows are left behind
    assert [(e["node"], e["run_id"], e.get("done")) for e in stored.head["state"]["tether.graph"]["log"]] == [
        ("check", "g.check:1", 1),
        ("write", "g.write:1", 2),
    ]


def test_a_malformed_execution_log_is_refused_by_name(tmp_path: Path) -> None:
    graph = check_then_write()
    graph("go")
    snapshot = graph.take_snapshot()
    snapshot["state"]["log"] = [{"node": "nope", "n": 1, "status": "completed"}]
    with pytest.raises(SnapshotError, match="execution log entry 0 is malformed"):
        check_then_write().load_snapshot(snapshot)
    snapshot["state"]["log"] = "rows"
    with pytest.raises(SnapshotError, match="execution log must be a list"):
        check_then_write().load_snapshot(snapshot)
