"""Compensation on Temporal, the workflow side: an agent workflow unwinds its run's performed
effects with one activity per undo (:mod:`tether.temporal.compensation_activities`).

When the invocation fails, is cancelled or stops on its budget and the agent's
``compensate_on`` names that (``Agent(compensate_on=...)``, read by ``tether.describe``), the
workflow asks ``tether.compensation_plan`` for the performed calls to undo (newest first), then
runs ``tether.undo`` for each, one after another. Each completed undo is an event of the
workflow's history, so a worker restart (a replay) never runs it again; an undo whose worker
died mid-attempt is retried by Temporal with the same undo key (in doubt, as in a durable run).
A compensation that raised is recorded as ``failed`` and the unwinding goes on.

The record (trigger, plan, each undo's outcome, status) is the ``tether.compensation`` query's
answer (a failed workflow answers it too) and the ``compensation`` of the workflow's result. It
is behind the ``tether.compensation`` patch: runs recorded before it never unwind.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from . import activity_io as io
    from .shapes import AgentSettings, WorkflowOptions

PATCH_COMPENSATION = "tether.compensation"
"""The patch id of unwinding a failed, cancelled or budget-stopped run (runs recorded before it did not)."""


class Unwinding:
    """The unwinding of an agent workflow (a part of ``AgentWorkflow``, which supplies its
    settings, options, activities and where the run's conversation is)."""

    _settings: AgentSettings
    _options: WorkflowOptions
    _compensation: dict[str, Any] | None = None

    def _base(self) -> io.AgentCall:
        raise NotImplementedError

    async def _activity(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _conversation(self) -> dict[str, Any]:
        """Where the run's whole conversation is: ``conv``, ``pending``, ``cursor``."""
        raise NotImplementedError

    @workflow.query(name="tether.compensation")
    def compensation(self) -> dict[str, Any] | None:
        """The run's unwinding: ``{"trigger", "plan", "undos", "status"}`` (None: not compensated)."""
        return self._compensation

    def _compensates(self, trigger: str) -> bool:
        """Whether the agent's ``compensate_on`` names ``trigger`` (and the run may unwind: the patch)."""
        return trigger in (self._settings.get("compensate_on") or ()) and workflow.patched(PATCH_COMPENSATION)

    async def _unwind(self, trigger: str) -> dict[str, Any]:
        """Undo the run's performed calls, newest first, one ``tether.undo`` activity each."""
        call = {**self._base(), **self._conversation()}
        attempts = int(self._options["hook_attempts"])
        planned: dict[str, Any] = await self._activity("tether.compensation_plan", call, attempts=attempts)
        record: dict[str, Any] = {"trigger": trigger, "plan": planned["plan"], "undos": {}, "status": "compensating"}
        self._compensation = record
        for entry in planned["plan"]:
            outcome = await self._activity(
                "tether.undo",
                {**call, "entry": entry},
                timeout=float(self._options["tool_timeout_s"]),
                attempts=int(self._options["tool_attempts"]),
                heartbeat=float(self._options["heartbeat_s"]),
                summary=f"undo {entry['name']} ({entry['toolUseId']})",
            )
            record["undos"][entry["toolUseId"]] = outcome
        failed = any(undo.get("outcome") == "failed" for undo in record["undos"].values())
        record["status"] = "compensation_failed" if failed else "compensated"
        return record


__all__ = ["PATCH_COMPENSATION", "Unwinding"]
