"""Glue between the agent and a store: bind a run, settle in-doubt calls, drive a turn.

``durable_stream`` is what ``Agent`` calls when a ``run_id`` is given. It takes the run's lease,
loads the run (or reuses the agent's in-memory copy when the store has nothing newer), and
drives one invocation with a :class:`DurableDriver`, syncing once more when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import weakref
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic

from .._json import json_copy
from .._prompt import normalize_prompt
from ..errors import InterruptError, PromptError, RunNotFoundError
from ..interrupts import Interrupt, interrupt_id, pending_interrupts
from ..loop.core import CoreConfig, LoopCore, tool_uses_of
from ..loop.driver import AgentEvent
from ..loop.invocation import invoke_stream
from ..loop.state import RunState
from ..metrics import Metrics, diff_metrics
from ..result import AgentResult
from ..tools.base import to_result
from .history import turn_status
from .indoubt import IN_DOUBT, RERUN, InDoubtCall
from .session import DurableSession, run_state_of
from .sqlite import SQLiteStore
from .store import RunStore, validate_run_id

if TYPE_CHECKING:
    from ..agent import Agent

_bound: weakref.WeakKeyDictionary[Agent, DurableSession] = weakref.WeakKeyDictionary()
_bases: weakref.WeakKeyDictionary[Agent, RunState] = weakref.WeakKeyDictionary()
_default_stores: dict[Path, SQLiteStore] = {}


def default_store() -> SQLiteStore:
    """``$TETHER_HOME/runs.db`` (``./.tether/runs.db`` when TETHER_HOME is unset)."""
    path = (Path(os.environ.get("TETHER_HOME") or ".tether") / "runs.db").resolve()
    store = _default_stores.get(path)
    if store is None:
        store = _default_stores[path] = SQLiteStore(path)
    return store


async def durable_stream(
    agent: Agent,
    run_id: str,
    prompt: Any,
    *,
    resume: bool,
    output_model: type[pydantic.BaseModel] | None,
    invocation_state: dict[str, Any] | None,
    forward_deltas: bool,
) -> AsyncGenerator[AgentEvent, None]:
    """One turn (or the resumption of one) of the durable run ``run_id``."""
    validate_run_id(run_id)
    if agent.store is None:
        agent.store = default_store()
    store: RunStore = agent.store
    with store.lease(run_id):
        session = await _attach(agent, store, run_id)
        if session is None:
            if resume:
                raise RunNotFoundError(f"no run {run_id!r} in the store; start it with agent(prompt, run_id={run_id!r})")
            session = _new_run(agent, store, run_id)
        run = session.run
        normalized = normalize_prompt(prompt)
        finished = run.cursor.phase == "idle"
        waiting = bool(run.interrupt_state.get("activated")) and bool(pending_interrupts(run.interrupt_state))
        if normalized.kind == "continue" and (finished or waiting):
            yield {"type": "result", "result": _stored_result(agent)}  # nothing to do: no model call
            return
        if normalized.kind in ("messages", "checkpoint") and not finished:
            raise PromptError(
                f"run {run_id!r} has an unfinished turn; call agent.resume({run_id!r}) to finish it "
                "(answering its interrupts if it waits for some) before sending a new prompt"
            )
        if normalized.kind == "interrupt_responses":
            prompt = _answer_in_doubt(session, normalized.responses)
        agent._durable = session
        session.turn_active = False
        session.timeline.status = "running"
        try:
            async for event in invoke_stream(
                agent, prompt, output_model=output_model, invocation_state=invocation_state, forward_deltas=forward_deltas
            ):
                if event["type"] == "result":
                    reason = event["result"].stop_reason
                    session.sync("turn_end", status=turn_status(reason, session.run), stop_reason=reason)
                yield event
        except BaseException as exc:
            session.dirty = True  # the in-memory run may be ahead of the store: reload next time
            _record_stop(session, exc)
            raise
        finally:
            agent._durable = None


async def _attach(agent: Agent, store: RunStore, run_id: str) -> DurableSession | None:
    if agent not in _bases:
        _bases[agent] = _copy_base(agent.run_state)
    current = _bound.get(agent)
    if current is not None and current.run_id == run_id and current.store is store and not current.dirty:
        head = store.head(run_id)
        if head is not None and int(head.get("rev", -1)) == current.rev:
            agent.run_state = current.run
            return current
    stored = store.load(run_id)
    if stored is None:
        return None
    run = run_state_of(stored)
    agent.run_state = run
    session = DurableSession(store, run_id, run, stored)
    _bound[agent] = session
    await _settle_in_doubt(agent, session)
    return session


def _record_stop(session: DurableSession, exc: BaseException) -> None:
    """Best effort: a turn that raised (``failed``) or was cancelled by Ctrl-C / task
    cancellation (``interrupted``) records that status, so ``tether runs`` shows it. Other
    ``BaseException``s stand for the process dying and write nothing; so does a session whose
    last write failed, or a turn that failed before its loop began (nothing changed)."""
    if session.broken or not session.turn_active:
        return
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        status, reason = "interrupted", "cancelled (Ctrl-C or task cancellation)"
    elif isinstance(exc, Exception):
        status = "interrupted" if turn_status("", session.run) == "interrupted" else "failed"
        reason = f"{type(exc).__name__}: {exc}"[:200]
    else:
        return
    with contextlib.suppress(Exception):
        session.sync("turn_end", status=status, stop_reason=reason)


def _copy_base(run: RunState) -> RunState:
    return RunState(
        messages=list(run.messages),
        state=json_copy(run.state),
        conversation_manager_state=json_copy(run.conversation_manager_state),
        system_prompt=run.system_prompt,
    )


def _new_run(agent: Agent, store: RunStore, run_id: str) -> DurableSession:
    base = _bases[agent]
    run = _copy_base(base)
    run.run_id = run_id
    agent.run_state = run
    session = DurableSession(store, run_id, run)
    _bound[agent] = session
    return session


async def _settle_in_doubt(agent: Agent, session: DurableSession) -> None:
    """Idempotent in-doubt calls are left to run again (same key); others are reconciled or
    turned into ``tether.in_doubt`` interrupts."""
    run = session.run
    cursor = run.cursor
    if cursor.phase != "tools" or not run.messages:
        return
    state = run.interrupt_state
    table: dict[str, Any] = state.get("interrupts") or {}
    stopped = {item.get("tool_use_id") for item in table.values() if item.get("name") != IN_DOUBT}
    started = set(cursor.started)
    core = LoopCore(run, CoreConfig())
    changed = False
    markers: list[dict[str, Any]] = []
    for use in tool_uses_of(run.messages[-1]):
        tool_use_id = use["toolUseId"]
        if tool_use_id not in started or tool_use_id in cursor.results or tool_use_id in stopped:
            continue
        session.timeline.in_doubt.add(tool_use_id)
        marker = {"toolUseId": tool_use_id, "name": use["name"], "action": RERUN}
        markers.append(marker)
        tool = agent.tool_registry.get(use["name"])
        if tool is None or tool.idempotent:
            continue
        call = InDoubtCall(session.run_id, use, f"{session.run_id}/{tool_use_id}")
        changed = True
        if agent.reconcile is not None:
            answer = agent.reconcile(call)
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
        status = "interrupted" if state.get("activated") else session.timeline.status
        session.sync("resumed", status=status, in_doubt=markers)
    elif changed:
        session.sync()


def _answer_in_doubt(session: DurableSession, responses: list[dict[str, Any]]) -> Any:
    """Apply answers to ``tether.in_doubt`` interrupts; returns the prompt for the rest."""
    run = session.run
    table: dict[str, Any] = run.interrupt_state.get("interrupts") or {}
    core = LoopCore(run, CoreConfig())
    others: list[dict[str, Any]] = []
    for i, item in enumerate(responses):
        ident = item.get("interruptId") if isinstance(item, dict) else None
        entry = table.get(ident) if isinstance(ident, str) else None
        if entry is None or entry.get("name") != IN_DOUBT:
            others.append(item)
            continue
        if "response" not in item:
            raise InterruptError(f"prompt[{i}].interruptResponse.response is missing (interrupt {entry['id']})")
        tool_use_id = entry["tool_use_id"]
        answer = item["response"]
        entry["response"] = answer if answer == RERUN else "recorded"
        if answer != RERUN:
            core.tool_done(tool_use_id, to_result(tool_use_id, answer))
    if isinstance(run.interrupt_state.get("context"), dict):
        run.interrupt_state["context"] = run.cursor.to_dict()
    if not others:
        return None
    return [{"interruptResponse": item} for item in others]


def _stored_result(agent: Agent) -> AgentResult:
    """The result of a run that has nothing left to do, rebuilt from its state."""
    run = agent.run_state
    message = next((m for m in reversed(run.messages) if m["role"] == "assistant"), None)
    metrics = Metrics(run.metrics, diff_metrics(run.metrics, run.metrics))
    interrupts = pending_interrupts(run.interrupt_state) if run.interrupt_state.get("activated") else []
    reason = "interrupt" if interrupts else (run.cursor.stop_reason or "end_turn")
    return AgentResult(reason, message, metrics, agent.state.get(), interrupts=interrupts)
