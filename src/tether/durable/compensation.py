"""Compensation: undo a durable run's performed effects, newest first, each at most once.

A tool declares how to undo a call of itself (``@tool(compensate=...)``, see
:mod:`tether.tools.compensation`). Compensating a run (an application's
``agent.compensate(run_id)``, ``tether compensate RUN``, or automatically when a turn fails, is
cancelled or runs out of budget and the agent's ``compensate_on`` names that) *unwinds* it:

1. an ``unwind`` step (status ``compensating``) records the plan: every *performed* call of the
   run whose tool has a compensation, newest first. A performed call is one with a recorded
   success result, or one *in doubt* (started, result never recorded: it may have had its
   effect, so its undo is attempted too, with ``Undo.result`` None and the same key scheme);
   a call with an error result had no effect and is left alone;
2. for each planned call: a write marks its undo *started* (the head's ``compensation`` record),
   then the compensation runs with the undo key ``run_id/toolUseId/undo``, then an ``undo`` step
   records its outcome (``undone``, or ``failed`` with the error: the unwinding goes on);
3. an ``unwound`` step ends it: status ``compensated``, or ``compensation_failed`` when a
   compensation raised (its ``stop_reason`` names each failed undo).

Nested runs unwind with their parent: a call of a tool that nests runs (an agent used as a tool)
whose nested run exists (``child_run_id(run_id, toolUseId)``, of this incarnation of the run) is
planned whatever its result (a child that failed may have had effects before it failed), and
undoing it compensates the nested run in its turn, with the tool's :meth:`~tether.tools.base.Tool.nested_tools`,
recursively: the whole tree unwinds newest first, a nested run's effects at the place of the call
that made them. The nested run records its own unwinding (its own steps, status and record, under
its own lease), so a kill inside it resumes it there and undoes nothing twice; the parent's
``undo`` step records the nested run's outcome (``failed`` when one of its undos failed).

The record lives in the run's head, so a process killed anywhere in the unwinding leaves a run
that a later compensation (any process) goes on with: undos with a recorded outcome are never
run again; an undo marked started without an outcome is *in doubt* and runs again with the same
undo key (the compensation must be idempotent by that key, as tools are by theirs). Every write
is fenced by the run's lease, like a turn's. A compensated run is over: a resume or a new turn
raises :class:`~tether.errors.CompensationError`; compensating it again returns the stored report.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import CompensationError, RunNotFoundError, StoreError
from ..loop.core import tool_uses_of
from ..tools.base import Tool
from ..tools.compensation import TRIGGERS, UNDO_SUFFIX, Undo
from ..types import Message, ToolResult
from .ids import child_run_id
from .incarnation import belongs
from .session import DurableSession, run_state_of
from .store import RunStore, validate_run_id

OUTCOMES = ("undone", "failed")
"""An undo's recorded outcome."""

_log = logging.getLogger(__name__)

Lookup = Callable[[str], Tool | None]
"""Finds the tool of a name (the agent's registry): its ``compensate`` is called."""


@dataclass(frozen=True)
class UndoOutcome:
    """One planned undo, as the run's compensation record holds it.

    Attributes:
        tool_use_id: The undone call.
        tool: Its tool's name.
        outcome: ``undone``, ``failed``, or ``pending`` (not done yet: the unwinding was cut short).
        error: What the compensation raised (``failed``), else None.
        in_doubt: The call itself was in doubt (no recorded result) when it was undone.
        attempts: How many times the compensation was started (2: a crash caught the first
            attempt in doubt and it ran again with the same undo key).
        run_id: The nested run the call made (an agent tool's child), unwound as this undo;
            None for a call undone by its tool's own compensation.
    """

    tool_use_id: str
    tool: str
    outcome: str
    error: str | None = None
    in_doubt: bool = False
    attempts: int = 0
    run_id: str | None = None


@dataclass(frozen=True)
class CompensationReport:
    """What compensating a run did (or had done, when asked again).

    Attributes:
        run_id: The run.
        status: ``compensated`` or ``compensation_failed``.
        trigger: Why it was compensated: one of :data:`TRIGGERS`.
        undos: The planned undos, in the order they ran (newest call first).
    """

    run_id: str
    status: str
    trigger: str
    undos: tuple[UndoOutcome, ...]

    @property
    def failed(self) -> list[UndoOutcome]:
        """The undos whose compensation raised."""
        return [undo for undo in self.undos if undo.outcome == "failed"]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON: the run, its status, the trigger and each undo (``tether
        compensate --json``, ``POST /runs/{id}/compensate``)."""
        undos = []
        for u in self.undos:
            undo = {"toolUseId": u.tool_use_id, "tool": u.tool, "outcome": u.outcome, "error": u.error, "in_doubt": u.in_doubt}
            undos.append({**undo, "attempts": u.attempts, **({"run_id": u.run_id} if u.run_id else {})})
        return {"run_id": self.run_id, "status": self.status, "trigger": self.trigger, "undos": undos}


async def compensate_run(
    store: RunStore,
    run_id: str,
    lookup: Lookup,
    *,
    trigger: str = "requested",
    prepare: Callable[[DurableSession], None] | None = None,
    planner: Callable[[DurableSession], list[dict[str, Any]]] | None = None,
) -> CompensationReport:
    """Compensate stored run ``run_id`` (see the module docstring), taking its lease first.

    Args:
        store: Where the run lives.
        run_id: The run.
        lookup: The tools by name (their compensations run).
        trigger: Why: one of :data:`TRIGGERS`.
        prepare: Called with the run under its lease, loaded, before anything is written: it
            may refuse (raise) or change the run's state, stored by the unwinding's first write
            (the server records a request's key so).
        planner: The plan of a run that holds no conversation (a graph's or a swarm's: its
            nested runs, newest first); default: the run's performed calls (see :func:`unwind`).

    Raises:
        RunNotFoundError: No such run.
        RunLockedError: A live owner holds the run (it is running now).
        CompensationError: An unknown trigger, or a damaged compensation record.
    """
    validate_run_id(run_id)
    _check_trigger(trigger)
    with store.lease(run_id) as lease:
        stored = store.load(run_id)
        if stored is None:
            raise RunNotFoundError(f"no run {run_id!r} in the store; nothing to compensate")
        session = DurableSession(store, run_id, run_state_of(stored), stored, lease)
        if prepare is not None:
            prepare(session)
        return await unwind(session, lookup, trigger, None if planner is None else planner(session))


async def unwind(session: DurableSession, lookup: Lookup, trigger: str, plan: list[dict[str, Any]] | None = None) -> CompensationReport:
    """Unwind the run of ``session`` (its lease held), or go on with an unwinding cut short.

    Args:
        session: The run, bound to its store with its lease.
        lookup: The tools by name.
        trigger: Why (recorded when the unwinding starts; one going on keeps its own).
        plan: The plan when the unwinding starts (``{"toolUseId", "name", "in_doubt", "run_id"?}``
            entries, newest first); default: the run's performed calls and nested runs.
    """
    _check_trigger(trigger)
    await session.settle()
    record = session.compensation
    calls = {} if record is not None and record.get("done") else _performed(session, lookup)  # inputs and results, from the messages
    if record is None:
        plan = _plan(session, lookup, calls.values()) if plan is None else plan
        record = {"trigger": trigger, "plan": plan, "undos": {}, "done": False}  # small: no inputs nor results
        session.compensation = record
        summary = {"trigger": trigger, "plan": [_named(e) for e in plan]}
        _log.info("run %r: compensating (%s): %d call(s) to undo", session.run_id, trigger, len(plan))
        await session.sync_async("unwind", status="compensating", undo=summary)
    else:
        _check_record(session.run_id, record)
    if not record["done"]:
        for entry in record["plan"]:
            await _undo_one(session, lookup, record, entry, calls.get(entry["toolUseId"]))
        report = report_of(session.run_id, record)
        record["done"] = True
        totals = {"undone": sum(u.outcome == "undone" for u in report.undos), "failed": len(report.failed)}
        status = "compensation_failed" if report.failed else "compensated"
        await session.sync_async("unwound", status=status, stop_reason=_stop_reason(report), undo=totals)
    return report_of(session.run_id, record)


def report_of(run_id: str, record: dict[str, Any]) -> CompensationReport:
    """The report of a compensation record (as a head holds it).

    Args:
        run_id: The run.
        record: Its ``compensation`` record.
    """
    undos = []
    for entry in record["plan"]:
        state = record["undos"].get(entry["toolUseId"]) or {}
        outcome = state.get("outcome") or "pending"
        undos.append(
            UndoOutcome(
                tool_use_id=entry["toolUseId"],
                tool=entry["name"],
                outcome=outcome,
                error=state.get("error"),
                in_doubt=bool(entry.get("in_doubt")),
                attempts=int(state.get("attempts", 0)),
                run_id=entry.get("run_id"),
            )
        )
    failed = any(undo.outcome == "failed" for undo in undos)
    status = "compensation_failed" if failed else "compensated" if record.get("done") else "compensating"
    return CompensationReport(run_id, status, str(record["trigger"]), tuple(undos))


def performed_calls(
    messages: Iterable[Message],
    open_results: dict[str, ToolResult],
    started: list[str],
    phase: str,
    nesting: Callable[[str], bool] = lambda name: False,
) -> list[dict[str, Any]]:
    """The run's performed calls, newest first: ``{"toolUseId", "name", "input", "result"}``
    (``result`` None: the call is in doubt). A call whose result is an error had no effect and is
    left out (unless its tool nests runs: its nested run may have had effects before it failed),
    and so is a call of the open cycle that never started. A tool call seen twice (a
    conversation manager rewrote the history into a new segment) counts once.

    Args:
        messages: Every message of the run, oldest first.
        open_results: The results recorded in the open cycle (the cursor's).
        started: The calls of the open cycle that started (the cursor's).
        phase: The cursor's phase (``tools``: the open cycle's started calls may be in doubt).
        nesting: Whether the tool of a name nests runs (its error results are kept).
    """
    uses: dict[str, dict[str, Any]] = {}
    results: dict[str, ToolResult] = {}
    for message in messages:
        for use in tool_uses_of(message):
            uses.setdefault(use["toolUseId"], {"toolUseId": use["toolUseId"], "name": use["name"], "input": use.get("input")})
        for block in message.get("content") or []:
            if "toolResult" in block:
                results.setdefault(block["toolResult"]["toolUseId"], block["toolResult"])
    for ident, recorded in open_results.items():
        results.setdefault(ident, recorded)
    in_doubt = set(started) if phase == "tools" else set()
    plan = []
    for ident, entry in uses.items():
        result: ToolResult | None = results.get(ident)
        if result is None and ident not in in_doubt:
            continue  # never ran (or its cycle was abandoned without a result)
        if result is not None and result.get("status") == "error" and not nesting(entry["name"]):
            continue
        plan.append({**entry, "result": result})
    plan.reverse()
    return plan


async def _undo_one(
    session: DurableSession, lookup: Lookup, record: dict[str, Any], entry: dict[str, Any], call: dict[str, Any] | None
) -> None:
    """Run one planned undo unless its outcome is recorded: mark it started (a write), run the
    compensation, record the outcome (an ``undo`` step). ``call`` is the planned call's input and
    result as the run's messages hold them (they do not change once the unwinding began)."""
    ident = entry["toolUseId"]
    state = record["undos"].get(ident)
    if state is not None and state.get("outcome") in OUTCOMES:
        return  # done before: never again
    redo = state is not None  # started, no outcome recorded: in doubt, run again with the same key
    attempts = 1 if state is None else int(state.get("attempts", 1)) + 1
    record["undos"][ident] = {"attempts": attempts}
    await session.sync_async()  # the start marker: a crash from here on leaves this undo in doubt
    call_key = f"{session.run_id}/{ident}"
    given = None if call is None else call.get("input")
    undo = Undo(
        run_id=session.run_id,
        tool_use_id=ident,
        tool=entry["name"],
        input=given if isinstance(given, dict) else {},
        result=None if call is None else call.get("result"),
        idempotency_key=call_key,
        undo_key=call_key + UNDO_SUFFIX,
    )
    nested = entry.get("run_id")
    if isinstance(nested, str):  # the call's nested run: unwound in its turn (its own record: never twice)
        error: str | None = await _unwind_nested(session.store, nested, lookup(entry["name"]), str(record["trigger"]))
    elif call is None:  # the run's messages were changed behind the store's back: nothing to undo it from
        error = f"call {ident!r} is no longer in the run's stored messages"
    else:
        error = await run_undo(_compensation_of(lookup, entry["name"]), undo)
    outcome = {"attempts": attempts, "outcome": "undone" if error is None else "failed"}
    if error is not None:
        outcome["error"] = error
        _log.warning("run %r: the compensation of %s (%s) failed: %s", session.run_id, entry["name"], ident, error)
    record["undos"][ident] = outcome
    info = {"toolUseId": ident, "name": entry["name"], "outcome": outcome["outcome"], "error": error, "in_doubt": undo.in_doubt}
    if isinstance(nested, str):
        info["run_id"] = nested
    if redo:
        info["redo"] = True  # this undo was in doubt (started, no outcome): it ran again with the same key
    await session.sync_async("undo", status="compensating", undo=info)


async def run_undo(compensate: Callable[[Undo], Any] | None, undo: Undo) -> str | None:
    """Run ``compensate`` (a sync one in a worker thread) for ``undo``; the error it raised, as
    text, or None (a compensation's failure is an outcome, never raised: the unwinding goes on).

    Args:
        compensate: The tool's compensation (None: it has none now: that is the error).
        undo: The call to undo.
    """
    if compensate is None:
        return f"tool {undo.tool!r} has no compensation now (it had one when the unwinding began)"
    try:
        if inspect.iscoroutinefunction(compensate):
            await compensate(undo)
        else:
            value = await asyncio.to_thread(compensate, undo)
            if inspect.isawaitable(value):
                await value
    except Exception as exc:  # a compensation's failure is recorded; the unwinding goes on
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


async def _unwind_nested(store: RunStore, run_id: str, tool: Tool | None, trigger: str) -> str | None:
    """Compensate nested run ``run_id`` with the tools ``tool`` (the call's) names for it; what
    failed in it, as text, or None. A nested run that is gone (deleted meanwhile) or whose record
    is damaged fails this undo; one held by a live owner raises (the unwinding waits for it)."""
    tools = None if tool is None else tool.nested_tools()
    if tools is None:
        return f"nested run {run_id!r}: its call's tool is gone, or names no tools for it now"
    try:
        report = await compensate_run(store, run_id, tools, trigger=trigger)
    except (RunNotFoundError, CompensationError, StoreError) as exc:
        return f"nested run {run_id!r}: {type(exc).__name__}: {exc}"[:300]
    if not report.failed:
        return None
    return f"nested run {run_id!r}: " + "; ".join(f"{u.tool} ({u.tool_use_id}): {u.error}" for u in report.failed)[:300]


def _plan(session: DurableSession, lookup: Lookup, calls: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The unwinding's plan, newest first: each performed call whose tool has a compensation, and
    each call of a tool nesting runs whose nested run exists (of this incarnation: ``run_id``)."""
    plan: list[dict[str, Any]] = []
    parent = session.store.head(session.run_id)
    for call in calls:
        entry = {"toolUseId": call["toolUseId"], "name": call["name"], "in_doubt": call["result"] is None}
        tool = lookup(call["name"])
        if tool is not None and tool.nests_runs:
            child = child_run_id(session.run_id, call["toolUseId"])
            head = session.store.head(child)
            if head is not None and belongs(head, parent):
                plan.append({**entry, "run_id": child})
                continue
        failed = call["result"] is not None and call["result"].get("status") == "error"
        if not failed and _compensation_of(lookup, call["name"]) is not None:
            plan.append(entry)
    return plan


def _named(entry: dict[str, Any]) -> dict[str, Any]:
    """A plan entry as the ``unwind`` step shows it (the call, and its nested run if any)."""
    shown = {"toolUseId": entry["toolUseId"], "name": entry["name"]}
    if "run_id" in entry:
        shown["run_id"] = entry["run_id"]
    return shown


def _compensation_of(lookup: Lookup, name: str) -> Callable[[Undo], Any] | None:
    tool = lookup(name)
    return None if tool is None else getattr(tool, "compensate", None)


def _nests(lookup: Lookup, name: str) -> bool:
    tool = lookup(name)
    return tool is not None and tool.nests_runs


def _performed(session: DurableSession, lookup: Lookup) -> dict[str, dict[str, Any]]:
    """The run's performed calls by ``toolUseId``, newest first (see :func:`performed_calls`)."""
    cursor = session.run.cursor
    calls = performed_calls(_all_messages(session), cursor.results, cursor.started, cursor.phase, lambda name: _nests(lookup, name))
    return {call["toolUseId"]: call for call in calls}


def _all_messages(session: DurableSession) -> list[Message]:
    """Every message the run ever stored (dropped and rewritten segments too), so a call a
    conversation manager removed from the live conversation is still undone."""
    live = session.run.messages
    if session.start_seq == 0 or session.next_seq == 0:
        return list(live)
    return [*session.store.messages(session.run_id, 0, session.start_seq), *live]


def _stop_reason(report: CompensationReport) -> str:
    """The ``unwound`` step's stop reason: the totals, and each failed undo by name."""
    text = f"compensated ({report.trigger}): {sum(u.outcome == 'undone' for u in report.undos)} undone"
    if report.failed:
        text += "; failed: " + ", ".join(f"{u.tool} ({u.tool_use_id}): {u.error}" for u in report.failed)
    return text[:1000]


def _check_trigger(trigger: str) -> None:
    if trigger not in TRIGGERS:
        raise CompensationError(f"trigger {trigger!r} is not one of {', '.join(TRIGGERS)}")


def _check_record(run_id: str, record: Any) -> None:
    """A stored compensation record is data: its shape is checked before it is followed."""
    ok = (
        isinstance(record, dict)
        and isinstance(record.get("trigger"), str)
        and isinstance(record.get("done"), bool)
        and isinstance(record.get("undos"), dict)
        and isinstance(record.get("plan"), list)
        and all(isinstance(e, dict) and isinstance(e.get("toolUseId"), str) and isinstance(e.get("name"), str) for e in record["plan"])
        and all(e.get("run_id", child_run_id(run_id, e["toolUseId"])) == child_run_id(run_id, e["toolUseId"]) for e in record["plan"])
        and all(isinstance(v, dict) for v in record["undos"].values())
    )
    if not ok:
        raise StoreError(f"run {run_id!r}: head.compensation: not a compensation record; the store is damaged")


def check_not_compensated(session: DurableSession) -> None:
    """Refuse to go on with a run that was compensated (or is being): its effects are undone.

    Args:
        session: The run about to go on.
    """
    if session.compensation is not None:
        state = "was compensated" if session.compensation.get("done") else "is being compensated (finish it: `tether compensate RUN`)"
        raise CompensationError(f"run {session.run_id!r} {state}: its effects were undone, so it cannot go on; start a new run")


__all__ = [
    "OUTCOMES",
    "TRIGGERS",
    "CompensationReport",
    "UndoOutcome",
    "check_not_compensated",
    "compensate_run",
    "performed_calls",
    "report_of",
    "run_undo",
    "unwind",
]
