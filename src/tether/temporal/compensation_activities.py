"""Compensation on Temporal, the activities: the unwinding's plan, and one activity per undo.

The workflow side is :mod:`tether.temporal.unwinding`. Both activities read the run's whole
conversation from the blob store (its reference, plus the messages the workflow has not
persisted yet, plus the open cycle's recorded results): the workflow's history holds only the
plan's ids and names and each undo's outcome, never a call's input or result.

An agent tool's call ran a child workflow (id ``child_run_id(run_id, toolUseId)``): undoing it
compensates that child's run in its turn, with its own ``tether.compensation`` workflow (started
once; :mod:`tether.temporal.compensation_client`), recursively, so the tree unwinds newest first.

``tether.undo`` runs the tool's compensation (``@tool(compensate=...)``) with the same
:class:`~tether.tools.compensation.Undo` a local durable run gives it (``undo_key``
``run_id/toolUseId/undo``). A compensation that raises is an outcome (``failed``, with the
error), not an activity failure: it is not retried, and the unwinding goes on. An attempt lost
with its worker (kill -9, a heartbeat timeout) runs again with the same undo key, as an undo in
doubt does in a durable run; a completed undo is history and never runs again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from temporalio import activity
from temporalio.service import RPCError, RPCStatusCode

from ..durable.compensation import performed_calls, run_undo
from ..durable.ids import child_run_id
from ..errors import CompensationError
from ..tools.compensation import UNDO_SUFFIX, Undo
from ..types import Message, ToolResult
from .activity_io import UndoInput, UnwindInput
from .activity_runtime import AgentActivitySet, fatal_errors, heartbeating
from .claimcheck import expand_message, expand_result
from .compensation_client import compensate_ended


class CompensationActivities(AgentActivitySet):
    """``tether.compensation_plan`` and ``tether.undo`` (registered by ``TetherActivities``)."""

    @activity.defn(name="tether.compensation_plan")
    async def compensation_plan(self, params: UnwindInput) -> dict[str, Any]:
        """The unwinding's plan: the run's performed calls whose tool has a compensation, newest
        first, as ``{"toolUseId", "name", "in_doubt"}`` (no inputs, no results), and each agent
        tool's call whose child workflow ran (whatever its result), with its ``run_id``."""
        agent = self._agent(params)
        tools = agent.tool_registry
        plan = []

        def nesting(name: str) -> bool:
            return bool(getattr(tools.get(name), "nests_runs", False))

        for call in self._calls(params, nesting):
            entry = {"toolUseId": call["toolUseId"], "name": call["name"], "in_doubt": call["result"] is None}
            if nesting(call["name"]):  # an agent tool's call: its child workflow, if one ran
                child = child_run_id(str(params.get("run_id")), call["toolUseId"])
                if await _exists(child):
                    plan.append({**entry, "run_id": child})
            elif getattr(tools.get(call["name"]), "compensate", None) is not None and (call["result"] or {}).get("status") != "error":
                plan.append(entry)
        return {"plan": plan}

    @activity.defn(name="tether.undo")
    async def undo(self, params: UndoInput) -> dict[str, Any]:
        """Undo one planned call: ``{"outcome": "undone"}`` or ``{"outcome": "failed", "error"}``,
        and ``attempt`` (2 and more: an earlier attempt was lost, this one ran again with the same key)."""
        entry = params["entry"]
        ident, name = str(entry["toolUseId"]), str(entry["name"])
        if isinstance(entry.get("run_id"), str):
            return await _unwind_child(str(params.get("run_id")), ident, str(entry["run_id"]))
        agent = self._agent(params)
        calls = {call["toolUseId"]: call for call in self._calls(params)}
        call = calls.get(ident)
        key = f"{params.get('run_id')}/{ident}"
        attempt = activity.info().attempt
        if call is None:
            return {"outcome": "failed", "error": f"call {ident!r} is no longer in the run's conversation", "attempt": attempt}
        given = call.get("input")
        undo = Undo(
            run_id=str(params.get("run_id")),
            tool_use_id=ident,
            tool=name,
            input=given if isinstance(given, dict) else {},
            result=call.get("result"),
            idempotency_key=key,
            undo_key=key + UNDO_SUFFIX,
        )
        async with heartbeating():
            error = await run_undo(getattr(agent.tool_registry.get(name), "compensate", None), undo)
        out: dict[str, Any] = {"outcome": "undone" if error is None else "failed", "attempt": attempt}
        if error is not None:
            out["error"] = error
        return out

    def _calls(self, params: UnwindInput, nesting: Callable[[str], bool] = lambda name: False) -> list[dict[str, Any]]:
        """The run's performed calls, newest first (:func:`~tether.durable.compensation.performed_calls`)."""
        blobs = self.payloads.blobs
        with fatal_errors(f"cannot read the conversation of run {params.get('run_id')!r}"):
            messages: list[Message] = [*self.conversations.load(params.get("conv"))]
            messages += [expand_message(blobs, message) for message in params.get("pending") or []]
            cursor = params.get("cursor") or {}
            results = {ident: cast(ToolResult, expand_result(blobs, result)) for ident, result in (cursor.get("results") or {}).items()}
        return performed_calls(messages, results, list(cursor.get("started") or []), str(cursor.get("phase") or ""), nesting)


async def _exists(workflow_id: str) -> bool:
    """Whether a workflow of that id ran (an agent tool's child workflow)."""
    try:
        await activity.client().get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def _unwind_child(run_id: str, ident: str, child: str) -> dict[str, Any]:
    """Undo an agent tool's call: its child workflow's run unwinds in its turn (its own
    ``tether.compensation`` workflow, started once: a retried attempt waits for the same one)."""
    if child != child_run_id(run_id, ident):
        return {"outcome": "failed", "error": f"nested run {child!r} is not call {ident!r}'s child", "attempt": activity.info().attempt}
    async with heartbeating():
        try:
            record = await compensate_ended(activity.client(), activity.info().task_queue, child, {})
        except CompensationError as exc:
            return {"outcome": "failed", "error": f"nested run {child!r}: {exc}", "attempt": activity.info().attempt}
    failed = [f"{u['toolUseId']}: {u.get('error')}" for u in record["undos"].values() if u.get("outcome") == "failed"]
    out: dict[str, Any] = {"outcome": "failed" if failed else "undone", "attempt": activity.info().attempt, "run_id": child}
    if failed:
        out["error"] = f"nested run {child!r}: " + "; ".join(failed)
    return out


__all__ = ["CompensationActivities"]
