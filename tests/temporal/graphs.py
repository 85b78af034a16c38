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


def _graph(nodes: dict[str, Any], *edges: tuple[str, str]) -> Graph:
    """A graph of ``nodes`` (added by id, in this order) and the unconditional ``edges``."""
    builder = GraphBuilder()
    for node_id, node in nodes.items():
        builder.add_node(node, node_id)
    for source, target in edges:
        builder.add_edge(source, target)
    return builder.build()


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
    plan, notes = _node(config, "plan", "plan: tides"), _node(config, "notes", "notes taken")
    return _graph({"plan": plan, "publish": publish, "notes": notes}, ("plan", "publish"), ("plan", "notes"))


@registry.register_graph("outer")
def _outer(config: dict[str, Any]) -> Graph:
    """``intro`` then ``inner``, a nested graph (``review``'s shape without the join)."""
    left, right = _node(config, "left", lambda p: f"left saw {len(p)}"), _node(config, "right", "right done")
    inner = _graph({"left": left, "right": right}, ("left", "right"))
    return _graph({"intro": _node(config, "intro", "intro done"), "inner": inner}, ("intro", "inner"))


@registry.register_graph("broken")
def _broken(config: dict[str, Any]) -> Graph:
    second = Agent(model=ScriptedModel([], stateful=True), name="second")  # no answer: the model call fails
    return _graph({"first": _node(config, "first", "ok"), "second": second}, ("first", "second"))


@registry.register_graph("relay")
def _relay(config: dict[str, Any]) -> Graph:
    """``scout`` then ``builder``, whose execution calls a fast tool, then a slow one
    (``config["sleep"]`` s; it writes ``config["started_marker"]`` when it starts), then answers."""
    return _graph({"scout": _node(config, "scout", "scouted"), "builder": relay_builder(config)}, ("scout", "builder"))


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

    nodes = {"plan": _node(config, "plan", "plan: ship both"), "left": asking("left"), "right": asking("right")}
    return _graph(nodes, ("plan", "left"), ("plan", "right"))


@registry.register_graph("outer_approval")
def _outer_approval(config: dict[str, Any]) -> Graph:
    """``intro`` then ``inner``, a nested ``approval`` graph (its publish node asks a human)."""
    return _graph({"intro": _node(config, "intro", "intro done"), "inner": _approval(config)}, ("intro", "inner"))


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

    ask = _node(config, "ask", tool_call("approve", {}), "asked", tools=[approve])
    return _graph({"ask": ask, "slow": slow, "after": _node(config, "after", "after done")}, ("slow", "after"))
