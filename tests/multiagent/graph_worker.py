"""A durable graph or swarm run in a child process, for the kill -9 torture tests.

Usage: ``python -m tests.multiagent.graph_worker graph|swarm DB RUN_ID DIR KILL_AT``. Every
kill point (before and after each tool's side effect, and in every edge condition, which runs
between a node's completion and the graph's write) appends to ``DIR/points``; the KILL_AT-th
point of this process SIGKILLs it (0: never). Tools append ``effect <idempotency key>`` to
``DIR/effects``; model calls append ``model <agent> <message count>`` to ``DIR/models``. The
worker resumes the run when the store has it, else starts it, and prints the result as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from tests._append import append
from tether import Agent, tool
from tether.durable import RunStore, SQLiteStore
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Graph, GraphBuilder, GraphState, Swarm
from tether.tools.context import ToolContext
from tether.types import Message

_lock = threading.Lock()


class Points:
    """Counts kill points in this process; the ``kill_at``-th one kills it."""

    def __init__(self, directory: Path, kill_at: int) -> None:
        self.directory = directory
        self.kill_at = kill_at
        self.count = 0

    def hit(self, label: str) -> None:
        with _lock:
            self.count += 1
            append(self.directory / "points", label)
            if self.count == self.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)


def effect_tool(points: Points) -> Any:
    @tool
    def effect(label: str, ctx: ToolContext) -> str:
        """Do one piece of work with a side effect."""
        points.hit(f"before {label}")
        append(points.directory / "effects", f"effect {ctx.idempotency_key}")
        points.hit(f"after {label}")
        return f"{label} done"

    return effect


def worker_agent(name: str, points: Points, script: list[Any]) -> Agent:
    """An agent running ``script``; each model call is logged."""

    def logged(item: Any) -> Any:
        def respond(messages: list[Message]) -> Any:
            append(points.directory / "models", f"model {name} {len(messages)}")
            return item(messages) if callable(item) else item

        return respond

    return Agent(model=ScriptedModel([logged(i) for i in script], stateful=True), tools=[effect_tool(points)], name=name)


def two_tools_then_answer(name: str) -> list[Any]:
    return [
        tool_call("effect", {"label": f"{name}-1"}, tool_use_id=f"{name}-t1"),
        tool_call("effect", {"label": f"{name}-2"}, tool_use_id=f"{name}-t2"),
        lambda messages: f"{name} finished after {len(messages)} messages",
    ]


def build_graph(store: RunStore, points: Points) -> Graph:
    """plan -> (research | review, in parallel) -> write."""

    def edge(label: str) -> Any:
        def condition(state: GraphState) -> bool:
            points.hit(f"edge {label}")
            return True

        return condition

    builder = GraphBuilder()
    for name in ("plan", "research", "review", "write"):
        builder.add_node(worker_agent(name, points, two_tools_then_answer(name)), name)
    for source, target in (("plan", "research"), ("plan", "review"), ("research", "write"), ("review", "write")):
        builder.add_edge(source, target, condition=edge(f"{source}->{target}"))
    return builder.build(store=store)


def build_swarm(store: RunStore, points: Points) -> Swarm:
    """scout hands off to fixer, which hands back to scout once, which finishes."""
    scout = worker_agent(
        "scout",
        points,
        [
            tool_call("effect", {"label": "scout-1"}, tool_use_id="scout-t1"),
            tool_call("handoff_to_agent", {"agent_name": "fixer", "message": "fix it", "context": {"found": 1}}, tool_use_id="scout-h"),
            "scout handed off",
        ],
    )
    fixer = worker_agent(
        "fixer",
        points,
        [
            tool_call("effect", {"label": "fixer-1"}, tool_use_id="fixer-t1"),
            tool_call("handoff_to_agent", {"agent_name": "closer", "message": "close it"}, tool_use_id="fixer-h"),
            "fixer handed off",
        ],
    )
    closer = worker_agent("closer", points, two_tools_then_answer("closer"))
    return Swarm([scout, fixer, closer], store=store)


def main(argv: list[str]) -> int:
    kind, db, run_id, directory, kill_at = argv
    points = Points(Path(directory), int(kill_at))
    store = SQLiteStore(db)
    runner: Graph | Swarm = build_graph(store, points) if kind == "graph" else build_swarm(store, points)
    if store.head(run_id) is not None:
        result = runner.resume(run_id)
    else:
        result = runner("do the work", run_id=run_id)
    print(json.dumps({"status": result.status, "order": result.execution_order, "answer": str(result)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
