"""Compensating a graph or swarm run (tether.multiagent.compensation): each node's (member's)
nested run unwinds with its agent's compensations, the latest started first, each undo once and
a recorded step of the nested run that made the effect; the graph (swarm) run records the
unwinding of each nested run as one undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ToolContext, Undo, tool
from tether.durable import SQLiteStore
from tether.durable.ids import child_run_id
from tether.models import ScriptedModel, tool_call
from tether.multiagent import GraphBuilder, Swarm


def booking_tools(undone: list[str]) -> list[Any]:
    def undo(item: Undo) -> None:
        undone.append(item.undo_key)

    @tool(compensate=undo)
    def book(what: str, context: ToolContext) -> str:
        """Book something."""
        return f"booked {what}"

    return [book]


def booker(name: str, what: str, undone: list[str], *after: Any) -> Agent:
    script = [tool_call("book", {"what": what}, tool_use_id=f"{name}-book"), *after, f"{name} booked"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=booking_tools(undone), name=name, description=f"the {name}")


def test_a_graph_run_unwinds_its_nodes_nested_runs_latest_first(tmp_path: Path) -> None:
    undone: list[str] = []
    builder = GraphBuilder()
    builder.add_node(booker("flights", "a flight", undone), "flights")
    builder.add_node(booker("hotels", "a hotel", undone), "hotels")
    builder.add_node(lambda prompt: "summed up", "summary")  # a callable node: no nested run, nothing to undo
    builder.add_edge("flights", "hotels")
    builder.add_edge("hotels", "summary")
    store = SQLiteStore(tmp_path / "runs.db")
    graph = builder.build(store=store)
    assert graph("plan a trip", run_id="g1").status == "completed"
    flights, hotels = child_run_id("g1", "flights:1"), child_run_id("g1", "hotels:1")

    report = graph.compensate("g1")
    assert undone == [f"{hotels}/hotels-book/undo", f"{flights}/flights-book/undo"]
    assert (report.status, report.trigger) == ("compensated", "requested")
    assert [(u.tool_use_id, u.run_id, u.outcome) for u in report.undos] == [
        ("hotels:1", hotels, "undone"),
        ("flights:1", flights, "undone"),
    ]
    statuses = {run.run_id: run.status for run in store.list_runs()}
    assert statuses == {"g1": "compensated", flights: "compensated", hotels: "compensated"}
    assert [s.position for s in store.history(hotels)][-4:] == ["turn_end", "unwind", "undo", "unwound"]
    assert graph.compensate("g1") == report  # again: the stored report, nothing undone twice
    assert len(undone) == 2


def test_a_swarm_run_unwinds_its_members_turns_latest_first(tmp_path: Path) -> None:
    undone: list[str] = []
    scout = booker("scout", "a flight", undone, tool_call("handoff_to_agent", {"agent_name": "closer", "message": "book the rest"}))
    closer = booker("closer", "a hotel", undone)
    store = SQLiteStore(tmp_path / "runs.db")
    swarm = Swarm([scout, closer], store=store)
    assert swarm("plan a trip", run_id="s1").status == "completed"
    report = swarm.compensate("s1")
    assert [u.tool for u in report.undos] == ["closer", "scout"]  # the member turns, latest first
    assert all(u.run_id == child_run_id("s1", u.tool_use_id) for u in report.undos)
    assert undone == [f"{u.run_id}/{u.tool}-book/undo" for u in report.undos]
    assert {run.status for run in store.list_runs()} == {"compensated"}


def test_an_unknown_graph_run_is_refused(tmp_path: Path) -> None:
    from tether.errors import RunNotFoundError

    graph = GraphBuilder()
    graph.add_node(booker("flights", "a flight", []), "flights")
    built = graph.build(store=SQLiteStore(tmp_path / "runs.db"))
    with pytest.raises(RunNotFoundError, match="nothing to compensate"):
        built.compensate("nope")
