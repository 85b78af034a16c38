"""Glue between an agent and a store: bind a run, settle in-doubt calls, drive a turn.

``durable_stream`` is what ``Agent`` calls when a ``run_id`` is given. It takes the run's lease,
loads the run (or reuses the in-memory copy of the agent's :class:`DurableBinding` when the
store has nothing newer: the same revision of the same incarnation), and drives one invocation with a :class:`DurableDriver`, syncing once
more when it ends. The agent passes everything in explicitly (its binding, store, host and an
``adopt`` callback that makes the loaded run the agent's run state); nothing here writes to the
agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._json import json_copy
from .._prompt import Prompt
from ..answers import answers_from, check_answers
from ..errors import ConfigurationError, LeaseLostError, PromptError, RunNotFoundError
from ..events import AgentEvent
from ..interrupts import Interrupt, interrupt_id
from ..invocation import InvocationOptions, invoke_stream
from ..loop.core import CoreConfig, LoopCore, tool_uses_of
from ..loop.host import LoopHost
from ..loop.state import RunState
from ..manifest import ResumeCheck, Verdict, pending_calls
from ..manifest.verdict import migrate_pending
from ..tools.base import to_result
from ..turn import is_waiting, stored_result
from .compensation import check_not_compensated, unwind
from .driver import DurableDriver
from .history import turn_status
from .incarnation import incarnation_of
from .indoubt import IN_DOUBT, RERUN, InDoubtCall
from .session import DurableSession, run_state_of
from .sqlite import SQLiteStore
from .store import Lease, RunStore, validate_run_id

Reconcile = Callable[[InDoubtCall], Any]
"""Decides an in-doubt call of a non-idempotent tool: ``RERUN`` or the result to record."""

_log = logging.getLogger(__name__)


class DurableBinding:
    """One agent's attachment to durable runs; the agent owns it (one per agent).

    ``base`` is the agent's run state as it was when it first ran durably: a new run starts
    from a copy of it (system prompt, initial messages, state). ``session`` is the run the agent
    drove last, reused without reloading while the store has nothing newer. ``writer`` is the
    one thread the agent's store commits run on when they could block the event loop (a
    dedicated thread hands work over several times faster than the loop's default pool).
    """

    __slots__ = ("base", "session", "writer")

    def __init__(self, initial: RunState) -> None:
        self.base = _copy_base(initial)
        self.session: DurableSession | None = None
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="tether-store-writer")


def default_store() -> SQLiteStore:
    """A store on ``$TETHER_HOME/runs.db``, else in the user's data directory (see :mod:`tether.home`)."""
    from ..home import default_store_path

    return SQLiteStore(default_store_path())


async def durable_stream(
    binding: DurableBinding,
    store: RunStore,
    host: LoopHost,
    run_id: str,
    prompt: Prompt,
    options: InvocationOptions,
    *,
    resume: bool,
    reconcile: Reconcile | None,
    adopt: Callable[[RunState], None],
    parent_run_id: str | None = None,
    check: ResumeCheck | None = None,
    compensate_on: tuple[str, ...] = (),
) -> AsyncGenerator[AgentEvent, None]:
    """One turn (or the resumption of one) of the durable run ``run_id``.

    Args:
        binding: The agent's binding (its base state and last session).
        store: Where the run lives.
        host: The loop's services.
        run_id: The run.
        prompt: The normalized prompt (``continue`` to resume).
        options: The per-call options of the invocation.
        resume: The caller asked to resume: a missing run is an error, not a new run.
        reconcile: Decides in-doubt calls of non-idempotent tools (None: ask through an interrupt).
        adopt: Makes the loaded run the agent's run state.
        parent_run_id: The run this one is nested in (a multi-agent child run), recorded in a
            new run's head and listed by ``store.list_runs()``; an existing run keeps its own.
        check: The resume contract's check of the run's manifest against the agent.
        compensate_on: When a turn that ends this way is compensated at once (its performed
            effects undone, :mod:`tether.durable.compensation`): ``failed`` (it raised),
            ``cancelled`` (``agent.cancel()``), ``budget`` (stopped on its budget).
    """
    validate_run_id(run_id)
    if parent_run_id is not None and validate_run_id(parent_run_id) == run_id:
        raise ConfigurationError(f"run {run_id!r} cannot be nested in itself (parent_run_id={parent_run_id!r})")
    with store.lease(run_id) as lease:
        session = await _attach(binding, store, host, run_id, reconcile, adopt, lease, check)
        if session is None:
            if resume:
                raise RunNotFoundError(f"no run {run_id!r} in the store; start it with agent(prompt, run_id={run_id!r})")
            session = _new_run(binding, store, run_id, adopt, lease)
            session.nest_in(parent_run_id)
            session.manifest = None if check is None else check.manifest
        check_not_compensated(session)
        run = session.run
        finished = run.cursor.phase == "idle"
        if prompt.kind == "continue" and (finished or is_waiting(run)):
            result = stored_result(run)  # nothing to do: no model call
            status = turn_status(result.stop_reason, run)
            if session.timeline.status != status:  # killed after the turn's last step, before its end was recorded
                await session.sync_async("turn_end", status=status, stop_reason=result.stop_reason)
            yield {"type": "result", "result": result}
            return
        if prompt.kind in ("messages", "checkpoint") and not finished:
            raise PromptError(
                f"run {run_id!r} has an unfinished turn; call agent.resume({run_id!r}) to finish it "
                "(answering its interrupts if it waits for some) before sending a new prompt"
            )
        if prompt.kind == "interrupt_responses":
            prompt = _answer_in_doubt(session, prompt.responses)
        session.turn_active = False
        session.timeline.status = "running"
        try:
            async for event in invoke_stream(host, run, prompt, options, functools.partial(DurableDriver, session=session)):
                if event["type"] == "result":
                    reason = event["result"].stop_reason
                    await session.sync_async("turn_end", status=turn_status(reason, session.run), stop_reason=reason)
                    trigger = {"cancelled": "cancelled", "budget_exhausted": "budget"}.get(str(reason))
                    if trigger in compensate_on:
                        await unwind(session, host.tools.get, str(trigger))
                yield event
        except BaseException as exc:
            session.dirty = True  # the in-memory run may be ahead of the store: reload next time
            if isinstance(exc, Exception) and "failed" in compensate_on:
                with contextlib.suppress(Exception):  # a write committing behind is stored first (a failure: broken)
                    await session.settle()
            if _record_stop(session, exc) == "failed" and "failed" in compensate_on:
                try:
                    await unwind(session, host.tools.get, "failed")
                except Exception as problem:
                    exc.add_note(f"(compensating run {run_id!r} failed too: {type(problem).__name__}: {problem})")
            raise


async def _attach(
    binding: DurableBinding,
    store: RunStore,
    host: LoopHost,
    run_id: str,
    reconcile: Reconcile | None,
    adopt: Callable[[RunState], None],
    lease: Lease,
    check: ResumeCheck | None = None,
) -> DurableSession | None:
    current = binding.session
    if current is not None and current.run_id == run_id and current.store is store and not current.dirty:
        head = store.head(run_id)  # the same revision of the same incarnation: nothing newer, not another run of the id
        if head is not None and int(head.get("rev", -1)) == current.rev and incarnation_of(head) == current.incarnation:
            verdict = _verdict(check, current.manifest, current.run, run_id)  # the code may have changed between turns
            current.lease = lease  # this turn's ownership
            adopt(current.run)
            if verdict is not None and check is not None:
                _take_prompt(current.run, binding)
                await _record_verdict(current, verdict, check)
            return current
    stored = store.load(run_id)
    if stored is None:
        return None
    if stored.head.get("strands") is not None:  # written by tether.strands' session manager for a real Strands agent
        raise ConfigurationError(
            f"run {run_id!r} is a Strands agent's run (written by tether.strands.TetherSessionManager); open it with that "
            "Strands agent's session manager, not a tether.Agent"
        )
    run = run_state_of(stored)
    verdict = _verdict(check, stored.head.get("manifest"), run, run_id)  # refused before anything is adopted or written
    adopt(run)
    session = DurableSession(store, run_id, run, stored, lease, binding.writer)
    binding.session = session
    if verdict is not None and check is not None:
        _take_prompt(run, binding)
        await _record_verdict(session, verdict, check)
    await _settle_in_doubt(host, session, reconcile)
    return session


def _verdict(check: ResumeCheck | None, recorded: Any, run: RunState, run_id: str) -> Verdict | None:
    """The verdict of resuming ``run`` (its stored manifest ``recorded``) with the agent now;
    raises IncompatibleResumeError (nothing written) when it is refused."""
    if check is None:
        return None
    return check.check(recorded, pending_calls(run), what=f"run {run_id!r}")


def _take_prompt(run: RunState, binding: DurableBinding) -> None:
    """A resumed run (its verdict accepted) calls the model with its agent's system prompt now:
    the prompt is part of the agent's definition (its manifest records its digest), so a deploy
    that changed it applies from the next model call, pending work or not, and the head stores
    the prompt in use. An agent that continues someone else's run with that run's prompt passes
    it as its own (``tether resume`` does)."""
    if run.system_prompt != binding.base.system_prompt:
        run.system_prompt = binding.base.system_prompt


async def _record_verdict(session: DurableSession, verdict: Verdict, check: ResumeCheck) -> None:
    """Apply an accepted verdict: migrate the pending calls (the migrated message is stored as
    a new row), make the agent's manifest the run's, and record a ``verdict`` step unless the
    verdict is ``same`` (nothing to record)."""
    run = session.run
    if verdict.migrated:
        migrate_pending(run, verdict.migrated)
    session.manifest = check.manifest
    if "manifest" in run.interrupt_state:
        run.interrupt_state["manifest"] = check.manifest
    if verdict.verdict == "same":
        return
    await session.sync_async("verdict", status=session.timeline.status, verdict=verdict.to_dict())


def _record_stop(session: DurableSession, exc: BaseException) -> str | None:
    """Best effort: a turn that raised (``failed``) or was cancelled by Ctrl-C / task
    cancellation (``stopped``, distinct from ``interrupted``: waiting for answers) records that status, so ``tether runs`` shows it. Other
    ``BaseException``s stand for the process dying and write nothing; so does a session whose
    last write failed, or a turn that failed before its loop began (nothing changed). Returns
    the status recorded, or None."""
    if session.broken or not session.turn_active or isinstance(exc, LeaseLostError):
        return None  # a fenced writer writes nothing more: the run belongs to its new owner
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        # a cancellation that says why (a server handing its run over at shutdown) records that reason
        said = exc.args[0] if isinstance(exc, asyncio.CancelledError) and exc.args and isinstance(exc.args[0], str) else None
        status, reason = "stopped", said or "cancelled (Ctrl-C or task cancellation)"
    elif isinstance(exc, Exception):
        status = "interrupted" if turn_status("", session.run) == "interrupted" else "failed"
        reason = f"{type(exc).__name__}: {exc}"[:200]
    else:
        return None
    try:
        session.sync("turn_end", status=status, stop_reason=reason)
    except Exception:
        return None
    return status


def _copy_base(run: RunState) -> RunState:
    return RunState(
        messages=list(run.messages),
        state=json_copy(run.state),
        conversation_manager_state=json_copy(run.conversation_manager_state),
        system_prompt=run.system_prompt,
    )


def _new_run(binding: DurableBinding, store: RunStore, run_id: str, adopt: Callable[[RunState], None], lease: Lease) -> DurableSession:
    run = _copy_base(binding.base)
    run.run_id = run_id
    adopt(run)
    session = DurableSession(store, run_id, run, lease=lease, writer=binding.writer)
    binding.session = session
    return session


async def _settle_in_doubt(host: LoopHost, session: DurableSession, reconcile: Reconcile | None) -> None:
    """Idempotent in-doubt calls are left to run again (same key), and so are calls that keep a
    handle of their work in the run (``Tool.keeps_handle``: an MCP task, polled, not redone);
    others are reconciled or turned into ``tether.in_doubt`` interrupts."""
    run = session.run
    cursor = run.cursor
    if cursor.phase != "tools" or not run.messages:
        return
    state = run.interrupt_state
    table = state.get("interrupts") or {}
    stopped = {item.get("tool_use_id") for item in table.values() if item.get("name") != IN_DOUBT}
    # A call whose in-doubt question is still unanswered was settled by the resume that asked it:
    # attaching again (another process, a restart, the answer itself) asks nothing new.
    asked = {item.get("tool_use_id") for item in table.values() if item.get("name") == IN_DOUBT and "response" not in item}
    started = set(cursor.started)
    core = LoopCore(run, CoreConfig())
    changed = False
    markers: list[dict[str, Any]] = []
    for use in tool_uses_of(run.messages[-1]):
        tool_use_id = use["toolUseId"]
        if tool_use_id not in started or tool_use_id in cursor.results or tool_use_id in stopped:
            continue
        session.timeline.in_doubt.add(tool_use_id)
        if tool_use_id in asked:
            continue
        marker = {"toolUseId": tool_use_id, "name": use["name"], "action": RERUN}
        markers.append(marker)
        tool = host.tools.get(use["name"])
        if tool is not None and tool.keeps_handle(run.state, tool_use_id):
            marker["action"] = "poll"  # it waits for the work its handle names (an MCP task), never redoes it
            continue
        if tool is None or tool.idempotent or tool.transactional:
            continue  # a transactional tool's effects rolled back with its unrecorded result: re-running it is safe
        call = InDoubtCall(session.run_id, use, f"{session.run_id}/{tool_use_id}")
        changed = True
        if reconcile is not None:
            answer = reconcile(call)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer != RERUN:
                core.tool_done(tool_use_id, to_result(tool_use_id, answer))
                marker["action"] = "reconciled"
            continue
        ident = interrupt_id("durable", tool_use_id, IN_DOUBT)
        state.setdefault("interrupts", {})[ident] = Interrupt(ident, IN_DOUBT, call.to_reason(), "durable", tool_use_id).to_dict()
        state["activated"] = True
        marker["action"] = "interrupt"
    if markers:
        _log.info("run %r resumed with calls in doubt (started, no result recorded): %s", session.run_id, _decisions(markers))
        status = "interrupted" if state.get("activated") else session.timeline.status
        await session.sync_async("resumed", status=status, in_doubt=markers)
    elif changed:
        await session.sync_async()


def _decisions(markers: list[dict[str, Any]]) -> str:
    """In-doubt decisions for the log: tool names, ids and actions (never inputs)."""
    return ", ".join(f"{m['name']} ({m['toolUseId']}): {m['action']}" for m in markers)


def _answer_in_doubt(session: DurableSession, responses: list[dict[str, Any]]) -> Prompt:
    """Apply answers to ``tether.in_doubt`` interrupts; returns the prompt for the rest."""
    run = session.run
    table = run.interrupt_state.get("interrupts") or {}
    # Every answer is checked before any is applied (tether.answers): a bad one changes nothing.
    if not run.interrupt_state.get("activated") or not table:
        return Prompt("interrupt_responses", responses=responses)  # the turn refuses them: nothing is interrupted
    where = "prompt[{i}].interruptResponse"
    check_answers(answers_from(responses, where), table, where=where)
    core = LoopCore(run, CoreConfig())
    others: list[dict[str, Any]] = []
    for item in responses:
        entry = table[item["interruptId"]]
        if entry.get("name") != IN_DOUBT:
            others.append(item)
            continue
        tool_use_id = entry["tool_use_id"]
        assert tool_use_id is not None  # an in-doubt interrupt is raised for one tool call
        answer = item["response"]
        entry["response"] = answer if answer == RERUN else "recorded"
        _log.info("run %r: in-doubt call %s answered: %s", session.run_id, tool_use_id, "rerun" if answer == RERUN else "result recorded")
        if answer != RERUN:
            core.tool_done(tool_use_id, to_result(tool_use_id, answer))
    if isinstance(run.interrupt_state.get("context"), dict):
        run.interrupt_state["context"] = run.cursor.to_dict()
    if not others:
        return Prompt("continue")
    return Prompt("interrupt_responses", responses=others)
