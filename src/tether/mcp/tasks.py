"""MCP tasks that outlive the process: a call answered with a task is polled, after any restart,
never made again.

A server of the 2026-07-28 revision may answer ``tools/call`` with a task (the tasks extension,
``io.modelcontextprotocol/tasks``, :data:`TASKS_EXTENSION`: a result whose ``resultType`` is
``"task"``, carrying ``task: {taskId, status, pollInterval, ...}``). Tether stores the task with the
call in the run (``state["tether.mcp"]["calls"][toolUseId]["task"]``) and saves the run at once
(``ToolContext.save()``), then polls ``tasks/get`` every ``pollInterval`` until the task is
``completed`` (its ``result``, a ``CallToolResult``, becomes the tool result), ``failed`` or
``cancelled`` (an error result). A process killed meanwhile leaves the call in doubt with its task
id: the resumed run polls the same task (the in-doubt decision is ``poll``) instead of calling the
tool again. An invocation cancelled while it waits (``agent.cancel()``, or its task cancelled)
sends ``tasks/cancel``.

A task the server no longer knows (``tasks/get`` answered with -32602, the code the spec gives an
unknown or expired task id) is *in doubt*: the run stops with the ``tether.in_doubt`` interrupt of
the call (or the agent's ``reconcile`` decides), answered like any in-doubt call with ``"rerun"``
(the call is made again, with the same idempotency key) or the result to record. Any other error answering ``tasks/get``, a server that
cannot be reached while polling, and a stored task id that is not a non-empty string stop the turn
with a :class:`~tether.errors.HandleRejectedError` naming the run, the call and the field; the run
keeps the task id, so a later resume polls again. Not supported: a task asking for input
(``input_required``, ``tasks/update``) — an error result says so.

Tether speaks the extension's messages through the SDK's session (``mcp`` 2.3 has the types, not a
client for them): a result claim for ``resultType: "task"`` and ``session.send_request`` with the
SDK's ``GetTaskRequest`` / ``CancelTaskRequest``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from ..errors import HandleRejectedError
from ..tools.base import error_result
from ..tools.context import ToolContext
from ..types import ToolResult
from .calls import calls_in, decide_in_doubt, drop_later, field_of
from .errors import MCPError, TaskRefused
from .limits import result_size

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The identifier of MCP's tasks extension (advertised by Tether's MCP clients with ``protocol="auto"``)."""

UNKNOWN_TASK = -32602
"""The JSON-RPC code a server answers ``tasks/get`` of an unknown or expired task id with."""

MIN_POLL, MAX_POLL, DEFAULT_POLL = 0.02, 5.0, 0.5
"""Bounds and default (seconds) of the polling interval (the server's ``pollInterval`` within them)."""

CANCEL_TIMEOUT = 10.0
"""Bound on sending ``tasks/cancel`` for a cancelled invocation."""


class TaskSource(Protocol):
    """What polling needs of an MCP source."""

    @property
    def source_name(self) -> str: ...

    async def task_request(self, method: str, task_id: str) -> dict[str, Any]: ...

    def _tool_result(self, tool_use_id: str, result: Any) -> ToolResult: ...


def task_claim() -> Any:
    """The SDK result claim that parses a ``tools/call`` answered with a task (``TaskCreated``)."""
    from mcp.client.extension import ResultClaim

    async def resolve(result: Any, context: Any) -> Any:  # Tether polls itself; the SDK never resolves it
        raise RuntimeError("an MCP task is polled by tether.mcp.tasks, not resolved by the SDK client")

    return ResultClaim(result_type="task", model=_task_model(), resolve=resolve)


def _task_model() -> type[Any]:
    global _TASK_MODEL
    if _TASK_MODEL is None:
        from mcp_types import Result
        from pydantic import ConfigDict

        class TaskCreated(Result):
            """A ``tools/call`` answered with a task (``resultType: "task"``)."""

            model_config = ConfigDict(extra="allow")
            result_type: Literal["task"] = "task"
            task: dict[str, Any]

        _TASK_MODEL = TaskCreated
    return _TASK_MODEL


_TASK_MODEL: type[Any] | None = None


def is_task(outcome: Any) -> bool:
    """Whether a ``tools/call`` outcome is a task."""
    return type(outcome).__name__ == "TaskCreated" and isinstance(getattr(outcome, "task", None), dict)


def task_of(state: Mapping[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    """The task call ``tool_use_id`` keeps in the agent state ``state``, if any."""
    entry = calls_in(state).get(tool_use_id)
    task = entry.get("task") if isinstance(entry, dict) else None
    return task if isinstance(task, dict) else None


async def await_task(source: TaskSource, context: ToolContext, entry: dict[str, Any]) -> ToolResult | None:
    """Poll the call's task until it ends: its result, or None when the task was lost and the
    in-doubt answer was ``"rerun"`` (the caller makes the call again)."""
    tool_use_id = context.tool_use["toolUseId"]
    task = entry.get("task")
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise _rejected(context, field_of(tool_use_id, "task", "taskId"), f"is not a task id ({task_id!r}); nothing was sent")
    assert isinstance(task, dict)
    delay = _interval(task.get("pollInterval"))
    while True:
        if context.cancel_requested:
            await _cancel(source, task_id)
            drop_later(context)
            return error_result(tool_use_id, f"Tool call cancelled: MCP task {task_id!r} was cancelled on server {source.source_name!r}.")
        try:
            status = await source.task_request("tasks/get", task_id)
        except TaskRefused as exc:
            if exc.code == UNKNOWN_TASK:
                question = (
                    f"the MCP task {task_id} of this call is unknown to its server (expired or lost); answer 'rerun' to call the "
                    "tool again (same idempotency key) or the result to record"
                )
                return await decide_in_doubt(
                    context, {"mcp_task": task_id, "server": entry.get("server"), "detail": str(exc)[:200]}, question
                )
            raise _rejected(
                context, field_of(tool_use_id, "task", "taskId"), f"was refused by MCP server {source.source_name!r}: {exc}"
            ) from None
        except MCPError as exc:
            raise _rejected(context, field_of(tool_use_id, "task", "taskId"), f"could not be polled: {exc}") from None
        except asyncio.CancelledError:
            await asyncio.shield(_cancel(source, task_id))
            raise
        state = status.get("status")
        if state == "completed":
            drop_later(context)
            return _completed(source, tool_use_id, task_id, status)
        if state in ("failed", "cancelled"):
            drop_later(context)
            message = status.get("statusMessage") or f"the task ended {state}"
            return error_result(tool_use_id, f"Error: MCP task {task_id!r} on server {source.source_name!r} {state}: {message}")
        if state == "input_required":
            drop_later(context)
            await _cancel(source, task_id)
            return error_result(
                tool_use_id,
                f"Error: MCP task {task_id!r} on server {source.source_name!r} asked for input, which Tether does not answer for tasks",
            )
        delay = _interval(status.get("pollInterval"), delay)
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            await asyncio.shield(_cancel(source, task_id))
            raise


def _completed(source: TaskSource, tool_use_id: str, task_id: str, status: dict[str, Any]) -> ToolResult:
    from mcp_types import CallToolResult
    from pydantic import ValidationError

    try:
        result = CallToolResult.model_validate(status.get("result"))
    except ValidationError:
        return error_result(tool_use_id, f"Error: MCP task {task_id!r} on server {source.source_name!r} completed without a tool result")
    cap = getattr(source, "max_result_bytes", None)
    if isinstance(cap, int) and (size := result_size(result)) > cap:
        return error_result(
            tool_use_id,
            f"Error: MCP task {task_id!r} on server {source.source_name!r} returned a result larger than max_result_bytes={cap} "
            f"({size:,} bytes); it was dropped",
        )
    return source._tool_result(tool_use_id, result)


async def _cancel(source: TaskSource, task_id: str) -> None:
    """Best effort ``tasks/cancel`` (a failure is not the caller's: the invocation stops anyway)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CANCEL_TIMEOUT):
            await source.task_request("tasks/cancel", task_id)


def _interval(value: Any, default: float = DEFAULT_POLL) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return min(MAX_POLL, max(MIN_POLL, value / 1000.0))
    return default


def _rejected(context: ToolContext, field: str, problem: str) -> HandleRejectedError:
    tool_use_id = context.tool_use["toolUseId"]
    return HandleRejectedError(
        f"run {context.run_id!r}, tool call {tool_use_id!r}: the stored MCP task {field} {problem}. The run keeps the task id; "
        "resume it once the server answers, or cancel the run",
        run_id=context.run_id,
        tool_use_id=tool_use_id,
        field=field,
    )


__all__ = ["TASKS_EXTENSION", "UNKNOWN_TASK", "await_task", "is_task", "task_claim", "task_of"]
