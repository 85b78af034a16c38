"""The activities that settle a run's pending tool calls when it goes on: an in-doubt call of a
non-idempotent tool (``tether.reconcile``) and the verdict of a resume on this worker's code
(``tether.check_resume``).

Both change nothing they do not return: the workflow applies the outcome, so an attempt lost and
run again is harmless. They are part of :class:`~tether.temporal.TetherActivities`.
"""

from __future__ import annotations

import inspect
from typing import Any, cast

from temporalio import activity

from ..durable.indoubt import IN_DOUBT, RERUN, InDoubtCall
from ..errors import IncompatibleResumeError
from ..interrupts import Interrupt, interrupt_id
from ..loop.state import RunState
from ..manifest import ResumeCheck
from ..manifest.verdict import migrate_pending
from ..tools.base import to_result
from ..types import Message, ToolUse
from .activity_io import CheckedResume, CheckResumeInput, ReconcileInput, ToolOutcome
from .activity_runtime import AgentActivitySet, fatal_errors
from .claimcheck import expand_tool_use
from .payloads import restore
from .shapes import CompactMessage


class ResumeActivities(AgentActivitySet):
    """``tether.reconcile`` and ``tether.check_resume`` (registered by ``TetherActivities``)."""

    # -- in-doubt tool calls --------------------------------------------------------------

    @activity.defn(name="tether.reconcile")
    async def reconcile(self, params: ReconcileInput) -> ToolOutcome:
        """Settle an in-doubt call of a non-idempotent tool, as a local durable run does.

        With ``answer`` (the response to a ``tether.in_doubt`` interrupt, not ``"rerun"``) the
        answer becomes the call's result. Otherwise the agent's ``reconcile(call)`` decides:
        ``{"result": ...}`` to record, or ``{"rerun": True}``; an agent without one gets
        ``{"interrupt": ...}``, the same ``tether.in_doubt`` interrupt a local run raises.
        """
        agent = self._agent(params)
        run_id = str(params.get("run_id") or "")
        with fatal_errors("cannot read an in-doubt tool call"):
            tool_use: Any = expand_tool_use(self.payloads.blobs, params["tool_use"])
            answer = restore(self.payloads.blobs, params["answer"]) if "answer" in params else RERUN
        tool_use_id = tool_use["toolUseId"]
        call = InDoubtCall(run_id, tool_use, f"{run_id}/{tool_use_id}" if run_id else tool_use_id)
        if "answer" not in params:
            if agent.reconcile is None:
                ident = interrupt_id("durable", tool_use_id, IN_DOUBT)
                record = Interrupt(ident, IN_DOUBT, call.to_reason(), "durable", tool_use_id).to_dict()
                with fatal_errors(f"the in-doubt interrupt of tool call {tool_use_id!r} is too large"):
                    return {"interrupt": self.payloads.compact_interrupt(record)}
            answer = agent.reconcile(call)
            if inspect.isawaitable(answer):
                answer = await answer
        if answer == RERUN:
            return {"rerun": True}
        with fatal_errors(f"the reconciled result of tool call {tool_use_id!r} is too large"):
            return {"result": self.payloads.compact_result(to_result(tool_use_id, answer))}

    # -- deploys: the verdict of a resume on this worker's code ---------------------------

    @activity.defn(name="tether.check_resume")
    async def check_resume(self, params: CheckResumeInput) -> CheckedResume:
        """Judge a resume (interrupt answers, a continued execution) against the agent as this
        worker builds it (:mod:`tether.manifest`): the verdict, the refusal (nothing changed), or
        the migrated pending calls with the conversation rewritten for them when their message
        is already in it (``persisted``). The workflow applies the outcome; this changes nothing
        it does not return, so an attempt lost and run again is harmless.
        """
        agent = self._agent(params)
        self._adopt(agent, params)
        blobs = self.payloads.blobs
        with fatal_errors(f"cannot read the pending tool calls of run {params.get('run_id')!r}"):
            pending = [expand_tool_use(blobs, use) for use in params.get("pending") or []]
        check = ResumeCheck(agent.manifest(), agent.migrations, frozenset(params.get("allow") or ()))
        try:
            verdict = check.check(params.get("manifest"), cast("list[ToolUse]", pending), what=f"run {params.get('run_id')!r}")
        except IncompatibleResumeError as exc:
            assert exc.verdict is not None
            return {"verdict": exc.verdict.to_dict(), "refused": str(exc), "manifest": check.manifest, "migrated": {}, "conv": None}
        migrated: dict[str, dict[str, Any]] = {}
        conv = None
        with fatal_errors(f"a migrated tool call of run {params.get('run_id')!r} is too large"):
            for call, (name, tool_input) in verdict.migrated.items():
                compact = self.payloads.compact_message(
                    {"role": "assistant", "content": [{"toolUse": {"toolUseId": call, "name": name, "input": tool_input}}]}
                )
                migrated[call] = {"name": name, "input": compact["content"][0]["toolUse"]["input"]}
            if migrated and params.get("persisted"):
                conv = self._rewrite_last(params.get("conv"), migrated)
        out: CheckedResume = {"verdict": verdict.to_dict(), "refused": None, "manifest": check.manifest, "migrated": migrated, "conv": conv}
        if any(d.code == "prompt_changed" for d in verdict.differences):  # the deployed prompt applies (as on a durable run)
            prompt = agent.run_state.system_prompt
            with fatal_errors(f"the system prompt of agent {params.get('agent')!r} is too large"):
                out["system_prompt"] = None if prompt is None else self.payloads.compact_message({"role": "system", "content": prompt})
        return out

    def _rewrite_last(self, conv: str | None, migrated: dict[str, dict[str, Any]]) -> str | None:
        """A conversation like ``conv`` whose last message has the migrated tool calls (rebased
        once: migrations are rare)."""
        compact = self.conversations.compact_nodes(conv)
        if not compact:
            return conv
        run = RunState(messages=cast("list[Message]", compact))
        migrate_pending(run, {call: (entry["name"], entry["input"]) for call, entry in migrated.items()})
        return self.conversations.rebase(cast("list[CompactMessage]", run.messages))


__all__ = ["ResumeActivities"]
