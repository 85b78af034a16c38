"""What a graph decides between node executions, as pure functions over its JSON state.

A graph run's whole state is one JSON object (``data``, see
:class:`~tether.multiagent.state.GraphRunState`) and its execution order (``order``, a list
that only grows). The decisions a graph makes (which nodes start first, what a completed
execution makes ready, the execution limit, a node re-run queued behind its own execution,
each node's input) depend on nothing else once the outcomes of the completed node's edge
conditions are known, so they live here, with no I/O, no clock and no agent objects: the
local :class:`~tether.multiagent.Graph` and the Temporal ``GraphWorkflow`` drive the same
functions and so make the same decisions. Edge conditions are user code: the caller evaluates
them (in process, or in an activity on Temporal) and passes their outcomes in. A
:class:`GraphSpec` is the part of a graph these functions read, itself JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SnapshotError
from . import executions


@dataclass(frozen=True)
class SpecEdge:
    """An edge as the scheduler sees it.

    Attributes:
        source: The source node's id.
        target: The target node's id.
        conditional: Whether the edge has a condition (its outcome is passed in).
    """

    source: str
    target: str
    conditional: bool


@dataclass(frozen=True)
class GraphSpec:
    """What the scheduler needs to know about a graph (JSON: :meth:`to_dict`).

    Attributes:
        nodes: The node ids in the order they were added.
        kinds: Each node's kind (``agent``, ``graph`` or ``callable``), by id.
        edges: The edges in the order they were added.
        entry_points: The nodes that run first, on the task.
        max_node_executions: The most node executions of one run (None: no limit).
        join: When a node with several incoming edges starts: ``"all"`` (the default: once
            an edge from each of its sources was taken) or ``"all_but_self"`` (the same, except
            that the node's own self-loop edge is not waited for, and starts it alone: a
            self-loop next to other incoming edges re-runs the node, as in Strands).
    """

    nodes: tuple[str, ...]
    kinds: dict[str, str]
    edges: tuple[SpecEdge, ...]
    entry_points: tuple[str, ...]
    max_node_executions: int | None
    join: str = "all"
    _out: dict[str, list[SpecEdge]] = field(init=False, repr=False, compare=False)
    _in: dict[str, list[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        out: dict[str, list[SpecEdge]] = {n: [] for n in self.nodes}
        sources: dict[str, list[str]] = {n: [] for n in self.nodes}
        for e in self.edges:
            out[e.source].append(e)
            if e.source not in sources[e.target]:
                sources[e.target].append(e.source)
        object.__setattr__(self, "_out", out)
        object.__setattr__(self, "_in", sources)

    def outgoing(self, node_id: str) -> list[SpecEdge]:
        """The edges leaving ``node_id``, in the order they were added."""
        return self._out[node_id]

    def incoming(self, node_id: str) -> set[str]:
        """The sources of the edges into ``node_id``."""
        return set(self._in[node_id])

    def sources(self, node_id: str) -> list[str]:
        """The distinct sources of the edges into ``node_id``, in the order the edges were added."""
        return self._in[node_id]

    def conditional(self, node_id: str) -> bool:
        """Whether any edge leaving ``node_id`` has a condition."""
        return any(e.conditional for e in self.outgoing(node_id))

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON (what the ``tether.describe_graph`` activity returns)."""
        return {
            "nodes": list(self.nodes),
            "kinds": dict(self.kinds),
            "edges": [{"source": e.source, "target": e.target, "conditional": e.conditional} for e in self.edges],
            "entry_points": list(self.entry_points),
            "max_node_executions": self.max_node_executions,
            **({} if self.join == "all" else {"join": self.join}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraphSpec:
        """The inverse of :meth:`to_dict`."""
        limit = data.get("max_node_executions")
        return cls(
            tuple(data["nodes"]),
            dict(data["kinds"]),
            tuple(SpecEdge(str(e["source"]), str(e["target"]), bool(e["conditional"])) for e in data["edges"]),
            tuple(data["entry_points"]),
            None if limit is None else int(limit),
            str(data.get("join", "all")),
        )


def start(spec: GraphSpec, data: dict[str, Any]) -> list[str] | None:
    """Start (or continue) driving the run; returns the nodes to execute now: the entry points of
    a fresh run, else the executions in flight (``data["running"]``, interrupted ones included).

    Returns None when the run stopped earlier (a limit, a failure, an interrupt) with nothing in
    flight to retry: its outcome stands.
    """
    fresh = data["status"] == "pending"
    if not fresh and not data["running"] and data["status"] in ("failed", "interrupted"):
        return None
    data["status"] = "executing"
    data["error"] = None
    starts: list[str] = []
    if fresh:
        for node_id in spec.entry_points:
            begin(spec, data, node_id, data["task"], starts)
    else:
        starts = list(data["running"])
    return starts


def begin(spec: GraphSpec, data: dict[str, Any], node_id: str, prompt: Any, starts: list[str]) -> None:
    """Record the start of ``node_id``'s next execution on ``prompt`` (appended to ``starts``);
    the execution limit fails the run instead.

    Nothing starts once the run failed. A run that is ``interrupted`` (a node waits on answers)
    still starts the nodes its other branches make ready: they do not depend on the waiting
    node, and a run resumed later restarts only the executions in ``running``, so a node not
    started now would never run.
    """
    if data["status"] not in ("executing", "interrupted"):
        return
    limit = spec.max_node_executions
    if limit is not None and data["executions"] >= limit:
        data["status"] = "failed"
        data["error"] = f"max node executions ({limit}) reached: node {node_id!r} was not started"
        return
    entry = data["nodes"][node_id]
    entry["executions"] += 1
    entry["status"] = "executing"
    data["executions"] += 1
    data["inputs"].pop(node_id, None)
    data["running"][node_id] = {"n": entry["executions"], "input": prompt}
    executions.started(data, node_id, entry["executions"])
    starts.append(node_id)


def record(data: dict[str, Any], order: list[str], node_id: str, *, interrupted: bool) -> int:
    """Record that ``node_id``'s execution in flight completed (its result is set by the caller);
    returns its execution number.

    ``interrupted``: it stopped on interrupts; it stays in ``running`` (to be resumed with the
    answers, not restarted), the run becomes ``interrupted`` and the execution is not in the
    execution order yet (it joins it once, when the answered execution completes). Otherwise
    the caller follows its edges (:func:`follow`).
    """
    entry = data["nodes"][node_id]
    n = int(data["running"].pop(node_id)["n"])
    entry["status"] = "interrupted" if interrupted else "completed"
    executions.finished(data, order, node_id, n, entry["status"])
    if interrupted:
        data["running"][node_id] = {"n": n, "input": None}
        if data["status"] == "executing":
            data["status"] = "interrupted"
    return n


def follow(
    spec: GraphSpec, data: dict[str, Any], node_id: str, outcomes: list[bool], input_of: Callable[[str], Any], starts: list[str]
) -> None:
    """Take the edges of completed ``node_id`` and start what they make ready.

    Args:
        spec: The graph.
        data: The run's state.
        node_id: The node whose execution completed (:func:`record`).
        outcomes: One bool per edge of ``spec.outgoing(node_id)``: whether it is taken (true
            for an edge without a condition).
        input_of: The input of a node about to start (:func:`node_input` with the caller's
            node texts), called before its satisfied edges are consumed.
        starts: The nodes started here are appended to it.
    """
    edges = spec.outgoing(node_id)
    if len(outcomes) != len(edges):
        raise ValueError(f"node {node_id!r} has {len(edges)} outgoing edges, got {len(outcomes)} condition outcomes")
    for edge, taken in zip(edges, outcomes, strict=True):
        if not taken:
            continue
        inputs = data["inputs"].setdefault(edge.target, [])
        if node_id not in inputs:
            inputs.append(node_id)
        required = spec.incoming(edge.target)
        if spec.join == "all_but_self":
            required = set() if edge.source == edge.target else required - {edge.target}
        if set(inputs) >= required:
            if edge.target in data["running"] or (edge.target == node_id and node_id in data["queued"]):
                # running, or a self-loop of a node whose re-run is queued already: one re-run
                if edge.target not in data["queued"]:
                    data["queued"].append(edge.target)
            else:
                begin(spec, data, edge.target, input_of(edge.target), starts)
    if node_id in data["queued"]:
        data["queued"].remove(node_id)
        begin(spec, data, node_id, input_of(node_id), starts)


def input_sources(spec: GraphSpec, data: dict[str, Any], node_id: str) -> list[str]:
    """The sources whose satisfied edges start ``node_id``, in the order the edges were added
    (not the order the sources finished: the same input whichever parallel branch was first)."""
    satisfied = set(data["inputs"].get(node_id, []))
    return [s for s in spec.sources(node_id) if s in satisfied]


def compose_input(task: Any, answers: list[tuple[str, str]]) -> str:
    """A node's input: the task's text, then each source's answer (``(source, text)`` pairs)."""
    text = task if isinstance(task, str) else "\n".join(b.get("text", "") for b in task if isinstance(b, dict))
    parts = [f"From {source}:\n{answer}" for source, answer in answers]
    return f"Original task: {text}\n\nInputs from previous nodes:\n\n" + "\n\n".join(parts)


def node_failed(data: dict[str, Any], node_id: str, error: BaseException | str) -> None:
    """Record that ``node_id``'s execution raised ``error``: the node and the run fail (nothing
    new starts; executions in flight finish)."""
    data["nodes"][node_id]["status"] = "failed"
    running = data["running"].get(node_id)
    if running is not None:
        executions.finished(data, [], node_id, int(running["n"]), "failed")
    data["status"] = "failed"
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    data["error"] = f"node {node_id!r} failed: {text}"


def finish(data: dict[str, Any]) -> None:
    """End the drive: a run still executing (nothing in flight is left) completed."""
    if data["status"] == "executing":
        data["status"] = "completed"


def interrupt_owners(data: dict[str, Any], ids_of: Callable[[str], list[str]]) -> dict[str, str]:
    """Interrupt id -> the interrupted node waiting on it (``ids_of(node)``: its pending ids)."""
    owner: dict[str, str] = {}
    for node_id, entry in data["nodes"].items():
        if entry["status"] == "interrupted":
            owner.update(dict.fromkeys(ids_of(node_id), node_id))
    return owner


def check_spec_state(spec: GraphSpec, data: Any, order: Any, where: str) -> None:
    """Refuse a state that is not one of this graph's (its nodes).

    Raises:
        SnapshotError: Naming ``where`` and what is wrong.
    """
    known = set(spec.nodes)
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict) or set(data["nodes"]) != known:
        have = sorted(data["nodes"]) if isinstance(data, dict) and isinstance(data.get("nodes"), dict) else None
        raise SnapshotError(f"graph {where}: the state's nodes {have!r} are not this graph's nodes {sorted(known)!r}")
    if not isinstance(order, list) or not all(n in known for n in order):
        raise SnapshotError(f"graph {where}: the execution order names unknown nodes")


__all__ = [
    "GraphSpec",
    "SpecEdge",
    "begin",
    "check_spec_state",
    "compose_input",
    "finish",
    "follow",
    "input_sources",
    "interrupt_owners",
    "node_failed",
    "record",
    "start",
]
