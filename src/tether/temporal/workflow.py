"""`AgentWorkflow`: the loop core, driven deterministically inside a Temporal workflow.

The workflow owns a :class:`~tether.loop.state.RunState` whose messages are *compact* (see
:mod:`tether.temporal.claimcheck`) and only the last few of them: the core reads nothing
else. Each effect becomes activities (one per model call, one per tool call, parallel tools
as parallel activities), and the outcomes are folded into the core exactly as the local
driver folds them. The conversation itself lives in the blob store, named by one reference,
so neither history nor the state carried by continue-as-new grows with it.

Interrupts wait inside the workflow for an ``answer_interrupts`` update (or signal); the
``snapshot`` query returns the run's current state (compact; the client expands it).

Deploys: the run carries its manifest (:mod:`tether.manifest`, recorded by ``tether.describe``).
Where the run may meet other code (interrupt answers, a continued execution: continue-as-new,
a promoted or continued run, a child answered) the ``tether.check_resume`` local activity judges
it on the worker running it (behind the ``tether.resume-verdict`` patch): an incompatible change
refuses the answers (the update fails with ``IncompatibleResumeError``, the run still waits) or
fails a continued execution, before anything changes; migrations rewrite the pending calls.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import FailureError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from .._prompt import Prompt, PromptKind
    from ..budget import Budget, BudgetPolicy, ModelPrice
    from ..errors import IncompatibleResumeError, PromptError, TetherError
    from ..interrupts import apply_responses, pending_interrupts
    from ..loop.core import CoreConfig, LoopCore, ModelOutcome
    from ..loop.effects import CallModel, CloseCycle, Pause, RunTools, Stop
    from ..loop.state import Cursor, RunState, new_metrics
    from ..manifest import pending_calls
    from ..manifest.verdict import migrate_pending
    from ..metrics import diff_metrics
    from ..turn import begin_turn, copy_metrics, last_assistant, mark_interrupted, resume_interrupt, settle_idle
    from ..types import Message, MetricsData, SystemContentBlock
    from . import activity_io as io
    from .agent_tool_calls import PATCH_CHILD_BUDGET
    from .errors import to_failure
    from .inbox import Answers, Batch
    from .retries import activity_retry_policy
    from .shapes import (
        WORKFLOW_NAME,
        AgentRunResult,
        AgentSettings,
        AgentSnapshot,
        CarriedState,
        CompactMessage,
        CompactRecord,
        WirePrompt,
        WorkflowOptions,
    )
    from .tool_rounds import PATCH_CHILD_WORKFLOWS, PATCH_TOOL_FAILURES, ToolRounds
    from .unwinding import PATCH_COMPENSATION, Unwinding

TAIL = 4
PATCH_LOCAL_BOOKENDS = "tether.local-bookends"
"""The patch id of running ``tether.describe`` and ``tether.finish`` as local activities (two task
queue round trips less per invocation; runs recorded before it used regular activities)."""
PATCH_TOOL_SOURCES = "tether.tool-sources"
"""The patch id of listing the tools of the agent's tool sources (MCP servers) in a
``tether.list_tools`` activity (runs recorded before it never listed them)."""
PATCH_RESUME_VERDICT = "tether.resume-verdict"
"""The patch id of judging interrupt answers and continued executions against the worker's
code (the ``tether.check_resume`` activity; runs recorded before it resumed unchecked)."""
PATCHES: tuple[str, ...] = (PATCH_LOCAL_BOOKENDS, PATCH_TOOL_SOURCES, PATCH_RESUME_VERDICT, PATCH_TOOL_FAILURES, PATCH_CHILD_WORKFLOWS)
PATCHES += (PATCH_CHILD_BUDGET, PATCH_COMPENSATION)
"""Every patch the agent workflow asks about (a fork decides them all first: see ``run``)."""
DEFAULT_OPTIONS: WorkflowOptions = {
    "cycles_per_execution": 500,
    "model_timeout_s": 600.0,
    "model_heartbeat_s": 30.0,
    "tool_timeout_s": 3600.0,
    "heartbeat_s": 30.0,
    "tool_attempts": 5,
    "hook_attempts": 5,
    "tool_failure": "error_result",
}
"""Per-run options (the client may override any of them)."""


@workflow.defn(name=WORKFLOW_NAME)
class AgentWorkflow(ToolRounds, Unwinding):
    """One invocation of a registered agent, durable across workers, restarts and time.

    The interrupt handlers and the queries are :class:`~tether.temporal.base_workflow.RunWorkflow`'s
    (``_params`` holds a WorkflowParams payload); its rounds of tool calls are
    :class:`~tether.temporal.tool_rounds.ToolRounds`' (agent tools' calls
    :class:`~tether.temporal.agent_tool_calls.AgentToolCalls`'); its unwinding (compensation)
    :class:`~tether.temporal.unwinding.Unwinding`'s.
    """

    def __init__(self) -> None:
        super().__init__()
        self._run: RunState | None = None
        self._core: LoopCore | None = None
        self._conv: str | None = None
        self._unpersisted = 0
        self._settings: AgentSettings = {}
        self._options: WorkflowOptions = DEFAULT_OPTIONS.copy()
        self._before: MetricsData = new_metrics()
        self._resumed_from: str | None = None
        self._mark = 0.0  # workflow time when the run's running time last counted against its budget
        self._manifest: dict[str, Any] | None = None  # the run's manifest (tether.manifest)
        self._nested: Budget | None = None  # what an agent tool's child of the current round may spend

    # -- run ------------------------------------------------------------------------------

    @workflow.run
    async def run(self, params: dict[str, Any]) -> AgentRunResult:
        # ``params`` is a WorkflowParams payload (typed as JSON here: see tether.temporal.shapes).
        self._params = params
        requested: WorkflowOptions | None = params.get("options")
        self._options.update(requested or {})
        carried: CarriedState | None = params.get("carried")
        if carried is not None and carried.get("forked_from") is not None:  # a fork: every patch decided before any local
            for patch in PATCHES:  # activity (a query may close the workflow task after one; a decision then would not replay)
                workflow.patched(patch)
        continued = carried is not None
        if carried is None or carried.get("settings") is None:
            agent: io.AgentRef = {"agent": params["agent"], "config": params.get("config") or {}}
            if params.get("budget") is not None:
                agent["budget"] = params["budget"]  # an agent tool's child: what its parent's budget leaves
            described: io.Described = await self._activity("tether.describe", agent, local=workflow.patched(PATCH_LOCAL_BOOKENDS))
            if carried is None:
                carried = {
                    "conv": described["conv"],
                    "tail": described["tail"],
                    "unpersisted": 0,
                    "state": described["state"],
                    "conversation_manager_state": described["conversation_manager_state"],
                    "interrupt_state": {},
                    "system_prompt": described["system_prompt"],
                    "model_state": {},
                    "cursor": Cursor().to_dict(),
                    "metrics": new_metrics(),
                }
                if described.get("manifest") is not None:
                    carried["manifest"] = described["manifest"]
            settings: AgentSettings = described["settings"]
            if settings.get("sources") and workflow.patched(PATCH_TOOL_SOURCES):
                listed: io.ListedTools = await self._activity("tether.list_tools", agent, attempts=int(self._options["hook_attempts"]))
                settings["source_tools"] = listed["source_tools"]
                settings["non_idempotent"] = list(listed["non_idempotent"])
                settings["has_tools"] = bool(listed["has_tools"])
                if not continued and listed.get("manifest") is not None:
                    carried["manifest"] = listed["manifest"]  # with the listed tools
            carried["settings"] = settings
        self._load(carried)
        try:
            if continued:
                await self._judge_continued()
            if not carried.get("started"):
                wire = cast(WirePrompt, params.get("prompt") or {"kind": "continue"})
                added = self._begin(wire)
                await self._invocation_hook("before")
                await self._messages_hook(added)
            return await self._drive()
        except TetherError as exc:
            if self._run is not None and self._compensates("failed"):
                await self._unwind("failed")
            raise to_failure(exc) from None
        except BaseException as exc:
            if not is_cancelled_exception(exc):
                if isinstance(exc, FailureError) and self._run is not None and self._compensates("failed"):
                    await self._unwind("failed")  # the run fails after its effects are undone
                raise
            # Like Agent.cancel(): tool calls without results get an error result, the
            # conversation stays valid, and the invocation ends with stop reason "cancelled".
            _, core = self._state()
            added = core.cancel()
            self._unpersisted += len(added)
            self._trim_tail()
            self._inbox.release()  # update handlers still waiting for their answers return
            if self._compensates("cancelled"):
                await self._unwind("cancelled")
            return await self._finish(Stop("cancelled"))

    def _load(self, carried: CarriedState) -> None:
        run = RunState(
            messages=_run_messages(carried["tail"]),
            state=carried.get("state") or {},
            conversation_manager_state=carried.get("conversation_manager_state") or {},
            interrupt_state=carried.get("interrupt_state") or {},
            system_prompt=_run_system_prompt(carried.get("system_prompt")),  # compact (or None)
            model_state=carried.get("model_state") or {},
            cursor=Cursor.from_dict(carried["cursor"]),
            metrics=carried["metrics"],
            run_id=self._params.get("run_id"),
        )
        self._run = run
        recorded = carried.get("manifest") or run.interrupt_state.get("manifest")  # a promoted run's: its interrupt's
        self._manifest = recorded if isinstance(recorded, dict) else None
        self._conv = carried.get("conv")
        self._unpersisted = int(carried.get("unpersisted", 0))
        settings = carried["settings"]
        assert settings is not None  # run() asked the agent for them when the carried state had none
        self._settings = settings
        self._before = carried.get("before_metrics") or copy_metrics(run.metrics)
        self._resumed_from = carried.get("resumed_from")
        self._core = LoopCore(
            run,
            CoreConfig(
                max_cycles=settings.get("max_cycles"),
                max_tokens=settings.get("max_tokens"),
                has_other_tools=bool(settings.get("has_tools", True)),
                budget=_budget_policy(settings),
            ),
        )
        self._status = "running"

    def _begin(self, wire: WirePrompt) -> list[Any]:
        """Start or resume the invocation through the turn protocol, as a local agent does
        (:func:`tether.turn.begin_turn`); ``None`` as the prompt waits for interrupt answers.

        Returns the prompt messages added (none for a resume).
        """
        run, core = self._state()
        kind = wire.get("kind")
        if kind not in ("messages", "interrupt_responses", "continue"):
            raise PromptError(f"prompt.kind {kind!r} is unknown; use messages, interrupt_responses or continue")
        prompt = Prompt(cast("PromptKind", kind), _run_messages(wire.get("messages") or []), list(wire.get("responses") or []))
        turn = begin_turn(run, prompt, continue_waits=True)
        self._before = turn.before
        self._resumed_from = turn.resumed_from
        added = turn.start(core, prompt)
        self._unpersisted += len(added)
        return added

    def _state(self) -> tuple[RunState, LoopCore]:
        assert self._run is not None and self._core is not None
        return self._run, self._core

    def _tick(self) -> None:
        """Count the workflow time since the last count against the run's budget (workflow time
        is deterministic: a replay counts the same)."""
        _, core = self._state()
        now = workflow.time()
        core.elapsed(now - self._mark)
        self._mark = now

    async def _drive(self) -> AgentRunResult:
        run, core = self._state()
        self._mark = workflow.time()
        while True:
            effect = core.next_effect()
            if isinstance(effect, CallModel):
                await self._call_model(effect)
                self._done_here += 1
                self._tick()
            elif isinstance(effect, RunTools):
                await self._run_tools(effect)
                self._tick()
            elif isinstance(effect, CloseCycle):
                self._unpersisted += len(effect.messages)
                self._trim_tail()
                await self._messages_hook(effect.messages)
            elif isinstance(effect, Pause):
                continue
            elif isinstance(effect, Stop):
                self._tick()
                if effect.reason != "interrupt":
                    return await self._finish(effect)
                if self._params.get("nested"):  # a child workflow: its parent asks and answers
                    mark_interrupted(run, None, self._manifest)
                    return await self._finish(effect)
                await self._wait_for_answers()
                self._mark = workflow.time()  # waiting for answers is not running
                continue
            cursor = run.cursor
            if (
                cursor.phase == "model"
                and cursor.stop_reason is None
                and self._continue_as_new_due(int(self._options["cycles_per_execution"]))
            ):
                await workflow.wait_condition(workflow.all_handlers_finished)
                params = dict(self._params)
                params["carried"] = self._carry(started=True)
                params["prompt"] = None
                params.pop("allow", None)  # what the caller accepted was for the execution it started
                workflow.continue_as_new(params)

    # -- effects --------------------------------------------------------------------------

    def _pending(self) -> list[Any]:
        run, _ = self._state()
        return run.messages[len(run.messages) - self._unpersisted :] if self._unpersisted else []

    def _trim_tail(self) -> None:
        run, _ = self._state()
        keep = max(TAIL, self._unpersisted)
        if len(run.messages) > keep:
            del run.messages[: len(run.messages) - keep]

    async def _call_model(self, effect: CallModel) -> None:
        run, core = self._state()
        params: io.CallModelInput = {
            **self._base(),  # type: ignore[typeddict-item]  # an AgentCall: it never holds source_tools
            "conv": self._conv,
            "pending": self._pending(),
            "system_prompt": cast("CompactMessage | None", run.system_prompt),  # compact: see _run_system_prompt
            "tool_choice": effect.tool_choice,
            "model_state": run.model_state,
            "state": run.state,
            "conversation_manager_state": run.conversation_manager_state,
            "cycle_index": run.cursor.cycle_index,
        }
        if effect.max_tokens is not None:
            params["max_tokens"] = effect.max_tokens
        if self._settings.get("source_tools"):
            params["source_tools"] = self._settings["source_tools"]
        out: io.ModelOutput = await self._activity(
            "tether.call_model",
            params,
            timeout=float(self._options["model_timeout_s"]),
            attempts=int(self._settings.get("model_attempts") or 6),
            heartbeat=float(self._options["model_heartbeat_s"]),
        )
        self._conv = out["conv"]
        self._unpersisted = 0
        if out.get("rebased"):
            run.conversation_manager_state = out["conversation_manager_state"]
            length = int(out["length"])
            if length < len(run.messages):
                del run.messages[: len(run.messages) - length]
        if out.get("model_state") is not None:
            run.model_state = out["model_state"]
        message = cast("Message", out["message"])  # compact: see _run_messages
        added = core.model_done(ModelOutcome(message, out["stop_reason"], out.get("usage") or {}, float(out.get("latency_ms", 0.0))))
        self._unpersisted += len(added)
        self._trim_tail()
        await self._messages_hook(added)

    # -- interrupts -----------------------------------------------------------------------

    async def _wait_for_answers(self) -> None:
        run, core = self._state()
        mark_interrupted(run, None, self._manifest)
        await self._take_checked_answers(self._resume_with)
        core.resume()

    async def _resume_with(self, batch: Batch) -> None:
        """Take one batch of answers: checked against the worker's code first (behind the
        patch), then recorded; a refused batch (a ``TetherError``) changes nothing."""
        run, _ = self._state()
        if not workflow.patched(PATCH_RESUME_VERDICT):
            resume_interrupt(run, batch.answers, None)
            return
        apply_responses(copy.deepcopy(run.interrupt_state), batch.answers)  # a signal's answers: refused before the check
        checked = await self._check_resume(batch.allow)
        resume_interrupt(run, batch.answers, None)
        self._adopt_checked(checked)

    # -- deploys --------------------------------------------------------------------------

    async def _judge_continued(self) -> None:
        """Judge a continued execution (continue-as-new, a promoted or continued run, a child
        given its answers) against this worker's code; refused: the execution fails, unchanged."""
        run, _ = self._state()
        if self._manifest is None and not pending_calls(run):
            return  # nothing recorded, nothing pending: nothing to judge
        if not workflow.patched(PATCH_RESUME_VERDICT):
            return
        allow = self._params.get("allow")
        self._adopt_checked(await self._check_resume(list(allow) if isinstance(allow, list) else []))

    async def _check_resume(self, allow: list[str]) -> io.CheckedResume:
        """The ``tether.check_resume`` verdict of resuming here; raises IncompatibleResumeError
        (naming every blocking difference) when refused, before the run changes."""
        run, _ = self._state()
        params: io.CheckResumeInput = {
            **self._base(),  # type: ignore[typeddict-item]  # an AgentCall
            "manifest": self._manifest,
            "pending": cast("list[CompactMessage]", pending_calls(run)),  # compact tool calls
            "allow": [str(name) for name in allow],
            "conv": self._conv,
            "persisted": self._unpersisted == 0,
        }
        if self._settings.get("source_tools"):
            params["source_tools"] = self._settings["source_tools"]
        checked: io.CheckedResume = await self._activity(
            "tether.check_resume", params, attempts=int(self._options["hook_attempts"]), local=True
        )
        if checked.get("refused"):
            raise IncompatibleResumeError(str(checked["refused"]))
        return checked

    def _adopt_checked(self, checked: io.CheckedResume) -> None:
        """Apply an accepted verdict: the migrated pending calls, the conversation rewritten for
        them, the deployed system prompt (when it changed), the worker's manifest as the run's."""
        run, _ = self._state()
        migrated = checked.get("migrated") or {}
        if migrated:
            migrate_pending(run, {call: (str(entry["name"]), entry["input"]) for call, entry in migrated.items()})
            if checked.get("conv") is not None:
                self._conv = checked["conv"]
        if "system_prompt" in checked:  # a deploy changed the prompt: it applies from the next model call
            run.system_prompt = _run_system_prompt(checked["system_prompt"])
        self._manifest = checked["manifest"]
        if "manifest" in run.interrupt_state:
            run.interrupt_state["manifest"] = checked["manifest"]

    def _label(self) -> str:
        run, _ = self._state()
        return f"run {run.run_id!r}"

    def _check_answers(self, responses: Answers) -> None:
        run, _ = self._state()
        apply_responses(copy.deepcopy(run.interrupt_state), responses)

    def _pending_interrupts(self) -> list[CompactRecord]:
        return [] if self._run is None else [dict(i.to_dict()) for i in pending_interrupts(self._run.interrupt_state)]

    # -- queries (the handlers are RunWorkflow's) -------------------------------------------

    def _started(self) -> bool:
        return self._run is not None

    def _snapshot(self) -> AgentSnapshot:
        """The run's current state, compact (:meth:`TetherClient.snapshot` expands it)."""
        return {"status": self._status, "run": self._carry(started=True)}

    # -- helpers --------------------------------------------------------------------------

    def _carry(self, *, started: bool) -> CarriedState:
        """The run as the workflow carries it (continue-as-new, the snapshot query, its result)."""
        run, _ = self._state()
        carried: CarriedState = {
            "conv": self._conv,
            "tail": cast("list[CompactMessage]", list(run.messages)),  # compact: see _run_messages
            "unpersisted": self._unpersisted,
            "state": run.state,
            "conversation_manager_state": run.conversation_manager_state,
            "interrupt_state": run.interrupt_state,
            "system_prompt": cast("CompactMessage | None", run.system_prompt),  # see _run_system_prompt
            "model_state": run.model_state,
            "cursor": run.cursor.to_dict(),
            "metrics": run.metrics,
            "settings": self._settings,
            "started": started,
            "before_metrics": self._before,
            "resumed_from": self._resumed_from,
        }
        if self._manifest is not None:
            carried["manifest"] = self._manifest
        return carried

    def _conversation(self) -> dict[str, Any]:
        run, _ = self._state()
        cursor = run.cursor
        where = {"results": cursor.results, "started": cursor.started, "phase": cursor.phase}
        return {"conv": self._conv, "pending": self._pending(), "cursor": where}

    def _base(self) -> io.AgentCall:
        params = self._params
        base: io.AgentCall = {"agent": params["agent"], "config": params.get("config") or {}, "run_id": params.get("run_id")}
        if params.get("trace"):
            base["trace"] = params["trace"]  # the client's invocation span: activities open their spans under it
        return base

    async def _activity(
        self,
        name: str,
        params: Mapping[str, object],
        *,
        timeout: float = 60.0,
        attempts: int = 5,
        heartbeat: float | None = None,
        summary: str | None = None,
        local: bool = False,
    ) -> Any:
        """Run one activity; its retries follow the agent's RetryPolicy (delays) with ``attempts``.

        ``local`` runs it as a local activity (on the worker running the workflow task, with no
        task queue round trip): for short bookkeeping activities only.
        """
        retry: RetryPolicy = activity_retry_policy(self._settings.get("retry"), attempts)
        if local:
            return await workflow.execute_local_activity(
                name, params, start_to_close_timeout=timedelta(seconds=timeout), retry_policy=retry, summary=summary
            )
        return await workflow.execute_activity(
            name,
            params,
            start_to_close_timeout=timedelta(seconds=timeout),
            heartbeat_timeout=None if heartbeat is None else timedelta(seconds=heartbeat),
            retry_policy=retry,
            summary=summary,
        )

    async def _invocation_hook(self, event: str, messages: list[Any] | None = None) -> None:
        if not self._settings.get("invocation_hooks"):
            return
        params: io.HookInput = {
            **self._base(),  # type: ignore[typeddict-item]  # an AgentCall: it never holds messages
            "event": event,
            "resumed": self._resumed_from is not None,
            "resumed_from": self._resumed_from,
        }
        if messages is not None:
            params["messages"] = messages
        await self._activity("tether.invocation_hook", params, attempts=int(self._options["hook_attempts"]))

    async def _messages_hook(self, added: list[Any]) -> None:
        if added:
            await self._invocation_hook("messages", messages=added)

    async def _finish(self, effect: Stop) -> AgentRunResult:
        run, _ = self._state()
        if effect.reason == "budget_exhausted" and self._compensates("budget"):
            await self._unwind("budget")
        message = last_assistant(run.messages)
        idle = settle_idle(run)
        params: io.FinishInput = {
            **self._base(),
            "conv": self._conv,
            "pending": self._pending(),
            "conversation_manager_state": run.conversation_manager_state,
            "manage": idle,
        }
        finished: io.Finished = await self._activity("tether.finish", params, local=workflow.patched(PATCH_LOCAL_BOOKENDS))
        self._conv = finished["conv"]
        self._unpersisted = 0
        run.conversation_manager_state = finished["conversation_manager_state"]
        length = int(finished["length"])
        if length < len(run.messages):
            del run.messages[: len(run.messages) - length]
        await self._invocation_hook("after")
        self._status = "done"
        await workflow.wait_condition(workflow.all_handlers_finished)
        totals = copy_metrics(run.metrics)
        # The state is in "run" (compact); the result does not repeat it.
        out: AgentRunResult = {
            "stop_reason": effect.reason,
            "message": cast("CompactMessage | None", message),
            "metrics": totals,
            "invocation": diff_metrics(totals, self._before),
            "run": self._carry(started=False),
        }
        if self._compensation is not None:
            out["compensation"] = self._compensation
        if effect.reason == "interrupt":  # a nested child's: its parent asks them
            out["interrupts"] = [dict(i.to_dict()) for i in pending_interrupts(run.interrupt_state)]
        return out


def _budget_policy(settings: AgentSettings) -> BudgetPolicy | None:
    """The loop core's budget policy from the agent's settings (None: no budget)."""
    budget = settings.get("budget")
    if budget is None:
        return None
    price = budget.get("price")
    return BudgetPolicy(
        Budget.from_dict(budget["limits"], "settings.budget.limits"),
        None if price is None else ModelPrice(float(price[0]), float(price[1])),
        int(budget.get("fixed_tokens", 0)),
    )


def _run_messages(tail: list[CompactMessage]) -> list[Message]:
    """The workflow's run holds compact messages as its messages (a new list).

    They keep every part the loop core reads (roles, tool-use ids and names, tool-result ids and
    statuses); only activities expand them.
    """
    return cast("list[Message]", list(tail))


def _run_system_prompt(system: CompactMessage | None) -> list[SystemContentBlock] | None:
    """The workflow's run holds the compact system *message* where a local run holds the system
    blocks: the core never reads it, and the model activity expands it."""
    return cast("list[SystemContentBlock] | None", system)


__all__ = ["DEFAULT_OPTIONS", "WORKFLOW_NAME", "AgentWorkflow"]
