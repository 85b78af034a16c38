"""Compensating a graph or swarm run: its nodes' (members') nested runs unwind, newest first.

A durable graph or swarm run holds no conversation of its own: each node execution (member
turn) is a nested run (``child_run_id(run_id, "<node>:<n>")``), named in the run's execution
log (:mod:`.executions`). Compensating the run (:meth:`~tether.multiagent.base.MultiAgentBase.compensate`)
unwinds each of those nested runs that exists (of this incarnation of the run), the latest
started first, with the node's agent's tools (:mod:`tether.durable.compensation`): the same
record, steps, statuses and kill-safety as an agent run whose agent tools nested runs. A
callable node had no nested run and is not undone; a nested graph node is not unwound yet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..durable.compensation import CompensationReport, compensate_run
from ..durable.incarnation import belongs
from ..durable.session import DurableSession
from ..durable.store import RunStore
from ..tools.base import Tool
from .nodes import AgentTemplate


class NodeTools(Tool):
    """A node (or member) as the compensation sees it: a "tool" whose call is the node's nested
    run, undone with the node's agent's tools."""

    nests_runs = True

    def __init__(self, template: AgentTemplate) -> None:
        self.template = template

    def nested_tools(self) -> Callable[[str], Tool | None]:
        return self.template.agent.tool_registry.get


async def compensate_multiagent(
    store: RunStore, run_id: str, templates: dict[str, AgentTemplate], state_key: str, trigger: str = "requested"
) -> CompensationReport:
    """Unwind graph or swarm run ``run_id`` (see the module docstring).

    Args:
        store: Where it lives.
        run_id: The run.
        templates: The agent of each node (member) by name.
        state_key: Where its head's state holds the run (``tether.graph``, ``tether.swarm``).
        trigger: Why.

    Raises:
        RunNotFoundError: No such run.
        RunLockedError: It runs now.
    """
    tools = {name: NodeTools(template) for name, template in templates.items()}

    def planner(session: DurableSession) -> list[dict[str, Any]]:
        data = session.run.state.get(state_key)
        log = data.get("log") if isinstance(data, dict) else None
        parent = store.head(run_id)
        plan = []
        for entry in reversed(log if isinstance(log, list) else []):
            child = entry.get("run_id") if isinstance(entry, dict) else None
            if not isinstance(child, str) or str(entry.get("node")) not in tools:
                continue  # a callable node: no nested run
            head = store.head(child)
            if head is not None and belongs(head, parent):
                key = f"{entry['node']}:{entry['n']}"
                plan.append({"toolUseId": key, "name": str(entry["node"]), "in_doubt": entry.get("status") == "executing", "run_id": child})
        return plan

    return await compensate_run(store, run_id, tools.get, trigger=trigger, planner=planner)


__all__ = ["NodeTools", "compensate_multiagent"]
