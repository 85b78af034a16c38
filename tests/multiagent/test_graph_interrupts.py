"""Answering the interrupts of a graph's nodes: in memory, through a snapshot, and durably."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.errors import PromptError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Graph, GraphBuilder
from tether.tools.context import ToolContext


def approval_graph(log: list[str], store: Any = None, *, two: bool = False) -> Graph:
    """``ask`` (asks a human through a tool) → ``after``; with ``two``, a parallel ``ask2`` too."""

    @tool
    def approve(ctx: ToolContext, amount: int) -> str:
        """Ask a human to approve an amount.

        Args:
            amount: The amount.
        """
        answer = ctx.interrupt("approval", f"approve {amount}?")
        log.append(f"approved {amount}: {answer}")
        return f"human said {answer}"

    def asker(name: str, amount: int) -> Agent:
        model = ScriptedModel([tool_call("approve", {"amount": amount}), f"{name} done"], stateful=True)
        return Agent(model=model, tools=[approve], name=name)

    def after(prompt: Any) -> str:
        log.append("after ran")
        return "finished"

    builder = GraphBuilder()
    builder.add_node(asker("ask", 5), "ask")
    builder.add_node(after, "after")
    builder.add_edge("ask", "after")
    if two:
        builder.add_node(asker("ask2", 7), "ask2")
        builder.add_edge("ask2", "after")
    return builder.build(store=store)


def answers(result: Any, value: str) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i.id, "response": value}} for i in result.interrupts]


def test_an_interrupted_node_is_answered_through_the_graph_in_memory() -> None:
    log: list[str] = []
    graph = approval_graph(log)
    first = graph("refund")
    assert first.status == "interrupted"
    assert [i.name for i in first.interrupts] == ["approval"] and first.interrupts[0].reason == "approve 5?"
    done = graph(answers(first, "yes"))
    assert done.status == "completed" and str(done) == "finished"
    assert log == ["approved 5: yes", "after ran"]
    # the interrupted execution joins the order once, when the answered execution completes
    assert done.execution_order == ["ask", "after"] and done.execution_count == 2
    assert str(done.results["ask"]) == "ask done"


def test_the_graph_snapshot_carries_the_interrupted_node_to_a_fresh_graph() -> None:
    log: list[str] = []
    first = approval_graph(log)("refund")
    old = approval_graph(log)
    old("refund")
    snapshot = json.loads(json.dumps(old.take_snapshot()))
    fresh = approval_graph(log)
    fresh.load_snapshot(snapshot)
    done = fresh(answers(first, "ok"))
    assert done.status == "completed" and log == ["approved 5: ok", "after ran"]


def test_a_durable_graph_waits_across_processes_and_resumes_with_the_answer(tmp_path: Path) -> None:
    log: list[str] = []
    db = tmp_path / "runs.db"
    first = approval_graph(log, SQLiteStore(db))("refund", run_id="g")
    assert first.status == "interrupted"
    again = approval_graph(log, SQLiteStore(db)).resume("g")  # no answer: still waiting, nothing re-run
    assert again.status == "interrupted" and [i.id for i in again.interrupts] == [i.id for i in first.interrupts]
    assert log == []
    done = approval_graph(log, SQLiteStore(db)).resume("g", answers(first, "yes"))
    assert done.status == "completed" and str(done) == "finished"
    assert log == ["approved 5: yes", "after ran"]
    assert approval_graph(log, SQLiteStore(db)).resume("g").status == "completed"
    assert log == ["approved 5: yes", "after ran"]  # a finished graph run does nothing more


def test_two_parallel_interrupts_are_answered_one_at_a_time(tmp_path: Path) -> None:
    log: list[str] = []
    store = SQLiteStore(tmp_path / "runs.db")
    graph = approval_graph(log, store, two=True)
    first = graph("refund", run_id="g2")
    assert sorted(i.reason for i in first.interrupts) == ["approve 5?", "approve 7?"]
    by_reason = {i.reason: i.id for i in first.interrupts}
    half = graph(
        [{"interruptResponse": {"interruptId": by_reason["approve 7?"], "response": "fine"}}], run_id="g2"
    )  # the same call with answers continues the stored run
    assert half.status == "interrupted" and [i.reason for i in half.interrupts] == ["approve 5?"]
    assert log == ["approved 7: fine"]
    done = graph.resume("g2", [{"interruptResponse": {"interruptId": by_reason["approve 5?"], "response": "yes"}}])
    assert done.status == "completed"
    assert log == ["approved 7: fine", "approved 5: yes", "after ran"]


def test_an_answer_no_node_waits_on_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    log: list[str] = []
    store = SQLiteStore(tmp_path / "runs.db")
    graph = approval_graph(log, store)
    first = graph("refund", run_id="g3")
    with pytest.raises(PromptError, match="no interrupted node of this graph waits on interrupt 'nope'"):
        graph.resume("g3", [{"interruptResponse": {"interruptId": "nope", "response": "yes"}}])
    with pytest.raises(PromptError, match="interruptResponse blocks"):
        graph.resume("g3", [{"text": "not an answer"}])
    assert graph.resume("g3", answers(first, "yes")).status == "completed"
    assert log == ["approved 5: yes", "after ran"]


async def test_a_branch_that_finishes_after_another_node_stopped_on_an_interrupt_still_runs_its_successor() -> None:
    # ask || slow -> after: `ask` stops on an interrupt, and only then does `slow` finish. Its
    # successor runs in the same invocation (it used to be dropped: the answered run then
    # "completed" without it).
    @tool
    def approve(ctx: ToolContext) -> str:
        """Ask a human."""
        return str(ctx.interrupt("approval", "ok?"))

    released = asyncio.Event()

    async def slow(prompt: Any) -> str:
        await released.wait()
        return "slow done"

    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel([tool_call("approve", {}), "asked"]), tools=[approve], name="ask"), "ask")
    builder.add_node(slow, "slow")
    builder.add_node(Agent(model=ScriptedModel(["after done"]), name="after"), "after")
    builder.add_edge("slow", "after")
    graph = builder.build()
    seen: list[str] = []
    async for event in graph.stream_async("go"):
        if event["type"] == "node_result":
            seen.append(event["node_id"])
            if event["node_id"] == "ask":
                released.set()
        if event["type"] == "result":
            first = event["result"]
    assert seen == ["ask", "slow", "after"]
    assert first.status == "interrupted" and first.results["after"].text == "after done"
    [interrupt] = first.interrupts
    done = await graph.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert done.status == "completed" and done.execution_order == ["slow", "after", "ask"]
    assert done.results["ask"].text == "asked"
