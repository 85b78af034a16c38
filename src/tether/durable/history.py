"""Time travel: the append-only step rows of a run, and the run summaries of a store.

A *step* is one checkpoint of a run at a cycle boundary — ``turn_start`` (the prompt is
recorded), ``after_model``, ``after_tools``, ``turn_end`` — plus ``resumed`` (a resume found
in-doubt tool calls), ``forked`` (the first step of a fork) and ``verdict`` (a resume, or a turn
whose agent's definition changed, was judged against the run's manifest: the verdict and its
differences; see :mod:`tether.manifest`). Each step row is small and
written once, in the same atomic store write as the head it describes: its number, position,
cycle index, message seq, UTC time, what the timeline shows (model latency and tokens, tool
names, durations and error flags, in-doubt markers) and a copy of that head. The head is
constant-size (the messages are rows of their own), so a step costs O(1) bytes however long
the run gets, and the head copy plus the message rows below its ``next_seq`` rebuild the run
exactly as it was at that step, which is what :func:`tether.durable.fork.fork_run` needs.

Times are stamped by :func:`tether._clock.now_iso`, the format snapshots use. How a step row is
written and read back is the row codec's business (:mod:`tether.durable.codec`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, cast

from .._clock import now_iso
from ..errors import StoreError
from ..interrupts import pending_interrupts
from ..loop.core import tool_uses_of
from ..loop.state import RunState
from ..types import InterruptState, Message, MetricsData, ToolResult
from .head import HeadFields
from .ids import child_run_id

STEP_POSITIONS = ("turn_start", "after_model", "after_tools", "turn_end", "resumed", "forked", "verdict", "unwind", "undo", "unwound")
"""Where a step can be recorded, in cycle order (not the checkpoint positions of the loop); the
last three are a compensation's (:mod:`tether.durable.compensation`): its start, one undo's
outcome, its end."""
STATUSES = ("running", "finished", "interrupted", "stopped", "paused", "failed", "compensating", "compensated", "compensation_failed")
"""The statuses a head (and a step) records: ``interrupted`` waits for answers to its interrupts
(human in the loop), ``stopped`` was cancelled (Ctrl-C, task cancellation) and goes on with a
plain resume, ``paused`` stopped at a checkpoint; ``compensating`` is unwinding its effects (a
``tether compensate`` finishes it), ``compensated`` undid them all, ``compensation_failed``
undid them but a compensation raised (the ``unwound`` step names it)."""
LISTED_STATUSES = (
    "running",
    "stalled",
    "stopped",
    "paused",
    "interrupted",
    "finished",
    "failed",
    "compensating",
    "compensated",
    "compensation_failed",
    "corrupt",
)
"""The statuses ``list_runs()`` reports (those of :data:`STATUSES`, ``stalled``: no live owner, and
``corrupt``), in the order ``tether runs --status`` and ``GET /runs?status=`` list them."""
CORRUPT = "corrupt"
"""The status ``list_runs`` reports for a run whose head cannot be read (``RunSummary.problem`` says why)."""


@dataclass(frozen=True)
class Step:
    """One checkpoint of a run (see the module docstring); ``head`` rebuilds the run there.

    ``cycle_index`` is the cycle the boundary belongs to (``after_model`` and ``after_tools``
    of one cycle share it); ``head["cursor"]["cycle_index"]`` is the cursor as it was.

    Attributes:
        step: The step's number in the run, from 1.
        position: Where it was recorded: one of :data:`STEP_POSITIONS`.
        cycle_index: The cycle the boundary belongs to.
        seq: The message sequence number the step's conversation ends before.
        message_count: How many messages the live conversation held.
        created_at: When the step was written (UTC, ISO 8601).
        status: The run's status then: one of :data:`STATUSES`.
        stop_reason: The stop reason, at a step that ended an invocation.
        model: The model call of an ``after_model`` step: latency and tokens.
        tools: The tool calls the step recorded: names, durations, error flags.
        in_doubt: The in-doubt calls a ``resumed`` step found, and how they were decided.
        results: The ``toolUseId`` of every tool result recorded by this step.
        forked_from: ``{"run_id", "step"}`` of the run a ``forked`` step was copied from.
        head: The head as it was at this step (it rebuilds the run there).
        verdict: The compatibility verdict a ``verdict`` step recorded
            (:meth:`tether.manifest.Verdict.to_dict`), else None.
        undo: What a compensation step did: an ``unwind`` step the calls it will undo
            (``{"trigger", "plan"}``), an ``undo`` step one undo's outcome (``{"toolUseId",
            "name", "outcome", "error", "in_doubt"}``), an ``unwound`` step the totals; else None.
    """

    step: int
    position: str
    cycle_index: int
    seq: int
    message_count: int
    created_at: str
    status: str
    stop_reason: str | None = None
    model: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    in_doubt: list[dict[str, Any]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    forked_from: dict[str, Any] | None = None
    head: dict[str, Any] = field(default_factory=dict, repr=False)
    verdict: dict[str, Any] | None = None
    undo: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON data (the head copy included)."""
        return {
            "step": self.step,
            "position": self.position,
            "cycle_index": self.cycle_index,
            "seq": self.seq,
            "message_count": self.message_count,
            "created_at": self.created_at,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "model": self.model,
            "tools": self.tools,
            "in_doubt": self.in_doubt,
            "results": self.results,
            "forked_from": self.forked_from,
            "verdict": self.verdict,
            "undo": self.undo,
            "head": self.head,
        }


@dataclass
class StepTail:
    """Where a reader that follows a run's steps stands (an event stream): the last step it read,
    and that step's head as stored, so the next ``store.history(run_id, after=tail)`` fetches only
    the steps after it (their head deltas apply to the head kept here) and moves the tail to the
    last of them. Make one per run followed (``StepTail()``: before the first step); its fields
    are the store's business. A run id deleted and created again (another incarnation) is read
    from its keyframes again, never through a head of the old run.

    Attributes:
        step: The number of the last step read (0: none yet).
        head: That step's head as the store holds it (packed: blob references, not values);
            None when unknown (the next read starts from a keyframe).
        incarnation: The incarnation of the run read (a head of another one is never used).
    """

    step: int = 0
    head: Any = field(default=None, repr=False)
    incarnation: str | None = None


@dataclass(frozen=True)
class RunSummary:
    """One line of ``store.list_runs()``: a run's status and totals, read from its head.

    A run whose head cannot be read is listed with status :data:`CORRUPT`, zero totals and the
    reason in ``problem`` (``None`` for every readable run). ``parent_run_id`` names the run a
    nested (multi-agent child) run was started from; ``None`` for a top-level run.

    Attributes:
        run_id: The run.
        status: ``running``, ``stalled``, ``paused``, ``interrupted`` (waits for answers to
            its interrupts), ``stopped`` (cancelled by Ctrl-C or task cancellation; a plain
            resume goes on), ``finished``, ``failed``, ``compensating``, ``compensated``,
            ``compensation_failed`` or ``corrupt``.
        turns: How many invocations (turns) the run has had.
        cycles: Model-call cycles over the whole run.
        total_tokens: Tokens over the whole run.
        created_at: When the run was created (UTC, ISO 8601), if known.
        updated_at: When it was last written, if known.
        stop_reason: How its last invocation stopped.
        steps: How many step rows its history holds.
        problem: Why the head could not be read (status ``corrupt``); None otherwise.
        parent_run_id: The run a nested run was started from; None for a top-level run.
    """

    run_id: str
    status: str
    turns: int
    cycles: int
    total_tokens: int
    created_at: str | None
    updated_at: str | None
    stop_reason: str | None = None
    steps: int = 0
    problem: str | None = None
    parent_run_id: str | None = None


class Timeline:
    """The step bookkeeping of one :class:`~tether.durable.session.DurableSession`.

    It numbers steps, counts turns, remembers the metrics at the previous step (so an
    ``after_model`` step reports that call's latency and tokens) and the durations of the tool
    calls of the open cycle, as the durable driver observed them.
    """

    def __init__(self, head: dict[str, Any] | None, metrics: MetricsData) -> None:
        head = head or {}
        self.steps = int(head.get("steps", 0))
        self.turns = int(head.get("turns", 0))
        self.status = str(head.get("status") or "running")
        self.created_at = str(head.get("created_at") or now_iso())
        parent = head.get("parent_run_id")
        self.parent_run_id: str | None = parent if isinstance(parent, str) else None
        parent_incarnation = head.get("parent_incarnation")
        self.parent_incarnation: str | None = parent_incarnation if isinstance(parent_incarnation, str) else None
        self.mark = model_figures(metrics)
        self.cycle = int((head.get("cursor") or {}).get("cycle_index", 0))
        self.started: dict[str, float] = {}
        self.durations: dict[str, float] = {}
        self.in_doubt: set[str] = set()
        self.children: dict[str, str] = {}  # tool-use id -> the nested run of the call (open cycle)
        self.stamp: str | None = None  # the time of the step being written (between begin and step)

    def head_fields(self) -> HeadFields:
        """The fields this timeline adds to the head row (a step's head is stamped with the
        step's own time, so that a step row need not record it twice)."""
        stamp = self.stamp or now_iso()
        fields: HeadFields = {
            "status": self.status,
            "turns": self.turns,
            "steps": self.steps,
            "created_at": self.created_at,
            "updated_at": stamp,
        }
        if self.parent_run_id is not None:
            fields["parent_run_id"] = self.parent_run_id
            if self.parent_incarnation is not None:
                fields["parent_incarnation"] = self.parent_incarnation
        return fields

    def tool_started(self, tool_use_id: str, *, nested: bool = False, run_id: str | None = None) -> None:
        """A call began; ``nested``: it is the nested run ``child_run_id(run_id, tool_use_id)``
        (an agent tool), named in the cycle's step row."""
        self.started[tool_use_id] = time.perf_counter()
        if nested and run_id is not None:
            self.children[tool_use_id] = child_run_id(run_id, tool_use_id)

    def tool_finished(self, tool_use_id: str) -> None:
        began = self.started.pop(tool_use_id, None)
        if began is not None:
            self.durations[tool_use_id] = (time.perf_counter() - began) * 1000.0

    def begin(self, position: str, status: str) -> None:
        """Account a step about to be written (before the head is built)."""
        self.steps += 1
        self.status = status
        self.stamp = now_iso()
        if position == "turn_start":
            self.turns += 1

    def step(self, position: str, run: RunState, head: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        """The step row for ``head`` (already counted by :meth:`begin`)."""
        cursor = run.cursor
        cycle = cursor.cycle_index
        if position == "after_model":
            cycle = self.cycle  # the model call closed nothing yet, or closed this very cycle
        elif position == "after_tools":
            cycle -= 1
        self.cycle = cursor.cycle_index
        row: dict[str, Any] = {
            "step": self.steps,
            "position": position,
            "cycle_index": cycle,
            "seq": int(head["next_seq"]),
            "message_count": int(head["next_seq"]) - int(head["start_seq"]),
            "created_at": self.stamp or now_iso(),
            "status": self.status,
            "stop_reason": info.get("stop_reason"),
            "model": None,
            "tools": [],
            "in_doubt": list(info.get("in_doubt") or []),
            "results": sorted(cursor.results),
            "forked_from": info.get("forked_from"),
            "verdict": info.get("verdict"),
            "undo": info.get("undo"),
            "head": head,
        }
        figures = model_figures(run.metrics)
        if position == "after_model":
            row["model"] = {key: figures[key] - self.mark[key] for key in figures if key != "model_call_count"}
        self.mark = figures
        self.stamp = None
        if position == "after_tools":
            row["tools"] = self._closed_cycle(run.messages)
        return row

    def _closed_cycle(self, messages: list[Message]) -> list[dict[str, Any]]:
        """Name, status, duration and in-doubt flag of each call of the cycle just closed."""
        if len(messages) < 2:
            return []
        results: dict[str, ToolResult] = {
            block["toolResult"]["toolUseId"]: block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block
        }
        tools = []
        for use in tool_uses_of(messages[-2]):
            ident = use["toolUseId"]
            result = results.get(ident)
            duration = self.durations.get(ident)
            call: dict[str, Any] = {
                "toolUseId": ident,
                "name": use["name"],
                "error": result is not None and result.get("status") == "error",
                "duration_ms": None if duration is None else round(duration, 3),
                "in_doubt": ident in self.in_doubt,
            }
            if ident in self.children:
                call["child_run_id"] = self.children[ident]
            tools.append(call)
        self.children.clear()
        self.durations.clear()
        self.started.clear()
        self.in_doubt.clear()
        return tools


def model_figures(metrics: MetricsData) -> dict[str, float]:
    """The cumulative model figures of ``metrics`` a step's ``model`` field is the change of."""
    usage = metrics.get("usage") or {}
    return {
        "latency_ms": float(metrics.get("model_latency_ms", 0.0)),
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "total_tokens": int(usage.get("total_tokens", 0)),
        "model_call_count": int(metrics.get("model_call_count", 0)),
    }


def turn_status(stop_reason: str, run: RunState) -> str:
    """The run status a finished invocation leaves: paused (a checkpoint, or a budget that ran
    out: both resume), interrupted or finished."""
    if stop_reason in ("checkpoint", "budget_exhausted"):
        return "paused"
    if stop_reason == "interrupt" or (run.interrupt_state.get("activated") and pending_interrupts(run.interrupt_state)):
        return "interrupted"
    return "finished"


def summary_of(run_id: str, head: dict[str, Any]) -> RunSummary:
    """The summary of a run from its head (heads written before steps existed included).

    ``head`` is a head the row codec validated (``tether.durable.codec.decode_head``); a head
    that is not raises :class:`StoreError` naming the run, never another exception.
    """
    try:
        return _summary(run_id, head)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        raise StoreError(f"run {run_id!r}: head: cannot summarize it ({type(exc).__name__}: {exc}); the store is damaged") from None


def _summary(run_id: str, head: dict[str, Any]) -> RunSummary:
    metrics = head.get("metrics") or {}
    cursor = head.get("cursor") or {}
    status = head.get("status")
    if status not in STATUSES:
        interrupts = cast(InterruptState, head.get("interrupt_state") or {})  # a stored head: JSON as written
        waiting = bool(interrupts.get("activated")) and bool(pending_interrupts(interrupts))
        status = "interrupted" if waiting else "finished" if cursor.get("phase") == "idle" else "running"
    return RunSummary(
        run_id=run_id,
        status=str(status),
        turns=int(head.get("turns", 0)),
        cycles=int(metrics.get("cycle_count", 0)),
        total_tokens=int((metrics.get("usage") or {}).get("total_tokens", 0)),
        created_at=head.get("created_at"),
        updated_at=head.get("updated_at"),
        stop_reason=cursor.get("stop_reason"),
        steps=int(head.get("steps", 0)),
        parent_run_id=head.get("parent_run_id"),
    )


def missing_step(run_id: str, number: Any, count: int) -> StoreError:
    """The error for a step number the run does not have."""
    have = f"steps 1..{count}" if count else "no steps (it was written before step history existed)"
    return StoreError(f"run {run_id!r} has no step {number!r}: it has {have}; see `tether show {run_id}`")
