"""Graph factories of the Temporal graph tests (``test_graph.py``, ``record_histories.py --corpus graph``).

The node agents' models are stateful scripts that answer from their prompt, so a local graph
built from the same registry gives the reference result; model calls, tool starts and callable
node runs are logged to the side-effect file named in the config (``log``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.models.scripted import tool_call
from tether.multiagent import Graph, GraphBuilder, GraphState
from tether.temporal import AgentRegistry
from tether.types import Message

from .agents import log, publish_tool, published_answer, relay_builder

registry = AgentRegistry()


def _prompt(messages: list[Message]) -> str:
    return str(messages[0]["content"][0]["text"])


def _node(config: dict[str, Any], name: str, answer: Any, *rest: Any, tools: list[Any] | None = None) -> Agent:
    """An agent whose first model call is logged and answers ``answer(prompt)`` (or ``answer``)."""

    def first(messages: list[Message]) -> Any:
        log(config, f"{name} model 0")
        return answer(_prompt(messages)) if callable(answer) else answer

    return Agent(model=ScriptedModel([first, *rest], stateful=True), name=name, tools=tools or [])


def _tally(config: dict[str, Any]) -> Any:
    def tally(prompt: Any) -> str:
        log(config, "tally")
        return f"tally of {len(str(prompt))} chars"

    return tally


@registry.register_graph("review")
def _review(config: dict[str, Any]) -> Graph:
    """``plan`` fans out to ``facts`` (agent) and ``tally`` (callable), which join in ``writer``;
    ``plan -> urgent`` is taken only when the plan says "urgent" (it does not)."""
    builder = GraphBuilder()
    builder.add_node(_node(config, "plan", lambda p: "plan: " + p.splitlines()[0]), "plan")
    builder.add_node(_node(config, "facts", lambda p: f"facts ({len(p)} chars of input)"), "facts")
    builder.add_node(_tally(config), "tally")
    builder.add_node(_node(config, "writer", lambda p: "report: " + " | ".join(line for line in p.splitlines() if line)), "writer")
    builder.add_node(_node(config, "urgent", "escalated"), "urgent")
    builder.add_edge("plan", "facts")
    builder.add_edge("plan", "tally")
    builder.add_edge("plan", "urgent", condition=lambda state: "urgent" in state.results["plan"].text)
    builder.add_edge("facts", "writer")
    builder.add_edge("tally", "writer")
    return builder.build()


@registry.register_graph("loop")
def _loop(config: dict[str, Any]) -> Graph:
    """``draft`` and ``check`` alternate until ``check`` has run twice; the limit stops it first
    when ``config["max"]`` is small."""

    def again(state: GraphState) -> bool:
        return state.executions("check") < 2

    builder = GraphBuilder()
    builder.add_node(_node(config, "draft", lambda p: f"draft of {len(p)}"), "draft")
    builder.add_node(_node(config, "check", "checked"), "check")
    builder.add_edge("draft", "check")
    builder.add_edge("check", "draft", condition=again)
    builder.set_entry_point("draft")
    builder.set_max_node_executions(int(config.get("max", 10)))
    return builder.build()


@registry.register_graph("approval")
def _approval(config: dict[str, Any]) -> Graph:
    """``plan`` fans out to ``publish`` (its tool asks a human) and ``notes``."""
    published = published_answer(config, "publish model 1")
    publish = _node(config, "publish", tool_call("publish", {"title": "tides"}), published, tools=[publish_tool(config)])
    builder = GraphBuilder()
    builder.add_node(_node(config, "plan", "plan: tides"), "plan")
    builder.add_node(publish, "publish")
    builder.add_node(_node(config, "notes", "notes taken"), "notes")
    builder.add_edge("plan", "publish")
    builder.add_edge("plan", "notes")
    return builder.build()


@registry.register_graph("outer")
def _outer(config: dict[str, Any]) -> Graph:
    """``intro`` then ``inner``, a nested graph (``review``'s shape without the join)."""
    inner = GraphBuilder()
    inner.add_node(_node(config, "left", lambda p: f"left saw {len(p)}"), "left")
    inner.add_node(_node(config, "right", "right done"), "right")
    inner.add_edge("left", "right")
    builder = GraphBuilder()
    builder.add_node(_node(config, "intro", "intro done"), "intro")
    builder.add_node(inner.build(), "inner")
    builder.add_edge("intro", "inner")
    return builder.build()


@registry.register_graph("broken")
def _broken(config: dict[str, Any]) -> Graph:
    builder = GraphBuilder()
    builder.add_node(_node(config, "first", "ok"), "first")
    builder.add_node(Agent(model=ScriptedModel([], stateful=True), name="second"), "second")  # no answer: the model call fails
    builder.add_edge("first", "second")
    return builder.build()


@registry.register_graph("relay")
def _relay(config: dict[str, Any]) -> Graph:
    """``scout`` then ``builder``, whose execution calls a fast tool, then a slow one
    (``config["sleep"]`` s; it writes ``config["started_marker"]`` when it starts), then answers."""

    graph = GraphBuilder()
    graph.add_node(_node(config, "scout", "scouted"), "scout")
    graph.add_node(relay_builder(config), "builder")
    graph.add_edge("scout", "builder")
    return graph.build()


@registry.register_graph("two_approvals")
def _two_approvals(config: dict[str, Any]) -> Graph:
    """``plan`` fans out to ``left`` and ``right``, each of whose tool asks a human."""

    def asking(name: str) -> Agent:
        @tool(name="ship")
        def ship(what: str, context: ToolContext) -> str:
            log(config, f"ask {what}")
            verdict = context.interrupt("approve", {"what": what})
            log(config, f"ship {what} {verdict}")
            return f"shipped {what} ({verdict})"

        def shipped(messages: list[Message]) -> str:
            return str(messages[-1]["content"][0]["toolResult"]["content"][0]["text"])

        return _node(config, name, tool_call("ship", {"what": name}, tool_use_id=f"ship-{name}"), shipped, tools=[ship])

    builder = GraphBuilder()
    builder.add_node(_node(config, "plan", "plan: ship both"), "plan")
    builder.add_node(asking("left"), "left")
    builder.add_node(asking("right"), "right")
    builder.add_edge("plan", "left")
    builder.add_edge("plan", "right")
    return builder.build()


@registry.register_graph("outer_approval")
def _outer_approval(config: dict[str, Any]) -> Graph:
    """``intro`` then ``inner``, a nested ``approval`` graph (its publish node asks a human)."""
    builder = GraphBuilder()
    builder.add_node(_node(config, "intro", "intro done"), "intro")
    builder.add_node(_approval(config), "inner")
    builder.add_edge("intro", "inner")
    return builder.build()


@registry.register_graph("late_branch")
def _late_branch(config: dict[str, Any]) -> Graph:
    """``ask`` (its tool asks a human) runs beside ``slow`` (a callable that finishes only once
    ``ask`` has asked), whose successor ``after`` must still run before the graph waits."""
    marker = Path(config["marker"])

    @tool
    def approve(context: ToolContext) -> str:
        """Ask a human."""
        marker.write_text("asked")
        return str(context.interrupt("approval", "ok?"))

    async def slow(prompt: Any) -> str:
        while not marker.exists():
            await asyncio.sleep(0.02)
        log(config, "slow")
        return "slow done"

    builder = GraphBuilder()
    builder.add_node(_node(config, "ask", tool_call("approve", {}), "asked", tools=[approve]), "ask")
    builder.add_node(slow, "slow")
    builder.add_node(_node(config, "after", "after done"), "after")
    builder.add_edge("slow", "after")
    return builder.build()
