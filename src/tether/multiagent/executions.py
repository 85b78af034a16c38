"""The execution log of a graph or swarm run: which node executed, in which order, as which run.

A graph (or swarm) run's state holds ``log``, one entry per node execution (swarm: member turn),
appended when the execution starts::

    {"node": "check", "n": 1, "status": "completed", "done": 1, "run_id": "g.check:1",
     "usage": {...}}

``n`` is the node's execution number, ``status`` one of the node statuses (``executing`` while
it runs, ``interrupted`` while it waits on answers), ``done`` its place in the execution order
(set when it completes, so an execution that stopped on an interrupt and was answered counts
once, where it finished), ``run_id`` the nested run that executed it (durable runs; a callable
node has none) and ``usage`` the figures of that nested run already added to the graph run's
metrics (so a completion recorded again after a crash adds only what is new: never twice).

The log is data of the run's head, written atomically with the graph state and its metrics.
Graph runs stored before the log existed kept one message row per completed execution
(``{"graph_node": ..., "execution": n}`` as a user text); :func:`from_legacy_rows` reads them.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any, cast

from ..durable.ids import child_run_id
from ..errors import SnapshotError, StateError
from ..metrics import add_figures, diff_metrics
from ..types import MetricsData
from .results import NODE_STATUSES

LEGACY_KEY = "graph_node"
"""The key of the message rows older graph and swarm runs logged their executions in."""
KINDS = {"tether.graph": "graph", "tether.swarm": "swarm"}
"""The head ``state`` key of each kind of multi-agent run."""


def started(data: dict[str, Any], node_id: str, n: int) -> dict[str, Any]:
    """Log the start of ``node_id``'s execution ``n``; returns its entry."""
    entry = {"node": node_id, "n": n, "status": "executing"}
    data.setdefault("log", []).append(entry)
    return entry


def entry_of(data: dict[str, Any], node_id: str, n: int) -> dict[str, Any]:
    """The entry of ``node_id``'s execution ``n`` (logged now if the run began before the log
    existed: a state restored from an older snapshot or store)."""
    for entry in reversed(data.get("log") or []):
        if entry["node"] == node_id and entry["n"] == n:
            return cast(dict[str, Any], entry)
    return started(data, node_id, n)


def finished(data: dict[str, Any], order: list[str], node_id: str, n: int, status: str) -> None:
    """Record how execution ``n`` of ``node_id`` ended: ``completed`` (it joins the execution
    order), ``interrupted`` (it waits on answers: not in the order until it completes) or
    ``failed``."""
    entry = entry_of(data, node_id, n)
    entry["status"] = status
    if status == "completed":
        order.append(node_id)
        entry["done"] = len(order)


def order_of(log: list[dict[str, Any]]) -> list[str]:
    """The execution order a log records: completed executions in the order they completed."""
    done = sorted((e for e in log if isinstance(e, dict) and type(e.get("done")) is int), key=lambda e: int(e["done"]))
    return [str(e["node"]) for e in done]


def check_log(log: Any, known: set[str], where: str) -> None:
    """Refuse a log that is not a list of well-formed entries of this graph's nodes.

    Raises:
        SnapshotError: Naming ``where`` and the entry.
    """
    if not isinstance(log, list):
        raise SnapshotError(f"{where}: the execution log must be a list")
    for index, entry in enumerate(log):
        ok = (
            isinstance(entry, dict)
            and entry.get("node") in known
            and type(entry.get("n")) is int
            and entry.get("status") in NODE_STATUSES
            and (entry.get("done") is None or type(entry["done"]) is int)
            and (entry.get("run_id") is None or isinstance(entry["run_id"], str))
            and (entry.get("usage") is None or isinstance(entry["usage"], dict))
        )
        if not ok:
            raise SnapshotError(f"{where}: execution log entry {index} is malformed: {entry!r:.120}")


def from_legacy_rows(messages: list[Any], data: dict[str, Any], run_id: str, child_of: Any) -> list[dict[str, Any]]:
    """The log of a run stored before the log existed, from its execution rows.

    Those runs logged every completion, an interrupted one included, so an execution answered
    later has two rows: it is kept once, where it completed; one still waiting is not completed.
    ``child_of(node, n)`` names the nested run of an execution (the id those runs used).

    Raises:
        StateError: A row that is not an execution row.
    """
    rows: list[tuple[str, int]] = []
    for index, message in enumerate(messages):
        try:
            item = json.loads(message["content"][0]["text"])
            rows.append((str(item[LEGACY_KEY]), int(item["execution"])))
        except (KeyError, IndexError, TypeError, ValueError):
            raise StateError(f"graph run {run_id!r}: execution log row {index} is not a graph log entry") from None
    running = data.get("running")
    if isinstance(running, dict) and "member" in running:  # a swarm: one turn in flight
        running = {running["member"]: running}
    waiting = {(node, int(r.get("n", 0))) for node, r in (running or {}).items() if isinstance(r, dict)}
    last = {row: index for index, row in enumerate(rows)}
    log: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        if last[row] != index or row in waiting:
            continue
        log.append({"node": row[0], "n": row[1], "status": "completed", "done": len(log) + 1, "run_id": child_of(*row)})
    for node, n in sorted(waiting):
        status = str(data["nodes"][node]["status"]) if node in data.get("nodes", {}) else "executing"
        log.append({"node": node, "n": n, "status": status, "run_id": child_of(node, n)})
    return log


def roll_up(metrics: MetricsData, entry: dict[str, Any], child: MetricsData | None) -> None:
    """Add to ``metrics`` what the nested run of ``entry`` used since it was last rolled up
    (``child``: that run's accumulated metrics), and remember it in the entry.

    The entry and the metrics are written in the same head, so a completion recorded again
    after a crash or a resume adds nothing twice.
    """
    if child is None:
        return
    before = cast(MetricsData, entry.get("usage") or {})
    add_figures(metrics, diff_metrics(child, before))
    entry["usage"] = json.loads(json.dumps(child))


def record_of(run_id: str, head: dict[str, Any], messages: list[Any]) -> dict[str, Any] | None:
    """What a stored graph or swarm run did, as the inspector and ``tether show`` present it;
    None for any other run. Read from stored data, so nothing here trusts its shape: a
    malformed value is left out, never raised on.

    Returns:
        ``{"kind": "graph" | "swarm", "task" (its text), "status", "error", "nodes": [{"id", "status",
        "executions"}], "edges": [{"source", "target", "kind"}], "entry_points", "log":
        [{"node", "n", "status", "done", "run_id", "total_tokens"}]}``. A graph's edges are
        those of the graph that last ran it (``kind`` ``edge`` or ``conditional``); a swarm's
        are the handoffs its turns made (``kind`` ``handoff``).
    """
    state = head.get("state")
    found = [(kind, state[key]) for key, kind in KINDS.items() if isinstance(state, dict) and isinstance(state.get(key), dict)]
    if not found or not isinstance(found[0][1].get("nodes"), dict):
        return None
    kind, data = found[0]
    raw = data.get("log")
    if not isinstance(raw, list):
        try:
            raw = from_legacy_rows(messages, data, run_id, lambda node, n: child_run_id(run_id, f"{node}:{n}"))
        except (StateError, KeyError, TypeError, ValueError, AttributeError):
            raw = []
    log = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("node"), str):
            continue
        figures = entry.get("usage")
        usage = figures.get("usage") if isinstance(figures, dict) else None
        tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        log.append(
            {
                "node": entry["node"],
                "n": entry["n"] if type(entry.get("n")) is int else None,
                "status": str(entry.get("status")),
                "done": entry["done"] if type(entry.get("done")) is int else None,
                "run_id": entry["run_id"] if isinstance(entry.get("run_id"), str) else None,
                "total_tokens": tokens if type(tokens) is int else None,
            }
        )
    nodes = [
        {"id": str(node), "status": str(e.get("status")), "executions": e.get("executions") if type(e.get("executions")) is int else 0}
        for node, e in data["nodes"].items()
        if isinstance(e, dict)
    ]
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    edges: list[dict[str, Any]] = []
    if kind == "graph":
        for edge in spec.get("edges") or []:
            if isinstance(edge, dict) and isinstance(edge.get("source"), str) and isinstance(edge.get("target"), str):
                edges.append(
                    {"source": edge["source"], "target": edge["target"], "kind": "conditional" if edge.get("conditional") else "edge"}
                )
        entry_points = [str(n) for n in spec.get("entry_points") or [] if isinstance(n, str)]
    else:
        turns = sorted((e for e in log if e["done"] is not None), key=lambda e: int(e["done"]))
        for before, after in pairwise(turns):
            edge = {"source": before["node"], "target": after["node"], "kind": "handoff"}
            if edge not in edges:
                edges.append(edge)
        entry = spec.get("entry")
        entry_points = [entry] if isinstance(entry, str) else [log[0]["node"]] if log else []
    task = data.get("task")
    if isinstance(task, list):
        task = "\n".join(str(b["text"]) for b in task if isinstance(b, dict) and isinstance(b.get("text"), str))
    return {
        "kind": kind,
        "task": task if isinstance(task, str) else "",
        "status": str(data.get("status")),
        "error": data.get("error") if isinstance(data.get("error"), str) else None,
        "nodes": nodes,
        "edges": edges,
        "entry_points": entry_points,
        "log": log,
    }


__all__ = [
    "KINDS",
    "LEGACY_KEY",
    "check_log",
    "entry_of",
    "finished",
    "from_legacy_rows",
    "order_of",
    "record_of",
    "roll_up",
    "started",
]
