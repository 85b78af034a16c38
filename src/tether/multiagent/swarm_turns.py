"""What a swarm decides between member turns, as pure functions over its JSON state.

A swarm run's whole state is one JSON object (``data``: task, status, per-member entries,
current member, handoff message, shared context, counters, the turn in flight) and its member
history (``order``, a list that only grows). The decisions a swarm makes between turns (start a
turn and build its prompt, record a finished turn, apply a handoff and the limits) depend on
nothing else, so they live here, with no I/O, no clock and no agent objects: the local
:class:`~tether.multiagent.Swarm` and the Temporal ``SwarmWorkflow`` drive the same functions
and so make the same decisions. A :class:`SwarmSpec` is the part of a swarm they read (names,
descriptions, entry point, limits), itself JSON.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from ..errors import SnapshotError
from . import executions
from .results import NODE_STATUSES

HANDOFF_KEY = "tether.handoff"
"""Where a member turn's handoff (``{"to", "message", "context"}``) is kept in its agent state."""


@dataclass(frozen=True)
class SwarmSpec:
    """What the turn logic needs to know about a swarm (JSON: :meth:`to_dict`).

    Attributes:
        names: The members, in the order they were given.
        descriptions: Each member's description ("" for none), by name.
        entry: The member that gets the task first.
        max_handoffs: The most handoffs in one run.
        max_iterations: The most member turns in one run.
        window: How many recent turns the repetitive handoff check looks at (0: no check).
        min_unique: How many distinct members those turns must involve.
    """

    names: tuple[str, ...]
    descriptions: dict[str, str]
    entry: str
    max_handoffs: int
    max_iterations: int
    window: int
    min_unique: int

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON (what the ``tether.describe_swarm`` activity returns)."""
        return {
            "names": list(self.names),
            "descriptions": dict(self.descriptions),
            "entry": self.entry,
            "max_handoffs": self.max_handoffs,
            "max_iterations": self.max_iterations,
            "window": self.window,
            "min_unique": self.min_unique,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SwarmSpec:
        """The inverse of :meth:`to_dict`."""
        return cls(
            tuple(data["names"]),
            dict(data["descriptions"]),
            str(data["entry"]),
            int(data["max_handoffs"]),
            int(data["max_iterations"]),
            int(data["window"]),
            int(data["min_unique"]),
        )


def new_state(spec: SwarmSpec, task: Any) -> dict[str, Any]:
    """The state of a fresh run of ``task`` (a string or content blocks)."""
    return {
        "task": copy.deepcopy(task),
        "status": "executing",
        "nodes": {n: {"status": "pending", "executions": 0, "result": None} for n in spec.names},
        "current": spec.entry,
        "message": None,
        "previous": None,
        "handoffs": 0,
        "turns": 0,
        "running": None,
        "context": {},
        "executions": 0,
        "error": None,
        "log": [],
    }


def check_state(spec: SwarmSpec, data: Any, order: Any, where: str) -> None:
    """Refuse a stored or snapshot state that is not one of this swarm's (its members, its keys).

    Node results are not decoded here (the caller does, where it has them in full).

    Raises:
        SnapshotError: Naming ``where`` and what is wrong.
    """
    names = list(spec.names)
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict) or set(data["nodes"]) != set(names):
        raise SnapshotError(f"swarm {where}: the state's members are not this swarm's members {names}")
    for key in ("current", "handoffs", "turns", "context", "status"):
        if key not in data:
            raise SnapshotError(f"swarm {where}: the state has no {key!r}")
    if data["current"] not in names or not isinstance(data["context"], dict):
        raise SnapshotError(f"swarm {where}: unknown current member {data['current']!r}")
    for name, entry in data["nodes"].items():
        if not isinstance(entry, dict) or entry.get("status") not in NODE_STATUSES:
            raise SnapshotError(f"swarm {where}: member {name!r} has a malformed state")
    running = data.get("running")
    if running is not None and (not isinstance(running, dict) or running.get("member") not in names):
        raise SnapshotError(f"swarm {where}: the turn in flight names no member of this swarm")
    if not isinstance(order, list) or not all(n in names for n in order):
        raise SnapshotError(f"swarm {where}: the member history names unknown members")
    if "log" in data:
        executions.check_log(data["log"], set(names), f"swarm {where}")


def begin(data: dict[str, Any]) -> bool:
    """Start (or continue) driving the run; False when a limit stopped it with no member turn in
    flight to retry, so its outcome stands."""
    if data["status"] == "failed" and data["running"] is None:
        return False
    data["status"] = "executing"
    data["error"] = None
    return True


def fail(data: dict[str, Any], error: str) -> None:
    """End the run as failed, for ``error``."""
    data["status"] = "failed"
    data["error"] = error


def start_turn(spec: SwarmSpec, data: dict[str, Any], order: list[str]) -> dict[str, Any] | None:
    """Start the current member's next turn; returns it (``data["running"]``: ``member``, ``n``
    (the turn number, which names its nested run) and ``input`` (its prompt)).

    Returns None, with the run failed, when ``max_iterations`` turns were taken already.
    """
    name = data["current"]
    if data["turns"] >= spec.max_iterations:
        fail(data, f"max iterations ({spec.max_iterations}) reached before {name!r} could start")
        return None
    data["turns"] += 1
    data["executions"] += 1
    entry = data["nodes"][name]
    entry["executions"] += 1
    entry["status"] = "executing"
    running = {"member": name, "n": data["turns"], "input": turn_input(spec, data, order, name)}
    data["running"] = running
    executions.started(data, name, data["turns"])
    return running


def turn_input(spec: SwarmSpec, data: dict[str, Any], order: list[str], name: str) -> Any:
    """The prompt of member ``name``'s turn: the task, the handoff message, the shared context,
    who worked on it so far and whom it may hand off to (the task alone for a lone member)."""
    task = data["task"]
    text = task if isinstance(task, str) else "\n".join(b.get("text", "") for b in task if isinstance(b, dict))
    parts = [text]
    if data["message"] is not None:
        parts.append(f"Handoff from {data['previous']}: {data['message']}")
    if data["context"]:
        parts.append(f"Shared context: {json.dumps(data['context'], sort_keys=True)}")
    if order:
        parts.append(f"Agents that worked on this so far: {' -> '.join(order[-10:])}")
    others = [f"- {n}: {spec.descriptions.get(n) or 'no description'}" for n in spec.names if n != name]
    if others:
        parts.append("You may hand off to one of these agents with handoff_to_agent:\n" + "\n".join(others))
    return "\n\n".join(parts) if len(parts) > 1 else task


def record_turn(
    spec: SwarmSpec, data: dict[str, Any], order: list[str], name: str, n: int, *, interrupted: bool, handoff: Any
) -> dict[str, Any]:
    """Record member ``name``'s finished turn ``n`` (its result is set by the caller).

    ``interrupted``: the turn stopped on interrupts (the run waits for their answers, and the
    same turn continues; it joins the member history once, when it completes). Otherwise
    ``handoff`` is what the turn's agent state holds under :data:`HANDOFF_KEY`: a dict hands
    the task on (counted against ``max_handoffs`` and the repetitive handoff check), anything
    else makes this member's answer the swarm's.

    Returns what happened: ``{"type": "node_result", "node_id": name}`` or
    ``{"type": "handoff", "from", "to", "message"}``.
    """
    entry = data["nodes"][name]
    data["running"] = None
    executions.finished(data, order, name, n, "interrupted" if interrupted else "completed")
    if interrupted:
        entry["status"] = "interrupted"
        data["running"] = {"member": name, "n": n, "input": None}
        data["status"] = "interrupted"
        return {"type": "node_result", "node_id": name}
    entry["status"] = "completed"
    if not isinstance(handoff, dict):  # no handoff: this member's answer is the swarm's
        data["status"] = "completed"
        return {"type": "node_result", "node_id": name}
    target = str(handoff["to"])
    data["handoffs"] += 1
    data["context"].update(handoff.get("context") or {})
    data["previous"], data["message"], data["current"] = name, handoff.get("message"), target
    if data["handoffs"] > spec.max_handoffs:
        fail(data, f"max handoffs ({spec.max_handoffs}) reached: {name!r} handed off to {target!r}")
    elif spec.window and spec.min_unique:
        recent = [*order[-(spec.window - 1) :], target] if spec.window > 1 else [target]
        if len(recent) >= spec.window and len(set(recent)) < spec.min_unique:
            fail(
                data,
                f"repetitive handoffs: the last {spec.window} turns ({' -> '.join(recent)}) involve fewer than {spec.min_unique} agents",
            )
    return {"type": "handoff", "from": name, "to": target, "message": handoff.get("message")}


def member_failed(data: dict[str, Any], name: str, error: BaseException | str) -> None:
    """Record that member ``name``'s turn raised ``error``: the member and the run fail."""
    data["nodes"][name]["status"] = "failed"
    running = data.get("running")
    if isinstance(running, dict) and running.get("member") == name:
        executions.finished(data, [], name, int(running["n"]), "failed")
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    fail(data, f"member {name!r} failed: {text}")


__all__ = [
    "HANDOFF_KEY",
    "SwarmSpec",
    "begin",
    "check_state",
    "fail",
    "member_failed",
    "new_state",
    "record_turn",
    "start_turn",
    "turn_input",
]
