"""Compensating an ended agent run on request, the client side (:meth:`TetherClient.compensate
<tether.temporal.TetherClient.compensate>`; the workflow is :mod:`tether.temporal.compensation_workflow`)."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from ..errors import CompensationError
from .compensation_workflow import COMPENSATION_WORKFLOW


async def compensate_ended(client: Client, task_queue: str, run_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """The unwinding of ended agent run ``run_id``: the one its workflow did by itself (its
    ``tether.compensation`` query), else the ``tether.compensation`` workflow's (started once,
    with id ``<run_id>.compensate``; a repeat waits for that one's record).

    Raises:
        CompensationError: The run still runs (cancel it first; with ``compensate_on=("cancelled",)``
            the cancel unwinds it).
    """
    handle = client.get_workflow_handle(run_id)
    described = await handle.describe()
    if described.status == WorkflowExecutionStatus.RUNNING:
        raise CompensationError(f"run {run_id!r} is running: cancel it first, then compensate it")
    done = await handle.query("tether.compensation")
    if done is not None:
        return dict(done)
    carried = (await handle.query("snapshot"))["run"]
    started = None
    async for event in handle.fetch_history_events():
        started = event.workflow_execution_started_event_attributes
        break
    assert started is not None
    (params,) = await client.data_converter.decode(started.input.payloads, [dict])
    unpersisted = int(carried.get("unpersisted") or 0)
    tail = list(carried.get("tail") or [])
    cursor = carried.get("cursor") or {}
    request = {
        "agent": params["agent"],
        "config": params.get("config") or {},
        "run_id": run_id,
        "conv": carried.get("conv"),
        "pending": tail[len(tail) - unpersisted :] if unpersisted else [],
        "cursor": {key: cursor.get(key) for key in ("results", "started", "phase")},
        "options": {**(params.get("options") or {}), **options},
    }
    ident = f"{run_id}.compensate"
    try:
        unwinding = await client.start_workflow(
            COMPENSATION_WORKFLOW,
            request,
            id=ident,
            task_queue=task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=dict,
        )
    except WorkflowAlreadyStartedError:  # it ran before (closed): its record
        unwinding = client.get_workflow_handle(ident, result_type=dict)
    return dict(await unwinding.result())


__all__ = ["compensate_ended"]
