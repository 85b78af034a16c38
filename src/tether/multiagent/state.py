"""The JSON state of a graph run and the read-only view conditions see.

A graph run's whole state is one JSON object (:class:`GraphRunState.data`) plus its execution
order (a list that only grows). Nothing else is needed to continue a run: a snapshot is the two
together, and a durable graph run stores the object in its head and the order as appended rows.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import SnapshotError
from ..result import AgentResult
from .executions import check_log
from .results import GRAPH_STATUSES, NODE_STATUSES, GraphResult, NodeResult, decode_result, encode_result

R = TypeVar("R", bound=GraphResult)

STATE_KEY = "tether.graph"
"""The key of the graph state in a durable graph run's ``state``."""
SNAPSHOT_TYPE = "tether.graph"
SNAPSHOT_VERSION = 1


@dataclass
class GraphRunState:
    """One graph run's state: ``data`` (a JSON object) and ``order`` (the execution order).

    ``data`` holds ``task`` (the task, JSON), ``status``, ``nodes`` (per node: ``status``,
    ``executions``, ``result`` as :func:`encode_result` JSON or null), ``inputs`` (per node, the
    sources whose edges are satisfied since it last started), ``running`` (nodes started and
    not finished: ``{"n": execution number, "input": prompt}``), ``queued`` (ready nodes
    waiting for their own previous execution to finish), ``executions`` (total starts),
    ``error``, ``paused`` (per interrupted node of a run kept in memory, the session snapshot
    of its agent as it stopped, so the answer resumes it; durable runs keep it in the node's run)
    and ``log`` (one entry per execution: node, number, status, nested run; see
    :mod:`tether.multiagent.executions`).
    """

    data: dict[str, Any]
    order: list[str] = field(default_factory=list)
    decoded: dict[str, Any] = field(default_factory=dict)
    """Node results as objects (a cache of ``data``'s JSON, or ahead of it until :meth:`flush`)."""
    stale: set[str] = field(default_factory=set)
    """Nodes whose result in ``data`` is older than ``decoded`` (encoded at the next flush)."""

    def set_result(self, node_id: str, result: AgentResult | GraphResult | str) -> None:
        """Record ``result`` as ``node_id``'s latest result; its JSON is encoded by :meth:`flush`
        (before a write or a snapshot), so a run nobody stores or snapshots never encodes it."""
        self.decoded[node_id] = result
        self.data["nodes"][node_id]["result"] = {"kind": "pending"}
        self.stale.add(node_id)

    def flush(self) -> dict[str, Any]:
        """Bring ``data`` up to date (encode the results set since the last flush); returns it."""
        for node_id in self.stale:
            self.data["nodes"][node_id]["result"] = encode_result(self.decoded[node_id])
        self.stale.clear()
        return self.data

    @classmethod
    def new(cls, task: Any, node_ids: list[str]) -> GraphRunState:
        """A fresh run of ``task`` over nodes ``node_ids``."""
        return cls(
            {
                "task": copy.deepcopy(task),
                "status": "pending",
                "nodes": {n: {"status": "pending", "executions": 0, "result": None} for n in node_ids},
                "inputs": {},
                "running": {},
                "queued": [],
                "executions": 0,
                "error": None,
                "log": [],
            }
        )

    @classmethod
    def restore(cls, data: Any, order: Any, node_ids: list[str], where: str) -> GraphRunState:
        """Validate stored or snapshot ``data``/``order`` against the graph's nodes."""
        if not isinstance(data, dict):
            raise SnapshotError(f"{where}: the graph state must be an object")
        for key in ("status", "nodes", "inputs", "running", "queued", "executions"):
            if key not in data:
                raise SnapshotError(f"{where}: the graph state has no {key!r}")
        if data["status"] not in GRAPH_STATUSES:
            raise SnapshotError(f"{where}: unknown graph status {data['status']!r}")
        known = set(node_ids)
        nodes = data["nodes"]
        if not isinstance(nodes, dict) or set(nodes) != known:
            have = sorted(nodes) if isinstance(nodes, dict) else nodes
            raise SnapshotError(f"{where}: the state's nodes {have!r} are not this graph's nodes {sorted(known)!r}")
        for node_id, entry in nodes.items():
            if not isinstance(entry, dict) or entry.get("status") not in NODE_STATUSES or not isinstance(entry.get("executions"), int):
                raise SnapshotError(f"{where}: node {node_id!r} has a malformed state")
            if entry.get("result") is not None:
                decode_result(entry["result"], f"{where}: node {node_id!r}")
        paused = data.get("paused", {})
        if not isinstance(paused, dict) or not all(isinstance(v, dict) for v in paused.values()):
            raise SnapshotError(f"{where}: 'paused' must map node ids to agent snapshots")
        referenced = set(data["inputs"]) | set(data["running"]) | set(data["queued"]) | set(paused)
        for sources in data["inputs"].values():
            referenced |= set(sources)
        unknown = referenced - known
        if unknown:
            raise SnapshotError(f"{where}: the state names unknown nodes {sorted(unknown)!r}")
        if not isinstance(order, list) or not all(isinstance(n, str) and n in known for n in order):
            raise SnapshotError(f"{where}: the execution order must be a list of this graph's node ids")
        if "log" in data:
            check_log(data["log"], known, where)
        return cls(copy.deepcopy(data), list(order))

    def node_result(self, node_id: str) -> NodeResult:
        """The :class:`NodeResult` of ``node_id`` (decoded from JSON)."""
        entry = self.data["nodes"][node_id]
        raw = entry["result"]
        result = self.decoded.get(node_id)
        if result is None and raw is not None:
            result = self.decoded[node_id] = decode_result(raw, f"node {node_id!r}")
        return NodeResult(node_id, entry["status"], result, entry["executions"])

    def outcome(self, kind: type[R], run_id: str | None) -> R:
        """The run's result as a ``kind`` (:class:`GraphResult` or :class:`SwarmResult`): the
        results of the nodes that ran, decoded."""
        data = self.data
        results = {n: self.node_result(n) for n, e in data["nodes"].items() if e["executions"] or e["result"] is not None}
        return kind(data["status"], results, list(self.order), data["executions"], copy.deepcopy(data["task"]), run_id, data["error"])


class GraphState:
    """What an edge condition sees: a read-only view of the running graph.

    It is built per condition call and reads the live state (nothing is copied until asked).

    Args:
        run: The graph run's state.
    """

    def __init__(self, run: GraphRunState) -> None:
        self._run = run

    @property
    def task(self) -> Any:
        """The graph's task (JSON)."""
        return self._run.data["task"]

    @property
    def status(self) -> str:
        """The graph's status."""
        return str(self._run.data["status"])

    @property
    def execution_order(self) -> list[str]:
        """Node ids in the order their executions completed (a copy)."""
        return list(self._run.order)

    @property
    def execution_count(self) -> int:
        """How many node executions were started."""
        return int(self._run.data["executions"])

    @property
    def results(self) -> dict[str, NodeResult]:
        """The latest result of every node that completed at least once."""
        return {n: self._run.node_result(n) for n, e in self._run.data["nodes"].items() if e["result"] is not None}

    @property
    def completed_nodes(self) -> set[str]:
        """Nodes whose latest execution completed."""
        return {n for n, e in self._run.data["nodes"].items() if e["status"] == "completed"}

    def executions(self, node_id: str) -> int:
        """How many times ``node_id`` was started."""
        return int(self._run.data["nodes"][node_id]["executions"])


__all__ = [
    "GRAPH_STATUSES",
    "NODE_STATUSES",
    "SNAPSHOT_TYPE",
    "SNAPSHOT_VERSION",
    "STATE_KEY",
    "GraphRunState",
    "GraphState",
    "NodeResult",
    "decode_result",
    "encode_result",
]
