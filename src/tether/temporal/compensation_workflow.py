"""``tether.compensation``: the workflow that unwinds an agent run that has ended, on request.

An agent workflow unwinds by itself when its agent's ``compensate_on`` names how it ended
(:mod:`tether.temporal.unwinding`). Any other ended run is compensated on request:
:meth:`TetherClient.compensate <tether.temporal.TetherClient.compensate>` reads the run's final
state (its ``snapshot`` query) and starts this workflow, with workflow id ``<run_id>.compensate``
(a duplicate id is refused, so a run is unwound once however often it is asked), which runs the
same activities: ``tether.compensation_plan``, then one ``tether.undo`` per undo, newest first.
Its result is the unwinding's record; a worker restart replays it, never redoing a completed undo.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from . import activity_io as io
    from .retries import activity_retry_policy
    from .shapes import AgentSettings, WorkflowOptions
    from .unwinding import Unwinding
    from .workflow import DEFAULT_OPTIONS

COMPENSATION_WORKFLOW = "tether.compensation"
"""The workflow type name."""


@workflow.defn(name=COMPENSATION_WORKFLOW)
class CompensationWorkflow(Unwinding):
    """Unwind an ended agent run: ``params`` holds ``agent``, ``config``, ``run_id``, the run's
    ``conv``, ``pending`` and ``cursor`` (where its conversation is) and ``options``."""

    def __init__(self) -> None:
        self._params: dict[str, Any] = {}
        self._settings: AgentSettings = {}
        self._options: WorkflowOptions = DEFAULT_OPTIONS.copy()

    @workflow.run
    async def run(self, params: dict[str, Any]) -> dict[str, Any]:
        self._params = params
        requested: WorkflowOptions | None = params.get("options")
        self._options.update(requested or {})
        return await self._unwind("requested")

    def _base(self) -> io.AgentCall:
        params = self._params
        return {"agent": params["agent"], "config": params.get("config") or {}, "run_id": params.get("run_id")}

    def _conversation(self) -> dict[str, Any]:
        params = self._params
        return {"conv": params.get("conv"), "pending": params.get("pending") or [], "cursor": params.get("cursor") or {}}

    async def _activity(
        self,
        name: str,
        params: Any,
        *,
        timeout: float = 60.0,
        attempts: int = 5,
        heartbeat: float | None = None,
        summary: str | None = None,
    ) -> Any:
        return await workflow.execute_activity(
            name,
            params,
            start_to_close_timeout=timedelta(seconds=timeout),
            heartbeat_timeout=None if heartbeat is None else timedelta(seconds=heartbeat),
            retry_policy=activity_retry_policy(None, attempts),
            summary=summary,
        )


__all__ = ["COMPENSATION_WORKFLOW", "CompensationWorkflow"]
