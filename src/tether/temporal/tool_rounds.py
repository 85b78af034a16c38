"""A round of tool calls in :class:`~tether.temporal.workflow.AgentWorkflow`: one activity per
call (the calls of a round at once, or one after another for a sequential executor), an agent
tool's call as a child workflow (:class:`~tether.temporal.agent_tool_calls.AgentToolCalls`), and
each outcome folded into the loop core as the local driver folds it.

A tool activity that fails for good (its attempts lost to crashes or timeouts) does not fail
the run: an idempotent tool's call gets an error result the model can act on (option
``tool_failure``), and a call of a tool declared ``idempotent=False``, which runs as a single
attempt, is in doubt and is settled like a local durable run settles it: the agent's
``reconcile`` callable (run as the ``tether.reconcile`` activity) or a ``tether.in_doubt``
interrupt. That behaviour is behind the ``tether.tool-failures`` patch, so runs whose
histories were recorded before it replay as they ran.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from ..durable.indoubt import IN_DOUBT, RERUN
    from ..loop.effects import RunTools
    from ..metrics import add_figures, record_tool
    from ..types import InterruptRecord, ToolResult
    from . import activity_io as io
    from .agent_tool_calls import AgentToolCalls
    from .errors import IN_DOUBT_FAILURE
    from .shapes import CompactRecord, WorkflowOptions

PATCH_TOOL_FAILURES = "tether.tool-failures"
"""The patch id of error results and in-doubt settling for failed tool activities (runs recorded
before it failed instead)."""
PATCH_CHILD_WORKFLOWS = "tether.child-workflows"
"""The patch id of running agent tools' calls as child workflows (runs recorded before it ran
the child inside the parent's tool activity)."""


class ToolRounds(AgentToolCalls):
    """The tool rounds of an agent workflow (a part of ``AgentWorkflow``, which supplies the run,
    its settings and options, its activities and the messages it has not persisted yet)."""

    _options: WorkflowOptions
    _unpersisted: int

    def _base(self) -> io.AgentCall:
        raise NotImplementedError

    def _trim_tail(self) -> None:
        raise NotImplementedError

    async def _messages_hook(self, added: list[Any]) -> None:
        raise NotImplementedError

    async def _activity(self, *args: Any, **kwargs: Any) -> Any:
        """Run one activity (``AgentWorkflow._activity``: name, params, timeout, attempts, ...)."""
        raise NotImplementedError

    async def _run_tools(self, effect: RunTools) -> None:
        _, core = self._state()
        uses = effect.tool_uses
        if self._settings.get("sequential"):
            for i, use in enumerate(uses):
                self._nested = core.round_budget(uses[i:], self._nests, at_once=False)  # what the calls before it left
                if not await self._run_one(use):
                    return
            return
        self._nested = core.round_budget(uses, self._nests, at_once=True)  # the calls running at once share it
        await asyncio.gather(*(self._run_one(use) for use in uses))

    def _nests(self, name: str) -> bool:
        """Whether calls of tool ``name`` are nested runs (agent tools: child workflows)."""
        return name in (self._settings.get("agent_tools") or ())

    async def _run_one(self, tool_use: Any) -> bool:
        run, core = self._state()
        tool_use_id = tool_use["toolUseId"]
        table = run.interrupt_state.get("interrupts") or {}
        doubt = next((item for item in table.values() if item.get("tool_use_id") == tool_use_id and item.get("name") == IN_DOUBT), None)
        if doubt is not None and "response" in doubt:
            # The answer to a tether.in_doubt interrupt: "rerun", or the result to record.
            if doubt["response"] != RERUN:
                answered: io.ReconcileInput = {**self._base(), "tool_use": tool_use, "answer": doubt["response"]}
                doubt["response"] = "recorded"
                out: io.ToolOutcome = await self._activity("tether.reconcile", answered, attempts=int(self._options["hook_attempts"]))
                return await self._record(tool_use, out)
            del table[doubt["id"]]  # a re-run that is lost again asks again
        name = str(tool_use.get("name"))
        if name in (self._settings.get("agent_tools") or ()) and workflow.patched(PATCH_CHILD_WORKFLOWS):
            return await self._run_agent_tool(tool_use)
        interrupts = {ident: cast("CompactRecord", item) for ident, item in table.items() if item.get("tool_use_id") == tool_use_id}
        core.tool_started(tool_use_id)
        params: io.RunToolInput = {**self._base(), "tool_use": tool_use, "interrupts": interrupts, "state": run.state}  # type: ignore[typeddict-item]
        if self._settings.get("source_tools"):
            params["source_tools"] = self._settings["source_tools"]
        single = name in (self._settings.get("non_idempotent") or ())
        while True:
            try:
                out = await self._activity(
                    "tether.run_tool",
                    params,
                    timeout=float(self._options["tool_timeout_s"]),
                    attempts=1 if single else int(self._options["tool_attempts"]),
                    heartbeat=float(self._options["heartbeat_s"]),
                    summary=name,
                )
            except ActivityError as exc:
                settled = await self._tool_failed(tool_use, exc, single)
                if settled is None:
                    continue  # reconciled as "rerun"
                out = settled
            break
        if "interrupt" in out:
            self._fold_extras(out)  # absent from outcomes recorded before agent tools: replays as it ran
            core.tool_interrupted([cast("InterruptRecord", out["interrupt"])])
            return False
        return await self._record(tool_use, out)

    def _fold_extras(self, out: io.ToolOutcome) -> None:
        """Fold a tool outcome's state changes and the usage it rolled up (an agent tool's child)
        into the run."""
        run, _ = self._state()
        changes = out.get("state_changes")
        if changes:
            run.state.update(changes["set"])
            for key in changes["deleted"]:
                run.state.pop(key, None)
        added = out.get("usage_added")
        if added:
            add_figures(run.metrics, added)

    async def _tool_failed(self, tool_use: Any, exc: ActivityError, single: bool) -> io.ToolOutcome | None:
        """What a tool activity that failed for good stands for: a run_tool-like outcome, or None
        to run the call again. Failures no retry can fix (a broken agent factory, a value over
        the hard limit) and cancellation still end the run."""
        cause = exc.cause
        in_doubt = isinstance(cause, ApplicationError) and cause.type == IN_DOUBT_FAILURE
        if is_cancelled_exception(exc) or (isinstance(cause, ApplicationError) and cause.non_retryable and not in_doubt):
            raise exc
        if not workflow.patched(PATCH_TOOL_FAILURES):
            raise exc  # a run recorded before the patch failed here
        name = str(tool_use.get("name"))
        if single or in_doubt:
            params: io.ReconcileInput = {**self._base(), "tool_use": tool_use}  # type: ignore[typeddict-item]  # no answer
            out: io.ToolOutcome = await self._activity("tether.reconcile", params, attempts=int(self._options["hook_attempts"]))
            return None if out.get("rerun") else out
        if self._options["tool_failure"] != "error_result":
            raise exc
        text = f"Tool {name!r} did not complete: {_failure_text(exc)}. It produced no result; do not assume it ran."
        return {"result": {"toolUseId": tool_use["toolUseId"], "status": "error", "content": [{"text": text}]}}

    async def _record(self, tool_use: Any, out: io.ToolOutcome) -> bool:
        """Fold one tool outcome (``result``, ``state_changes``, ``duration_ms``) into the core."""
        run, core = self._state()
        tool_use_id = tool_use["toolUseId"]
        result = out["result"]
        self._fold_extras(out)
        record_tool(run.metrics, tool_use["name"], float(out.get("duration_ms", 0.0)), result["status"] == "error")
        added = core.tool_done(tool_use_id, cast("ToolResult", result))  # compact: the core reads its id and status
        self._unpersisted += len(added)
        if added:
            self._trim_tail()
            await self._messages_hook(added)
        return True


def _failure_text(exc: ActivityError) -> str:
    """A model-readable account of why a tool activity failed for good."""
    cause = exc.cause
    attempts = f"({exc.retry_state.name.lower().replace('_', ' ')})" if exc.retry_state is not None else ""
    if isinstance(cause, TimeoutError):
        what = f"it timed out ({cause.type.name.lower().replace('_', '-') if cause.type is not None else 'timeout'})"
    else:
        what = f"it failed ({cause})" if cause is not None else "it failed"
    return f"{what} {attempts}".strip()


__all__ = ["PATCH_CHILD_WORKFLOWS", "PATCH_TOOL_FAILURES", "ToolRounds"]
