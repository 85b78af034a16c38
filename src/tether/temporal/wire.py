"""The compact run state that crosses the wire, and its conversions to and from local runs.

A workflow carries (through continue-as-new, queries and its result) a dict of the
:class:`~tether.loop.state.RunState` fields whose messages are a conversation reference plus
a few compact messages. These functions turn a local run (a ``RunState``, a durable store's
run, a :class:`~tether.Snapshot` or a :class:`~tether.Checkpoint`) into that dict, which is
how a local run is promoted into Temporal, and turn it back into a ``Snapshot``, which is how
a Temporal run is exported and continued locally.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Unpack, cast

from .._json import json_copy
from ..agent_tool import STATE_KEY
from ..checkpoint import Checkpoint, check_metrics
from ..checkpoint import parse as parse_checkpoint
from ..errors import CheckpointError, InterruptError, ShapeError, SnapshotError
from ..interrupts import pending_interrupts
from ..loop.state import Cursor, RunState, new_metrics
from ..snapshot import SCOPE, SNAPSHOT_SCHEMA_VERSION, Snapshot
from ..snapshot.shapes import interrupt_state_in, interrupt_state_out, manager_state_in
from ..types import InterruptState, MetricsData
from .blobs import BlobStore
from .claimcheck import Conversations, expand_message, expand_result
from .payloads import (
    expand_interrupt,
    expand_state,
    map_interrupts,
    restore,
)
from .policy import PayloadLimits, PayloadPolicy
from .shapes import CarriedState, CompactRecord, MultiAgentSnapshot, MultiAgentState

TAIL = 4


def _map_results(results: Any, convert: Any) -> dict[str, Any]:
    if not isinstance(results, dict):
        return {}
    return {ident: convert(result) for ident, result in results.items()}


def carried_from_run(blobs: BlobStore | PayloadPolicy, run: RunState, **limits: Unpack[PayloadLimits]) -> CarriedState:
    """The compact state a workflow starts from, for a local ``run`` (content goes to ``blobs``).

    Args:
        blobs: Where large values go, or the whole :class:`~tether.temporal.policy.PayloadPolicy`.
        run: The local run.
        **limits: ``inline_limit`` (values larger than this, bytes of JSON, are offloaded) and
            ``max_value_bytes`` (the hard limit of one value: ``PayloadTooLargeError`` names it).
    """
    policy = PayloadPolicy.of(blobs, **limits)
    compact = [policy.compact_message(message, f"run.messages[{i}]") for i, message in enumerate(run.messages)]
    conv = Conversations(policy.blobs).append(None, compact)
    interrupt_state: InterruptState = json_copy(run.interrupt_state, "run.interrupt_state")
    context = interrupt_state.get("context")
    if isinstance(context, dict):
        context["results"] = _map_results(context.get("results"), policy.compact_result)
    interrupt_state = cast(InterruptState, map_interrupts(dict(interrupt_state), policy.compact_interrupt))
    cursor = run.cursor.to_dict()
    cursor["results"] = _map_results(cursor["results"], policy.compact_result)
    system = (
        None if run.system_prompt is None else policy.compact_message({"role": "system", "content": run.system_prompt}, "run.system_prompt")
    )
    try:
        metrics = check_metrics(run.metrics, "run.metrics")
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None
    state = json_copy(run.state, "run.state")
    book = state.pop(STATE_KEY, None)
    state = policy.compact_state(state)
    if book is not None:  # inline: the workflow reads it (its children's states are compact)
        state[STATE_KEY] = _map_children(book, lambda child: carried_from_run(policy, run_from_snapshot(child)))
    return {
        "conv": conv,
        "tail": compact[-TAIL:],
        "unpersisted": 0,
        "state": state,
        "conversation_manager_state": policy.offload(
            json_copy(run.conversation_manager_state, "run.conversation_manager_state"), "conversation_manager_state"
        ),
        "interrupt_state": interrupt_state,
        "system_prompt": system,
        "model_state": policy.offload(json_copy(run.model_state, "run.model_state"), "model_state"),
        "cursor": json_copy(cursor, "run.cursor"),
        "metrics": metrics,
        "settings": None,
        "started": False,
    }


def run_from_snapshot(snapshot: Snapshot | dict[str, Any]) -> RunState:
    """A ``RunState`` holding a snapshot's fields (the cursor as ``Agent.load_snapshot`` sets it).

    Args:
        snapshot: A :class:`~tether.Snapshot` or its dict; it must hold ``messages``.
    """
    if not isinstance(snapshot, Snapshot):
        snapshot = Snapshot.from_dict(snapshot)
    data = snapshot.to_dict()["data"]
    if "messages" not in data:
        raise SnapshotError("snapshot.data.messages is missing; a run promoted to Temporal needs its messages")
    run = RunState(
        messages=data["messages"],
        state=data.get("state") or {},
        conversation_manager_state=manager_state_in(data.get("conversation_manager_state") or {}),
        interrupt_state=cast(InterruptState, interrupt_state_in(data.get("interrupt_state") or {})),  # validated by Snapshot.from_dict
        system_prompt=[{"text": system}] if isinstance(system := data.get("system_prompt"), str) else system,
        model_state=data.get("model_state") or {},
    )
    context = run.interrupt_state.get("context")
    if run.interrupt_state.get("activated") and isinstance(context, dict) and "phase" in context:
        try:
            run.cursor = Cursor.from_dict(context)
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"snapshot.data.interrupt_state.context is malformed: {exc!r}") from None
    saved = run.interrupt_state.get("metrics")
    if saved is not None:
        try:
            run.metrics = check_metrics(saved, "snapshot.data.interrupt_state.metrics")
        except ShapeError as exc:
            raise InterruptError(str(exc)) from None
    return run


def run_from_checkpoint(checkpoint: Checkpoint | dict[str, Any]) -> RunState:
    """A ``RunState`` positioned to continue from a checkpoint (as a checkpoint resume does).

    Args:
        checkpoint: A :class:`~tether.Checkpoint` or its dict (not of a structured-output run).
    """
    raw = checkpoint.to_dict() if isinstance(checkpoint, Checkpoint) else checkpoint
    header, snapshot = parse_checkpoint(raw)
    if header["output_tool"] is not None:
        raise CheckpointError("checkpoint.output_tool: structured-output runs cannot be promoted to Temporal yet")
    run = run_from_snapshot(snapshot)
    run.metrics = header["metrics"]
    if header["position"] == "after_model":
        run.cursor = Cursor(phase="tools", cycle_index=header["cycle_index"])
    else:
        run.cursor = Cursor(phase="model", cycle_index=header["cycle_index"] + 1)
    return run


def carried_from_paused(payloads: PayloadPolicy, paused: Any) -> tuple[CarriedState, list[CompactRecord]]:
    """A graph node's or swarm member's agent stopped on interrupts, from its local snapshot
    (``paused``) to its child workflow's carried state and pending interrupts (compact)."""
    run = run_from_snapshot(paused)
    carried = carried_from_run(payloads, run)
    return carried, [payloads.compact_interrupt(dict(i.to_dict())) for i in pending_interrupts(run.interrupt_state)]


def checked_copy(snapshot: Any, check: Callable[[Any], MultiAgentSnapshot], what: str) -> MultiAgentSnapshot:
    """A JSON copy of a local graph or swarm snapshot that ``check`` accepts (a value in it that
    is not JSON raises ``SnapshotError`` naming it)."""
    try:
        copied: MultiAgentSnapshot = json_copy(check(snapshot), what)
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None
    return copied


def map_results(state: MultiAgentState, convert: Callable[[str, Any], Any]) -> None:
    """Convert, in place, the latest result of each node of a graph or swarm state (``convert``
    gets the node's id and its result; a node without a result is left alone)."""
    for node_id, entry in state["nodes"].items():
        if isinstance(entry, dict) and entry.get("result") is not None:
            entry["result"] = convert(node_id, entry["result"])


def messages_of(blobs: BlobStore, carried: CarriedState, *, decode: bool = True) -> list[Any]:
    """The full conversation of a carried state (chain plus the messages not yet persisted)."""
    conversations = Conversations(blobs)
    compact = conversations.compact_nodes(carried.get("conv"))
    unpersisted = int(carried.get("unpersisted", 0))
    if unpersisted:
        compact = compact + list(carried["tail"][-unpersisted:])
    return [expand_message(blobs, message, decode=decode) for message in compact]


def snapshot_of(blobs: BlobStore, carried: CarriedState, app_data: dict[str, Any] | None = None) -> Snapshot:
    """A :class:`Snapshot` of a carried state, loadable by a local agent built the same way.

    Args:
        blobs: The blob store the carried state's references point into.
        carried: The run as a workflow carries it (its result's or a query's ``run``).
        app_data: The application's JSON to put in the snapshot.
    """
    interrupt_state = map_interrupts(copy.deepcopy(dict(carried.get("interrupt_state") or {})), lambda r: expand_interrupt(blobs, r))
    context = interrupt_state.get("context")
    if isinstance(context, dict):
        results = _map_results(context.get("results"), lambda r: expand_result(blobs, r))
        context["results"] = json_copy(results, "interrupt_state.context.results")
    system = carried.get("system_prompt")
    state = expand_state(blobs, carried.get("state"))
    if isinstance(state.get(STATE_KEY), dict):
        state[STATE_KEY] = _map_children(state[STATE_KEY], lambda child: snapshot_of(blobs, child).to_dict(), to_local=True)
    data = {
        "messages": messages_of(blobs, carried, decode=False),
        "state": state,
        "conversation_manager_state": restore(blobs, carried.get("conversation_manager_state")) or {},
        "interrupt_state": interrupt_state_out(interrupt_state),  # the snapshot shape (Strands')
        "system_prompt": None if system is None else expand_message(blobs, system, decode=False)["content"],
        "model_state": restore(blobs, carried.get("model_state")) or {},
    }
    return Snapshot.from_dict({"schema_version": SNAPSHOT_SCHEMA_VERSION, "scope": SCOPE, "data": data, "app_data": app_data or {}})


def _map_children(book: Any, convert: Any, *, to_local: bool = False) -> Any:
    """An agent-tool bookkeeping value (``state["tether.agent_tools"]``) with each child state
    converted: a local parent keeps snapshots (``calls[id]["snapshot"]``, ``conversations[tool]``),
    a workflow keeps carried states (``calls[id]["carried"]``, ``conversations[tool]``)."""
    if not isinstance(book, dict):
        return book
    out = dict(book)
    calls = book.get("calls")
    if isinstance(calls, dict):
        mapped: dict[str, Any] = {}
        for ident, entry in calls.items():
            entry = dict(entry) if isinstance(entry, dict) else entry
            source, target = ("carried", "snapshot") if to_local else ("snapshot", "carried")
            if isinstance(entry, dict) and source in entry:
                entry[target] = convert(entry.pop(source))
            mapped[ident] = entry
        out["calls"] = mapped
    conversations = book.get("conversations")
    if isinstance(conversations, dict):
        out["conversations"] = {name: convert(child) for name, child in conversations.items()}
    return out


def metrics_of(carried: CarriedState) -> MetricsData:
    """The accumulated metrics of a carried state (a copy)."""
    return copy.deepcopy(carried.get("metrics") or new_metrics())


__all__ = [
    "carried_from_paused",
    "carried_from_run",
    "map_results",
    "messages_of",
    "metrics_of",
    "run_from_checkpoint",
    "run_from_snapshot",
    "snapshot_of",
]
