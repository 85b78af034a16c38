"""A Tether graph or swarm run state as Strands' ``serialize_state`` JSON, and back.

Out (:func:`graph_payload`, :func:`swarm_payload`): Strands' fields, which a real Strands Graph
or Swarm loads and continues (``next_nodes_to_execute`` are the executions in flight, which
Tether would restart too), plus ``tether_state``: Tether's own run state, which Strands
ignores and Tether reads back losslessly (paused interrupted agents, partially satisfied
edges, the execution log).

In (:func:`graph_run`, :func:`swarm_run`): a payload is validated in full before anything
changes, every problem a :class:`~tether.errors.SnapshotError` naming the field. As in
Strands, a payload with no ``next_nodes_to_execute`` (a finished run) means "start afresh"
(None). Otherwise Strands' fields become a Tether run state whose frontier nodes are started
again with their inputs built from the completed nodes, as Strands resumes them.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ...errors import ResultError, SnapshotError
from ...multiagent import schedule
from ...multiagent.state import GraphRunState
from ...multiagent.swarm_turns import new_state
from ...result import AgentResult
from ._results import node_results, totals
from ._strands_text import shared_context
from .base import NodeResult, Status

if TYPE_CHECKING:
    from ...multiagent import Graph as TetherGraph
    from ...multiagent import Swarm as TetherSwarm

WHERE = "snapshot.data.state"
TETHER_KEY = "tether_state"
"""Where a Tether-written payload keeps Tether's own run state (Strands ignores the key)."""
_EMPTY_INTERRUPTS = {"interrupt_state": {"interrupts": {}, "context": {}, "activated": False}}


def _common(run: GraphRunState | None, orchestrator_id: str, kind: str) -> dict[str, Any]:
    """The fields graph and swarm payloads share."""
    if run is None:
        return {
            "type": kind,
            "id": orchestrator_id,
            "status": "pending",
            "node_results": {},
            "next_nodes_to_execute": [],
            "current_task": "",
            "accumulated_usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            "accumulated_metrics": {"latencyMs": 0},
            "execution_time": 0,
            "_internal_state": copy.deepcopy(_EMPTY_INTERRUPTS),
        }
    data = run.flush()
    results = node_results({n: run.node_result(n) for n in data["nodes"]}, data.get("error"))
    usage, metrics = totals(results)
    return {
        "type": kind,
        "id": orchestrator_id,
        "status": data["status"],
        "node_results": {n: r.to_dict() for n, r in results.items()},
        "current_task": copy.deepcopy(data["task"]),
        "accumulated_usage": usage,
        "accumulated_metrics": metrics,
        "execution_time": 0,
        "_internal_state": copy.deepcopy(_EMPTY_INTERRUPTS),
        TETHER_KEY: {"state": copy.deepcopy(data), "execution_order": list(run.order)},
    }


def graph_payload(run: GraphRunState | None, orchestrator_id: str) -> dict[str, Any]:
    """Strands' ``Graph.serialize_state`` JSON of a Tether graph run (None: nothing ran)."""
    payload = _common(run, orchestrator_id, "graph")
    if run is None:
        payload.update(completed_nodes=[], failed_nodes=[], interrupted_nodes=[], execution_order=[], execution_count=0)
        return payload
    data = run.data
    nodes = data["nodes"]
    frontier: list[str] = []
    if data["status"] in ("executing", "interrupted", "failed"):
        frontier = [*data["running"], *(n for n in data["queued"] if n not in data["running"])]
    payload.update(
        completed_nodes=[n for n, e in nodes.items() if e["status"] == "completed"],
        failed_nodes=[n for n, e in nodes.items() if e["status"] == "failed"],
        interrupted_nodes=[n for n, e in nodes.items() if e["status"] == "interrupted"],
        next_nodes_to_execute=frontier,
        execution_order=list(run.order),
        execution_count=len(run.order),
    )
    return payload


def swarm_payload(run: GraphRunState | None, orchestrator_id: str, entry: str) -> dict[str, Any]:
    """Strands' ``Swarm.serialize_state`` JSON of a Tether swarm run (None: nothing ran).

    Tether's shared context is one object; Strands keys it by the member that added it, so it
    is written per member as :func:`._strands_text.shared_context` finds it.
    """
    payload = _common(run, orchestrator_id, "swarm")
    if run is None:
        payload.update(node_history=[], context={"shared_context": {}, "handoff_node": None, "handoff_message": None})
        return payload
    data = run.data
    frontier: list[str] = []
    if data["status"] in ("executing", "interrupted"):
        running = data.get("running")
        frontier = [running["member"] if isinstance(running, dict) else data["current"]]
    payload.update(
        node_history=list(run.order),
        next_nodes_to_execute=frontier,
        context={
            "shared_context": shared_context(run, entry),
            "handoff_node": None,
            "handoff_message": data.get("message"),
        },
    )
    return payload


# -- in ------------------------------------------------------------------------------------------


def _ids(payload: dict[str, Any], key: str, known: list[str]) -> list[str]:
    """``payload[key]``: a list of this orchestrator's node ids (missing: empty)."""
    value = payload.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise SnapshotError(f"{WHERE}.{key} must be a list of node ids, got {value!r:.80}")
    unknown = sorted({n for n in value if n not in known})
    if unknown:
        raise SnapshotError(f"{WHERE}.{key} names nodes this orchestrator does not have: {unknown} (nodes: {known})")
    return list(value)


def _status(payload: dict[str, Any]) -> str:
    status = payload.get("status")
    try:
        return Status(status).value
    except ValueError:
        raise SnapshotError(f"{WHERE}.status must be one of {[s.value for s in Status]}, got {status!r:.40}") from None


def _results(payload: dict[str, Any], known: list[str]) -> dict[str, NodeResult]:
    raw = payload.get("node_results") or {}
    if not isinstance(raw, dict):
        raise SnapshotError(f"{WHERE}.node_results must be an object")
    _ids({"node_results": list(raw)}, "node_results", known)
    out: dict[str, NodeResult] = {}
    for node_id, entry in raw.items():
        try:
            out[node_id] = NodeResult.from_dict(entry)
        except (ResultError, ValueError, TypeError) as exc:
            raise SnapshotError(f"{WHERE}.node_results.{node_id}: {exc}") from None
    return out


def _task(payload: dict[str, Any]) -> Any:
    task = payload.get("current_task", "")
    if isinstance(task, str) or (isinstance(task, list) and all(isinstance(b, dict) for b in task)):
        return copy.deepcopy(task)
    raise SnapshotError(f"{WHERE}.current_task must be a string or a list of content blocks")


def _check_type(payload: Any, kind: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise SnapshotError(f"{WHERE} must be an object, got {type(payload).__name__}")
    if payload.get("type", kind) != kind:
        raise SnapshotError(f"{WHERE}.type is {payload.get('type')!r:.40}: not a {kind} state")
    return payload


def _tether(payload: dict[str, Any], restore: Any) -> GraphRunState | None:
    """The Tether run state a Tether-written payload carries (None: it carries none)."""
    own = payload.get(TETHER_KEY)
    if own is None:
        return None
    if not isinstance(own, dict):
        raise SnapshotError(f"{WHERE}.{TETHER_KEY} must be an object")
    run: GraphRunState = restore(own.get("state"), own.get("execution_order"), f"snapshot ({WHERE}.{TETHER_KEY})")
    return run


def _value(result: NodeResult, kind: str) -> AgentResult | str:
    """A Strands node result as the value a Tether node of ``kind`` holds."""
    if isinstance(result.result, AgentResult) and kind == "agent":
        return result.result
    return str(result.result)


def graph_run(payload: Any, graph: TetherGraph) -> GraphRunState | None:
    """The Tether run state of a Strands (or Tether) graph payload; None: start afresh.

    Raises:
        SnapshotError: Naming the field that is malformed or names nodes the graph lacks.
    """
    payload = _check_type(payload, "graph")
    known = list(graph.nodes)
    status = _status(payload)
    completed = _ids(payload, "completed_nodes", known)
    failed = _ids(payload, "failed_nodes", known)
    _ids(payload, "interrupted_nodes", known)
    order = _ids(payload, "execution_order", known)
    frontier = _ids(payload, "next_nodes_to_execute", known)
    results = _results(payload, known)
    task = _task(payload)
    own = _tether(payload, lambda data, order, where: GraphRunState.restore(data, order, known, f"graph {where}"))
    if not frontier:
        return None
    if own is not None:
        return own
    if status == "interrupted":
        raise SnapshotError(f"{WHERE}.status: an interrupted Strands graph cannot be continued on Tether (answer it in Strands first)")
    run = GraphRunState.new(task, known)
    data = run.data
    data["status"] = "executing"
    for node_id in known:
        entry = data["nodes"][node_id]
        entry["executions"] = order.count(node_id)
        if node_id in failed:
            entry["status"] = "failed"
        elif node_id in completed:
            entry["status"] = "completed"
        result = results.get(node_id)
        if result is not None and not isinstance(result.result, Exception):
            run.set_result(node_id, _value(result, graph.spec.kinds[node_id]))
    data["executions"] = sum(e["executions"] for e in data["nodes"].values())
    run.order = list(order)
    done = set(completed)
    starts: list[str] = []
    for node_id in frontier:
        data["inputs"][node_id] = [s for s in graph.spec.sources(node_id) if s in done]
        sources = schedule.input_sources(graph.spec, data, node_id)
        prompt = schedule.compose_input(task, [(s, run.node_result(s).text) for s in sources])
        schedule.begin(graph.spec, data, node_id, prompt, starts)
    run.flush()
    return run


def swarm_run(payload: Any, swarm: TetherSwarm) -> GraphRunState | None:
    """The Tether run state of a Strands (or Tether) swarm payload; None: start afresh.

    Raises:
        SnapshotError: Naming the field that is malformed or names members the swarm lacks.
    """
    payload = _check_type(payload, "swarm")
    known = list(swarm.names)
    status = _status(payload)
    history = _ids(payload, "node_history", known)
    frontier = _ids(payload, "next_nodes_to_execute", known)
    results = _results(payload, known)
    task = _task(payload)
    context = payload.get("context") or {}
    if not isinstance(context, dict):
        raise SnapshotError(f"{WHERE}.context must be an object")
    shared = context.get("shared_context") or {}
    if not isinstance(shared, dict) or not all(isinstance(v, dict) for v in shared.values()):
        raise SnapshotError(f"{WHERE}.context.shared_context must map node ids to objects")
    message = context.get("handoff_message")
    if message is not None and not isinstance(message, str):
        raise SnapshotError(f"{WHERE}.context.handoff_message must be a string or null")
    handoff = _ids({"handoff_node": [context["handoff_node"]] if context.get("handoff_node") else []}, "handoff_node", known)
    own = _tether(payload, swarm._restore)
    if not frontier:
        return None
    if own is not None:
        return own
    if status == "interrupted":
        raise SnapshotError(f"{WHERE}.status: an interrupted Strands swarm cannot be continued on Tether (answer it in Strands first)")
    data = new_state(swarm.spec, task)
    for name in known:
        entry = data["nodes"][name]
        entry["executions"] = history.count(name)
        result = results.get(name)
        if result is not None:
            entry["status"] = "failed" if isinstance(result.result, Exception) else "completed"
    data["current"] = handoff[0] if handoff else frontier[0]
    data["message"] = message
    data["previous"] = history[-1] if history else None
    data["handoffs"] = data["turns"] = data["executions"] = len(history)
    data["context"] = {k: copy.deepcopy(v) for entries in shared.values() for k, v in entries.items()}
    run = GraphRunState(data, list(history))
    for name, result in results.items():
        if not isinstance(result.result, Exception):
            run.set_result(name, _value(result, "agent"))
    run.flush()
    return run


__all__ = ["TETHER_KEY", "graph_payload", "graph_run", "swarm_payload", "swarm_run"]
