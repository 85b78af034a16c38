"""Forking: a new durable run that starts from any past step of another run.

The fork copies the run as it was at that step (the step's head copy, the live messages then,
the tool results recorded then), optionally with its last message edited, and writes it as a
brand-new run whose first step is ``forked``. The original run is only read. The fork is an
ordinary durable run afterwards: ``agent.resume(fork_id)`` finishes a turn forked mid-cycle,
``agent(prompt, run_id=fork_id)`` starts a new turn.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .._messages import validate_messages
from ..errors import PromptError, ShapeError, StoreError
from ..loop.core import tool_uses_of
from ..types import Message
from .history import Step, Timeline
from .session import EXTRA_HEAD_KEYS, DurableSession, run_state_of
from .store import RunStore, StoredRun, validate_run_id

Edit = Callable[[list[Message]], list[Message]] | dict[str, Any]
"""A callable taking the messages at the step and returning the new list, or a message dict
that replaces the last message."""


def fork_run(
    store: RunStore,
    run_id: str,
    at: int | Step,
    *,
    new_run_id: str | None = None,
    edit: Edit | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    """Start a new run from step ``at`` of ``run_id``; returns the new run's id.

    ``new_run_id`` defaults to ``f"{run_id}.fork-{n}"`` with the smallest unused ``n``.

    Args:
        store: The store holding ``run_id``; the fork is written there.
        run_id: The run to fork (left untouched).
        at: The step to start from: its number or a :class:`~tether.durable.history.Step`.
        new_run_id: The new run's id (it must not exist yet).
        edit: Changes the messages at that step: a callable returning the new list, or a
            message dict replacing the last message.
        extra: Head keys an edge of Tether owns (``EXTRA_HEAD_KEYS``) to give the fork in place
            of the copied ones: how a Strands session's fork becomes a session of its own
            (:func:`tether.strands.fork_session`).
    """
    number = at.step if isinstance(at, Step) else at
    if isinstance(number, bool) or not isinstance(number, int):
        raise StoreError(f"fork at={at!r} is not a step number; list the steps with store.history({run_id!r}) or `tether show {run_id}`")
    stored = store.load_at(validate_run_id(run_id), number)
    messages = _edited(stored.messages, edit) if edit is not None else stored.messages
    new_id = validate_run_id(new_run_id) if new_run_id is not None else _free_id(store, run_id)
    head = dict(stored.head)
    cursor = dict(head["cursor"])
    results = _check_shape(messages, cursor, stored.results, edit is not None)
    head["cursor"] = cursor
    if edit is not None:
        _drop_removed_calls(head, messages)
    head["steps"] = 0
    head.pop("created_at", None)
    for key, value in (extra or {}).items():
        if key not in EXTRA_HEAD_KEYS:
            raise StoreError(f"fork extra={key!r}: only the head keys {EXTRA_HEAD_KEYS} can be given to a fork")
        head[key] = value
    with store.lease(new_id) as lease:
        if store.head(new_id) is not None:
            raise StoreError(f"run {new_id!r} already exists; pick another new_run_id (or omit it to get {run_id}.fork-N)")
        run = run_state_of(StoredRun(new_id, head, messages, results))
        session = DurableSession(store, new_id, run, lease=lease)
        session.extra = {key: head[key] for key in EXTRA_HEAD_KEYS if key in head}
        session.timeline = Timeline(head, run.metrics)
        status = str(head.get("status") or "running")
        session.sync("forked", status="paused" if status == "running" else status, forked_from={"run_id": run_id, "step": number})
    return new_id


def _free_id(store: RunStore, run_id: str) -> str:
    n = 1
    while True:
        candidate = f"{run_id}.fork-{n}"
        if len(candidate) > 128:
            raise StoreError(f"run id {run_id!r} is too long to derive a fork id from; pass new_run_id")
        if store.head(candidate) is None:
            return candidate
        n += 1


def _edited(messages: list[Message], edit: Edit) -> list[Message]:
    """Apply ``edit`` to a copy of ``messages`` and validate the outcome."""
    mine = copy.deepcopy(messages)
    if isinstance(edit, dict):
        if not mine:
            raise PromptError("fork edit: the run has no message at this step to replace")
        mine[-1] = copy.deepcopy(edit)  # type: ignore[call-overload]
        edited: Any = mine
    elif callable(edit):
        edited = edit(mine)
    else:
        raise PromptError(f"fork edit must be a callable or a message dict, got {type(edit).__name__}")
    if not isinstance(edited, list) or not edited:
        raise PromptError("fork edit must return a non-empty list of messages")
    try:
        return validate_messages(edited, ["edit"])
    except ShapeError as exc:
        raise PromptError(str(exc)) from None


def _check_shape(messages: list[Message], cursor: dict[str, Any], results: dict[str, Any], edited: bool) -> dict[str, Any]:
    """The messages must still fit the cursor: a tool cycle ends in the calls it runs, a model
    step in a user message. Returns the results that still belong to a tool call."""
    phase = cursor.get("phase")
    last = messages[-1] if messages else None
    if phase == "tools":
        uses = {use["toolUseId"] for use in tool_uses_of(last)} if last and last["role"] == "assistant" else set()
        if not uses:
            raise PromptError(
                "fork edit: this step runs tool calls next, so the last message must be an assistant message with toolUse blocks"
            )
        kept = {k: v for k, v in results.items() if k in uses}
        cursor["started"] = [k for k in cursor.get("started") or [] if k in uses]
        return kept
    if phase == "model" and edited and (last is None or last["role"] != "user"):
        raise PromptError("fork edit: this step calls the model next, so the last message must be a user message")
    return results


def _drop_removed_calls(head: dict[str, Any], messages: list[Message]) -> None:
    """Interrupts (and their saved cursor's results) of tool calls an edit removed are dropped:
    they could never be answered, and a run waiting for them would never go on."""
    state = head.get("interrupt_state")
    if not isinstance(state, dict) or not state.get("interrupts"):
        return
    last = messages[-1] if messages else None
    uses = {use["toolUseId"] for use in tool_uses_of(last)} if last is not None and last["role"] == "assistant" else set()
    table = {ident: item for ident, item in state["interrupts"].items() if item.get("tool_use_id") in uses}
    if len(table) == len(state["interrupts"]):
        return
    state = dict(state)
    context = state.get("context")
    if isinstance(context, dict):
        context = dict(context)
        context["results"] = {k: v for k, v in (context.get("results") or {}).items() if k in uses}
        context["started"] = [k for k in context.get("started") or [] if k in uses]
        state["context"] = context
    state["interrupts"] = table
    if not table:
        state = {}  # nothing left to answer: the run is not waiting any more
        if head.get("status") == "interrupted":
            head["status"] = "paused"
    head["interrupt_state"] = state
