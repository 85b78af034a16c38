"""The turn protocol: how one invocation begins and ends, whoever drives it.

Local, durable and Temporal runs all go through these functions, so a prompt, an interrupt
answer or a checkpoint means the same thing everywhere:

- :func:`begin_turn` triages the prompt (a new call, or the resumption of a checkpoint, an
  interrupt or a paused cycle), refuses what cannot be accepted *before* the run changes, and
  starts or resumes the core;
- :func:`resume_interrupt` records interrupt answers and puts the cursor back in the cycle;
- :func:`finish_turn` ends an invocation: metrics, the last assistant message, the
  checkpoint or interrupt bookkeeping, and the :class:`~tether.result.AgentResult`;
- :func:`stored_result` rebuilds the result of a run that has nothing left to do.

Everything decided here is written into the :class:`~tether.loop.state.RunState`; nothing is
kept between calls. Each function raises a :class:`~tether.errors.TetherError` subclass for a
prompt the run cannot take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic

from ._capture import load, take
from ._prompt import Prompt
from .agent_state import state_copy
from .checkpoint import Checkpoint, check_metrics, check_position
from .checkpoint import parse_resumable as parse_checkpoint
from .errors import CheckpointError, InterruptError, PromptError, ShapeError, SnapshotError
from .interrupts import apply_responses, is_interrupted, pending_interrupts
from .loop.core import CoreConfig, LoopCore, tool_uses_of
from .loop.effects import Effect, Pause, Stop
from .loop.state import CheckpointPosition, Cursor, RunState
from .manifest import ResumeCheck, pending_calls
from .manifest.verdict import migrate_pending
from .metrics import Metrics, diff_metrics
from .result import AgentResult
from .snapshot import FIELDS
from .types import Message, MetricsData

if TYPE_CHECKING:
    from .conversation.base import ConversationManager


@dataclass(frozen=True, slots=True)
class Turn:
    """How an invocation begins.

    ``resumed_from`` is None for a new call, else ``"interrupt"``, ``"continue"`` or
    ``"checkpoint:<position>"``; ``before`` is a copy of the run's metrics at the start, for
    the invocation's own figures.
    """

    resumed_from: str | None
    before: MetricsData

    @property
    def resumed(self) -> bool:
        """True when the invocation continues an earlier one."""
        return self.resumed_from is not None

    def start(self, core: LoopCore, prompt: Prompt) -> list[Message]:
        """Start the core (a new call appends the prompt) or resume it; returns the messages added."""
        if self.resumed:
            core.resume()
            return []
        return core.start(prompt.messages)


def begin_turn(
    run: RunState,
    prompt: Prompt,
    *,
    output_tool: str | None = None,
    checkpointing: frozenset[CheckpointPosition] = frozenset(),
    manager: ConversationManager | None = None,
    continue_waits: bool = False,
    check: ResumeCheck | None = None,
) -> Turn:
    """Triage ``prompt`` against ``run``: refuse it, or record what it resumes.

    Interrupt answers and checkpoints are applied to ``run`` here; the core is started (or
    resumed) afterwards with :meth:`Turn.start`, once ``BeforeInvocation`` hooks have run.

    Args:
        run: The run (changed in place only when the prompt is accepted).
        prompt: The normalized prompt.
        output_tool: The structured-output tool of this call, if any; a paused structured
            call must be resumed with the same one.
        checkpointing: The positions this agent pauses at; a checkpoint prompt needs some.
        manager: The conversation manager a checkpoint's state is restored into.
        continue_waits: With ``None`` as the prompt, an interrupted run waits for its
            answers (Temporal) instead of refusing the prompt (local agents).
        check: Judges the resume of an interrupt or a checkpoint against the manifest the run
            recorded (:class:`~tether.errors.IncompatibleResumeError` before the run changes).
    """
    resumed_from = _triage(run, prompt, output_tool, checkpointing, manager, continue_waits, check)
    return Turn(resumed_from, copy_metrics(run.metrics))


def _triage(
    run: RunState,
    prompt: Prompt,
    output_tool: str | None,
    checkpointing: frozenset[CheckpointPosition],
    manager: ConversationManager | None,
    continue_waits: bool,
    check: ResumeCheck | None = None,
) -> str | None:
    """What ``prompt`` resumes (None: a new call). Every check happens before the run changes,
    so a refused prompt leaves the run as it was (still interrupted, still paused)."""
    if prompt.kind == "interrupt_responses":
        verdict = None
        if check is not None and run.interrupt_state.get("activated"):
            verdict = check.check(run.interrupt_state.get("manifest"), pending_calls(run), what="the interrupted run")
        resume_interrupt(run, prompt.responses, output_tool)
        if verdict is not None:
            _adopt_manifest(run, check, verdict.migrated)
        return "interrupt"
    if prompt.kind == "checkpoint":
        return "checkpoint:" + resume_checkpoint(run, prompt.checkpoint, output_tool, checkpointing, manager, check)
    interrupted = is_interrupted(run.interrupt_state)
    if interrupted and not (continue_waits and prompt.kind == "continue"):
        ids = ", ".join(f"{i.id} ({i.name})" for i in pending_interrupts(run.interrupt_state))
        raise InterruptError(
            f"the agent is waiting for answers to interrupts {ids}; send a list of "
            '{"interruptResponse": {"interruptId": ..., "response": ...}} blocks (or call agent.cancel() to give up on them)'
        )
    if prompt.kind == "continue":
        return "continue" if run.cursor.phase != "idle" or interrupted else None
    if run.cursor.phase == "tools":
        raise PromptError(
            "the agent stopped with tool calls pending (a checkpoint after_model or an error); "
            "call it with None to run them, or resume from the checkpoint"
        )
    return None


def resume_interrupt(run: RunState, responses: list[dict[str, Any]], output_tool: str | None) -> None:
    """Record interrupt answers and put the cursor back in the interrupted cycle.

    Args:
        run: The interrupted run (changed in place only when every answer is valid).
        responses: ``interruptResponse`` bodies (``{"interruptId": ..., "response": ...}``).
        output_tool: The structured-output tool of the resuming call, if any.
    """
    state = run.interrupt_state
    cursor: Cursor | None = None
    if state.get("activated"):
        cursor = _interrupted_cursor(run)
        mismatch = _output_tool_mismatch(state.get("output_tool"), output_tool, "the interrupted call is a structured-output call")
        if mismatch is not None:
            raise InterruptError(mismatch)
    saved = state.get("metrics")
    metrics = None if saved is None else _interrupt_metrics(saved)
    apply_responses(state, responses)
    if cursor is not None:
        run.cursor = cursor
    if metrics is not None:
        # The metrics as of the interrupt (nothing can run in between), so that a fresh agent
        # that loaded the snapshot keeps counting; consumed here so they never go stale.
        run.metrics = metrics
        del state["metrics"]


def _adopt_manifest(run: RunState, check: ResumeCheck | None, migrated: dict[str, tuple[str, Any]]) -> None:
    """After an accepted verdict: migrate the pending calls, and record the current manifest
    where the interrupt recorded the old one (so the next answer is judged against this code)."""
    if migrated:
        migrate_pending(run, migrated)
    if check is not None and "manifest" in run.interrupt_state:
        run.interrupt_state["manifest"] = check.manifest


def _interrupt_metrics(saved: Any) -> MetricsData:
    """The metrics saved with the interrupts, checked (an InterruptError names the bad field)."""
    try:
        return check_metrics(saved, "interrupt_state.metrics")
    except ShapeError as exc:
        raise InterruptError(str(exc)) from None


def _interrupted_cursor(run: RunState) -> Cursor | None:
    """The cursor saved with the interrupts (None: the run's own cursor is the one)."""
    context = run.interrupt_state.get("context")
    if isinstance(context, dict):
        try:
            cursor = Cursor.from_dict(context)
        except (KeyError, TypeError, ValueError) as exc:
            raise InterruptError(f"interrupt_state.context is malformed ({exc!r}); the interrupted cycle cannot be resumed") from None
        if cursor.phase != "tools":
            raise InterruptError(f"interrupt_state.context.phase must be 'tools', got {cursor.phase!r}")
        return cursor
    if run.cursor.phase != "tools":
        raise InterruptError(
            "interrupt_state has no context and the agent is not inside a tool cycle; load the snapshot taken at the interrupt"
        )
    return None


def resume_checkpoint(
    run: RunState,
    raw: Any,
    output_tool: str | None,
    checkpointing: frozenset[CheckpointPosition],
    manager: ConversationManager | None,
    check: ResumeCheck | None = None,
) -> CheckpointPosition:
    """Load a checkpoint (object or dict) into ``run``; returns its position.

    With ``check`` the checkpoint's manifest is judged against the agent's before the run
    changes (:class:`~tether.errors.IncompatibleResumeError`), and migrations are applied to
    the calls it left pending."""
    if not checkpointing or manager is None:
        raise CheckpointError(
            "this agent was built with checkpointing=False, so it cannot resume a checkpoint; "
            "build it with checkpointing=True (or the positions you use)"
        )
    # A Checkpoint object is validated like a dict: its fields may have been changed.
    header, snapshot = parse_checkpoint(raw.to_dict() if isinstance(raw, Checkpoint) else raw)
    mismatch = _output_tool_mismatch(header["output_tool"], output_tool, "this checkpoint was taken in a structured-output call")
    if mismatch is not None:
        raise CheckpointError(mismatch)
    position: CheckpointPosition = header["position"]
    verdict = None
    if check is not None:
        messages = run.messages if snapshot is None else _checkpoint_messages(raw)
        pending = tool_uses_of(messages[-1]) if position == "after_model" and messages else []
        verdict = check.check(header["manifest"], pending, what="the checkpoint")
    if snapshot is None:  # a marker without state (Strands 1.62): the agent's state is the run's
        check_position(position, run.messages, where="the agent's messages (the checkpoint carries no snapshot)")
    else:
        try:
            load(run, manager, snapshot)
        except SnapshotError as exc:
            raise CheckpointError(f"checkpoint.{exc}") from None
    run.metrics = header["metrics"]
    cycle_index: int = header["cycle_index"]
    trace = header["trace"]
    if position == "after_model":
        run.cursor = Cursor(phase="tools", cycle_index=cycle_index, trace=trace)
        _restore_finished_calls(run)
    else:
        run.cursor = Cursor(phase="model", cycle_index=cycle_index + 1, trace=trace)
    if verdict is not None and verdict.migrated:
        migrate_pending(run, verdict.migrated)
    return position


def _checkpoint_messages(raw: Any) -> list[Any]:
    """The messages of a checkpoint already validated by ``parse_resumable``."""
    data = (raw.to_dict() if isinstance(raw, Checkpoint) else raw).get("snapshot", {}).get("data", {})
    messages = data.get("messages")
    return messages if isinstance(messages, list) else []


def _restore_finished_calls(run: RunState) -> None:
    """After loading an ``after_model`` checkpoint taken when a tool paused mid-cycle (see
    ``LoopCore.tool_paused``), put back the results of the cycle's calls that had finished."""
    state = run.interrupt_state
    context = state.get("context")
    if state.get("activated") or not isinstance(context, dict) or context.get("phase") != "tools":
        return
    try:
        saved = Cursor.from_dict(context)
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint.snapshot.interrupt_state.context is malformed ({exc!r})") from None
    if saved.cycle_index == run.cursor.cycle_index:
        run.cursor.results = saved.results
    del state["context"]


def _output_tool_mismatch(saved: Any, given: str | None, what: str) -> str | None:
    """Why a paused structured-output call cannot be resumed with ``given`` (None: it can)."""
    if saved is None or saved == given:
        return None
    got = f"output_model for {given!r}" if given else "no output_model"
    return f"{what} for {saved!r} but it was resumed with {got}; pass output_model={saved} again"


def abandon_interrupts(run: RunState) -> list[Message]:
    """Give up on a run's pending interrupts (``Agent.cancel()`` while interrupted).

    The interrupted tool calls get a "cancelled" error result, so the conversation stays valid;
    tool calls of the cycle that already finished keep their results. Returns the messages added.
    """
    state = run.interrupt_state
    if not state.get("activated"):
        return []
    context = state.get("context")
    if isinstance(context, dict):
        try:
            run.cursor = Cursor.from_dict(context)
        except (KeyError, TypeError, ValueError) as exc:
            raise InterruptError(f"interrupt_state.context is malformed ({exc!r})") from None
    if state.get("metrics") is not None:
        run.metrics = _interrupt_metrics(state["metrics"])
    return LoopCore(run, CoreConfig()).cancel()


# -- ending an invocation ---------------------------------------------------------------------


def copy_metrics(metrics: MetricsData) -> MetricsData:
    """A copy of run metrics that later cycles cannot change."""
    copy = metrics.copy()
    copy["usage"] = metrics["usage"].copy()
    copy["tools"] = {name: figures.copy() for name, figures in metrics["tools"].items()}
    return copy


def last_assistant(messages: list[Message]) -> Message | None:
    """The assistant message this invocation ended with (None when it added none).

    Looks back over tool results only: an assistant message before a prompt belongs to an
    earlier call. O(1): at most the last three messages are read.
    """
    for index in range(len(messages) - 1, max(-1, len(messages) - 4), -1):
        message = messages[index]
        if message["role"] == "assistant":
            return message
        if not any("toolResult" in block for block in message["content"]):
            return None
    return None


def mark_interrupted(run: RunState, output_tool: str | None, manifest: dict[str, Any] | None = None) -> None:
    """Record what a resume of an interrupted invocation must match: its output tool, the
    metrics as of the interrupt (so a fresh agent that loads the snapshot keeps counting) and
    the agent's manifest (judged by the resume, see :mod:`tether.manifest`)."""
    state = run.interrupt_state
    if manifest is not None:
        state["manifest"] = manifest
    if output_tool is not None:
        state["output_tool"] = output_tool
    else:
        state.pop("output_tool", None)
    state["metrics"] = copy_metrics(run.metrics)


def settle_idle(run: RunState) -> bool:
    """At the end of a finished call, clear the per-call cursor flags; True when the run is idle
    (then the conversation manager's after-call management is due)."""
    cursor = run.cursor
    if cursor.phase != "idle":
        return False
    cursor.structured_output = None
    cursor.corrective_turn_used = False
    return True


def finish_turn(
    run: RunState,
    final: Effect | None,
    turn: Turn,
    *,
    manager: ConversationManager,
    output_model: type[pydantic.BaseModel] | None = None,
    output_tool: str | None = None,
    manifest: dict[str, Any] | None = None,
) -> AgentResult:
    """End an invocation that stopped with ``final`` (a Pause or a Stop) and build its result.

    Args:
        run: The run (changed in place: checkpoint/interrupt bookkeeping, management).
        final: The core's last effect.
        turn: What :func:`begin_turn` returned for this invocation.
        manager: The conversation manager (snapshots of checkpoints, after-call management).
        output_model: The structured-output model of the call, if any.
        output_tool: Its tool name.
        manifest: The agent's manifest, recorded with a checkpoint or an interrupt.
    """
    totals = copy_metrics(run.metrics)  # a copy: a result keeps describing its own call
    metrics = Metrics(totals, diff_metrics(totals, turn.before))
    message = last_assistant(run.messages)
    state = state_copy(run.state, "state")
    if isinstance(final, Pause):
        checkpoint = Checkpoint(
            position=final.position,
            cycle_index=final.cycle_index,
            snapshot=take(run, manager, list(FIELDS)),
            metrics=copy_metrics(totals),
            output_tool=output_tool,
            trace=run.cursor.trace,
            manifest=manifest,
        )
        return AgentResult("checkpoint", message, metrics, state, checkpoint=checkpoint)
    assert isinstance(final, Stop)
    if final.reason == "interrupt":
        mark_interrupted(run, output_tool, manifest)
        return AgentResult("interrupt", message, metrics, state, interrupts=pending_interrupts(run.interrupt_state))
    cursor = run.cursor
    structured = None
    if output_model is not None and cursor.structured_output is not None:
        structured = output_model.model_validate(cursor.structured_output)
    if settle_idle(run):
        manager.apply_management(run)
    return AgentResult(final.reason, message, metrics, state, structured_output=structured)


def is_waiting(run: RunState) -> bool:
    """True when the run stopped for interrupts that still wait for answers."""
    return bool(run.interrupt_state.get("activated")) and bool(pending_interrupts(run.interrupt_state))


def stored_result(run: RunState) -> AgentResult:
    """The result of a run with nothing left to do (finished, or waiting for answers), rebuilt
    from its state without calling the model. Its invocation metrics are zero."""
    message = next((m for m in reversed(run.messages) if m["role"] == "assistant"), None)
    metrics = Metrics(run.metrics, diff_metrics(run.metrics, run.metrics))
    interrupts = pending_interrupts(run.interrupt_state) if run.interrupt_state.get("activated") else []
    reason = "interrupt" if interrupts else (run.cursor.stop_reason or "end_turn")
    return AgentResult(reason, message, metrics, state_copy(run.state, "state"), interrupts=interrupts)


__all__ = [
    "Turn",
    "abandon_interrupts",
    "begin_turn",
    "copy_metrics",
    "finish_turn",
    "is_waiting",
    "last_assistant",
    "mark_interrupted",
    "resume_checkpoint",
    "resume_interrupt",
    "settle_idle",
    "stored_result",
]
