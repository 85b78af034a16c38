"""The inspector's data model: a run (and its forks and nested runs) as one JSON payload.

Everything the page shows is extracted here, in Python, from the :class:`~tether.durable.RunStore`
protocol alone (``head``, ``load``, ``load_at``, ``history``, ``list_runs``): the page's script
only lays it out. The payload is linear in the run: each message once (with its byte size), each
step once (its timeline figures and the head fields it changed: agent state, conversation-manager
state, interrupt state, system prompt, model state). Unchanged head fields are left out of a step
and inherited from the step before, so a long run with a small state costs O(1) bytes per step.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from .._json import json_copy
from ..durable.history import Step, summary_of
from ..durable.store import RunStore, with_liveness
from ..errors import RunNotFoundError
from ..multiagent.executions import record_of

PAYLOAD_FORMAT = "tether-inspector/1"
"""The ``format`` field of every payload (the page checks it)."""

STATE_FIELDS = ("state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state")
"""The head fields a step carries when they changed (the snapshot fields besides ``messages``)."""

RESUMED_FROM = ("interrupted", "stopped", "paused", "failed")
"""A step after a step with one of these statuses (other than a new turn) is a resume: a
process boundary, since the run stopped there and an invocation continued it."""


def stored_run(store: RunStore, run_id: str) -> tuple[dict[str, Any], list[Step]]:
    """Run ``run_id``'s head and steps, as the inspector and the ATIF export read them.

    Raises:
        RunNotFoundError: The store has no run ``run_id`` (the message points at ``tether runs``).
    """
    head = store.head(run_id)
    if head is None:
        raise RunNotFoundError(f"no run {run_id!r} in the store; see `tether runs`")
    return head, store.history(run_id)


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON: how ``tether size`` (``Snapshot.size_report``) counts."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def build_payload(store: RunStore, run_id: str, *, store_flags: Sequence[str] = (), live: bool = False) -> dict[str, Any]:
    """The payload of the page for ``run_id``: the run, its forks and its nested runs.

    Args:
        store: The store holding the run.
        run_id: The run to show.
        store_flags: The ``--store`` flags to put in the ``tether fork`` commands shown (empty:
            the default store).
        live: Whether the page is served by ``tether view --serve`` (it then reloads while the
            run is running).

    Returns:
        ``{"format", "root", "runs": {run_id: run payload}, "live"}``; the root run first, then
        its nested runs (recursively) and its forks (one level).

    Raises:
        RunNotFoundError: The store has no run ``run_id``.
    """
    summaries = store.list_runs()
    runs: dict[str, dict[str, Any]] = {}
    pending = [run_id]
    while pending:
        current = pending.pop(0)
        if current in runs:
            continue
        run = run_payload(store, current, store_flags=store_flags)
        run["children"] = [s.run_id for s in summaries if getattr(s, "parent_run_id", None) == current]
        pending.extend(run["children"])
        runs[current] = run
    root = runs[run_id]
    root["forks"] = forks_of(store, run_id, [s.run_id for s in summaries])
    for fork in root["forks"]:
        if fork["run_id"] not in runs:
            runs[fork["run_id"]] = run_payload(store, fork["run_id"], store_flags=store_flags)
    return {"format": PAYLOAD_FORMAT, "root": run_id, "runs": runs, "live": live}


def forks_of(store: RunStore, run_id: str, candidates: Sequence[str]) -> list[dict[str, Any]]:
    """The runs forked from ``run_id``: those whose first step is ``forked`` from it.

    Reads the history of every other run in ``candidates`` (a fork may have any id).
    """
    found: list[dict[str, Any]] = []
    for other in candidates:
        if other == run_id:
            continue
        steps = store.history(other)
        origin = steps[0].forked_from if steps and steps[0].position == "forked" else None
        if origin and origin.get("run_id") == run_id:
            found.append({"run_id": other, "step": origin.get("step")})
    return found


def run_payload(store: RunStore, run_id: str, *, store_flags: Sequence[str] = ()) -> dict[str, Any]:
    """One run: summary, messages (each once, with its seq and byte size) and steps; for a graph
    or swarm run, ``graph`` (its nodes, edges and execution log, each execution naming its
    nested run: :func:`~tether.multiagent.executions.record_of`) instead of messages.

    Args:
        store: The store holding the run.
        run_id: The run.
        store_flags: ``--store`` flags for the ``tether fork`` commands.

    Raises:
        RunNotFoundError: The store has no run ``run_id``.
    """
    head, steps = stored_run(store, run_id)
    (summary,) = with_liveness([summary_of(run_id, head)], store.owner_alive)  # running, or stalled: no live owner
    messages = messages_of(store, run_id, head, steps)
    graph = record_of(run_id, head, [item["message"] for item in messages])
    if graph is not None:
        messages = []  # a graph or swarm run has no conversation (older ones stored their log as rows)
    return {
        "run_id": run_id,
        "summary": {
            "status": summary.status,
            "turns": summary.turns,
            "cycles": summary.cycles,
            "total_tokens": summary.total_tokens,
            "created_at": summary.created_at,
            "updated_at": summary.updated_at,
            "stop_reason": summary.stop_reason,
            "steps": summary.steps,
            "parent_run_id": head.get("parent_run_id"),
            "usage": (head.get("metrics") or {}).get("usage") or {},
            "tools": (head.get("metrics") or {}).get("tools") or {},
        },
        "messages": messages,
        "steps": steps_of(run_id, steps, store_flags),
        "graph": graph,
        "children": [],
        "forks": [],
    }


def messages_of(store: RunStore, run_id: str, head: dict[str, Any], steps: list[Step]) -> list[dict[str, Any]]:
    """Every message any step of the run saw, once, in seq order: ``{"seq", "bytes", "message"}``.

    A conversation manager may have dropped early messages from the current head (its
    ``start_seq`` moved); message rows are never rewritten, so the steps that still saw them
    are loaded with ``load_at`` — once per distinct window start, not once per step.
    """
    found: dict[int, Any] = {}
    start = int(head.get("start_seq", 0))
    current = store.load(run_id)
    if current is not None:
        for offset, message in enumerate(current.messages):
            found[start + offset] = message
    last_of_window: dict[int, int] = {}
    for step in steps:
        window = int(step.head.get("start_seq", 0))
        if window < start:
            last_of_window[window] = step.step
    for window, number in sorted(last_of_window.items()):
        older = store.load_at(run_id, number)
        for offset, message in enumerate(older.messages):
            found.setdefault(window + offset, message)
    out: list[dict[str, Any]] = []
    for seq in sorted(found):
        message = json_copy(found[seq], ["message", seq])
        out.append({"seq": seq, "bytes": json_size(message), "message": message})
    return out


def steps_of(run_id: str, steps: list[Step], store_flags: Sequence[str]) -> list[dict[str, Any]]:
    """The steps as the page needs them: timeline figures, the message window, changed head fields,
    the process boundary and the exact ``tether fork`` command.

    Step rows and their heads come from the row codec already checked to be pure JSON (only
    messages may hold bytes), so they are used as they are, not copied.
    """
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    before: Step | None = None
    for step in steps:
        head = step.head
        row = step.to_dict()
        del row["head"]
        row["start_seq"] = int(head.get("start_seq", 0))
        row["next_seq"] = int(head.get("next_seq", step.seq))
        row["usage"] = (head.get("metrics") or {}).get("usage") or {}
        changed: dict[str, Any] = {}
        sizes: dict[str, int] = {}
        for name in STATE_FIELDS:
            value = head.get(name) if name == "system_prompt" else head.get(name) or {}
            if name not in previous or previous[name] != value:
                changed[name] = value
                sizes[name] = json_size(value)
                previous[name] = value
        row["changed"] = changed
        row["sizes"] = sizes
        row["boundary"] = boundary_of(before, step)
        row["fork_command"] = shlex.join(["tether", "fork", run_id, "--at", str(step.step), *store_flags])
        out.append(row)
        before = step
    return out


def boundary_of(before: Step | None, step: Step) -> str | None:
    """Why a new invocation (possibly another process) took over at ``step``, or None.

    A ``resumed`` step is a resume that found in-doubt tool calls; a step after an interrupted, stopped,
    paused or failed one that is not a new turn is a resume; a ``forked`` step starts a fork.
    A crash followed by a resume shows as a ``resumed`` step only when calls were in doubt: a
    step row does not record which process wrote it. An ``unwind`` step begins a compensation.
    """
    if step.position == "forked":
        return "forked"
    if step.position == "resumed":
        return "resumed (in-doubt tool calls)"
    if step.position == "unwind":
        return f"compensating ({(step.undo or {}).get('trigger')})"  # the run's effects are undone from here, newest first
    if step.position == "verdict" and step.verdict:
        return f"resumed: {step.verdict.get('verdict')} (the agent's definition was checked against the run's manifest)"
    if before is not None and before.status in RESUMED_FROM and step.position != "turn_start":
        return f"resumed after {before.status}"
    return None
