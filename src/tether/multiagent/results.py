"""What multi-agent runs return: :class:`NodeResult`, :class:`GraphResult` and :class:`SwarmResult`.

The bottom of :mod:`tether.multiagent`: the run state (:mod:`.state`), the runnables
(:mod:`.base`, :mod:`.graph`, :mod:`.swarm`) and Temporal's graph and swarm workflows all read
these types, and this module imports none of them. A node result is stored as kind-tagged JSON
(:func:`encode_result`), so decoding never chooses code from stored data.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..errors import SnapshotError
from ..interrupts import Interrupt
from ..result import AgentResult

GRAPH_STATUSES = ("pending", "executing", "completed", "failed", "interrupted")
NODE_STATUSES = ("pending", "executing", "completed", "failed", "interrupted")


@dataclass
class NodeResult:
    """The latest result of one node.

    Attributes:
        node_id: The node.
        status: ``pending``, ``executing``, ``completed``, ``failed`` or ``interrupted``.
        result: What the node's last execution returned: an :class:`~tether.AgentResult`
            (agent node), a :class:`~tether.multiagent.GraphResult` (nested graph) or a string
            (callable node); ``None`` before its first completion.
        executions: How many times the node was started.
    """

    node_id: str
    status: str
    result: AgentResult | GraphResult | str | None
    executions: int

    @property
    def text(self) -> str:
        """The node's answer as text (empty before it completed)."""
        return "" if self.result is None else str(self.result)

    def __str__(self) -> str:
        return self.text


@dataclass
class GraphResult:
    """The outcome of a graph run.

    Attributes:
        status: ``completed``, ``failed`` or ``interrupted`` (a node's agent stopped on an
            interrupt).
        results: The latest result of each node that ran, by node id.
        execution_order: Node ids in the order their executions completed.
        execution_count: How many node executions were started.
        task: The task (JSON).
        run_id: The durable run id, or None.
        error: Why the graph failed, or None.
    """

    status: str
    results: dict[str, NodeResult]
    execution_order: list[str]
    execution_count: int
    task: Any
    run_id: str | None = None
    error: str | None = None

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts the graph waits on: those of its interrupted agent nodes (answer them
        with ``graph.resume(run_id, responses)``, or ``graph(responses)`` for a graph run kept
        in memory; a response names its interrupt's id)."""
        return [
            interrupt
            for r in self.results.values()
            if r.status == "interrupted" and isinstance(r.result, AgentResult)
            for interrupt in r.result.interrupts
        ]

    @property
    def completed_nodes(self) -> int:
        """How many nodes completed (at least once)."""
        return sum(1 for r in self.results.values() if r.status == "completed")

    @property
    def failed_nodes(self) -> int:
        """How many nodes failed."""
        return sum(1 for r in self.results.values() if r.status == "failed")

    def __str__(self) -> str:
        """The answer of the node that completed last (empty if none did)."""
        if not self.execution_order:
            return ""
        return self.results[self.execution_order[-1]].text

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON."""
        return {
            "status": self.status,
            "results": {
                n: {"status": r.status, "executions": r.executions, "result": None if r.result is None else encode_result(r.result)}
                for n, r in self.results.items()
            },
            "execution_order": list(self.execution_order),
            "execution_count": self.execution_count,
            "task": copy.deepcopy(self.task),
            "run_id": self.run_id,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Any) -> GraphResult:
        """The inverse of :meth:`to_dict` (raises SnapshotError on malformed data)."""
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise SnapshotError("a graph result must be an object with results")
        results = {}
        for n, r in data["results"].items():
            raw = r.get("result") if isinstance(r, dict) else None
            value = None if raw is None else decode_result(raw, f"graph result node {n!r}")
            results[n] = NodeResult(n, str(r.get("status")), value, int(r.get("executions") or 0))
        return cls(
            status=str(data.get("status")),
            results=results,
            execution_order=list(data.get("execution_order") or []),
            execution_count=int(data.get("execution_count") or 0),
            task=data.get("task"),
            run_id=data.get("run_id"),
            error=data.get("error"),
        )


class SwarmResult(GraphResult):
    """A swarm run's outcome: a :class:`GraphResult` whose ``execution_order`` is the member
    history (also ``node_history``) and whose ``str`` is the last member's answer.

    Attributes:
        status: ``completed``, ``failed`` (a limit, or a member raised) or ``interrupted``.
        results: The latest result of each member that ran, by name.
        execution_order: Members in the order their turns completed.
        execution_count: How many member turns were started.
        task: The task (JSON).
        run_id: The durable run id, or None.
        error: Why the swarm failed, or None.
        context: The shared context (JSON) the members built with their handoffs.
    """

    context: dict[str, Any]

    @property
    def node_history(self) -> list[str]:
        """Members in the order their turns completed."""
        return self.execution_order


def encode_result(result: AgentResult | GraphResult | str) -> dict[str, Any]:
    """A node result as JSON (kind-tagged, so decoding never chooses code from stored data)."""
    if isinstance(result, AgentResult):
        # Tether's full form (state, interrupts, metrics), also for a subclass whose to_dict writes less.
        return {"kind": "agent", "value": AgentResult.to_dict(result)}
    if isinstance(result, str):
        return {"kind": "text", "value": result}
    return {"kind": "graph", "value": result.to_dict()}


def decode_result(data: Any, where: str) -> AgentResult | GraphResult | str:
    """The inverse of :func:`encode_result`; ``where`` names the value in errors."""
    if not isinstance(data, dict) or data.get("kind") not in ("agent", "text", "graph"):
        raise SnapshotError(f"{where}: a node result must be an object with kind agent, text or graph, got {data!r:.80}")
    kind, value = data["kind"], data.get("value")
    if kind == "text":
        if not isinstance(value, str):
            raise SnapshotError(f"{where}: a text result must be a string")
        return value
    if kind == "agent":
        try:
            return AgentResult.from_dict(value)
        except Exception as exc:
            raise SnapshotError(f"{where}: {exc}") from None
    return GraphResult.from_dict(value)


__all__ = ["GRAPH_STATUSES", "NODE_STATUSES", "GraphResult", "NodeResult", "SwarmResult", "decode_result", "encode_result"]
