"""``tether runs`` shows child runs under their parent; ``tether show`` links parent and children."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tether import Agent
from tether.models import ScriptedModel
from tether.models.scripted import tool_calls
from tether.multiagent import child_run_id

from .conftest import Outcome, store_of


def nested_run(home: Path) -> list[str]:
    """A finished durable run ``lead`` whose two agent-tool calls made two child runs; returns their ids."""
    child = Agent(model=ScriptedModel(["alpha found", "beta found"]), name="researcher")
    parent = Agent(
        model=ScriptedModel([tool_calls([("researcher", {"input": "a"}), ("researcher", {"input": "b"})]), "done"]),
        tools=[child],
        store=store_of(home),
    )
    assert str(parent("go", run_id="lead")) == "done"
    ids = [b["toolUse"]["toolUseId"] for b in parent.messages[1]["content"] if "toolUse" in b]
    return [child_run_id("lead", i) for i in ids]


def test_runs_lists_child_runs_indented_under_their_parent(home: Path, cli: Callable[..., Outcome]) -> None:
    children = nested_run(home)
    Agent(model=ScriptedModel(["hi"]), store=store_of(home))("hello", run_id="other")
    outcome = cli("runs")
    assert outcome.code == 0
    ids = [line.split("│")[1].strip() for line in outcome.out.splitlines() if line.startswith("│")]
    lead = ids.index("lead")
    assert sorted(ids[lead + 1 : lead + 3]) == sorted(f"└ {c}" for c in children)  # right under it, indented
    assert "other" in ids and "└ other" not in ids


def test_show_links_children_and_names_the_parent(home: Path, cli: Callable[..., Outcome]) -> None:
    children = nested_run(home)
    out = cli("show", "lead").out
    assert "child runs (2):" in out
    assert all("tool researcher" in out and f"-> run {child}" in out for child in children)  # the timeline names them
    for child in children:
        assert f"`tether show {child}`" in out
    child_out = cli("show", children[0]).out
    assert "nested in: lead (`tether show lead`)" in child_out
    assert "child runs" not in child_out


def test_show_of_a_graph_run_prints_its_stop_reason_and_node_executions(home: Path, cli: Callable[..., Outcome]) -> None:
    from tests.multiagent.test_graph_executions import answers, check_then_write

    graph = check_then_write(store_of(home))
    first = graph("go", run_id="g")
    out = cli("show", "g").out
    assert "interrupted (interrupt)" in out and "(None)" not in out
    assert "graph node executions (1):" in out
    assert "check execution 1  interrupted" in out and "`tether show g.check:1`" in out
    assert "graph_node" not in out  # no internal rows shown as messages
    graph.resume("g", answers(first))
    out = cli("show", "g").out
    assert "finished (completed)" in out
    assert "#1 check execution 1  completed  30 tokens  `tether show g.check:1`" in out
    assert "#2 write execution 1  completed  15 tokens  `tether show g.write:1`" in out
    assert "cycles 3  tokens 45" in out
