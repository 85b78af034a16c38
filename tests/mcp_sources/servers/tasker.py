"""A real MCP server (the ``mcp`` SDK's low-level ``Server``) with a task-augmented tool, served
over streamable HTTP on loopback so it outlives the clients a test kills.

Run as ``python tasker.py --http PORT --log FILE``. ``render(name, gate)`` called with
``params.task`` (the 2025-11-25 tasks messages) answers at once with a ``CreateTaskResult``; the
task completes when the file ``gate`` exists (``rendered <name>``). ``tasks/get`` reports it
(``working`` until then, ``completed`` after; an unknown id is a JSON-RPC error -32602, as the
spec says, and an id starting with ``bad`` is refused with -32600), ``tasks/result`` gives the
tool's result, ``tasks/cancel`` cancels it. Every ``tools/call`` is appended to ``--log`` as
``{"call": ...}`` and every tasks request as ``{"tasks": method, "taskId": ...}``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import uuid
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

TOOLS = [
    types.Tool(
        name="render",
        description="Render a film (long-running: a task).",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}, "gate": {"type": "string"}}, "required": ["name"]},
        execution=types.ToolExecution(task_support="optional"),
    )
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, required=True)
    parser.add_argument("--log", required=True)
    opts = parser.parse_args()
    tasks: dict[str, dict[str, Any]] = {}

    def record(entry: dict[str, Any]) -> None:
        with open(opts.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({**entry, "pid": os.getpid()}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def now() -> str:
        return datetime.datetime.now(datetime.UTC).isoformat()

    def status(task_id: str) -> dict[str, Any]:
        if task_id.startswith("bad"):
            raise MCPError(code=types.INVALID_REQUEST, message=f"task id {task_id!r} is malformed")
        task = tasks.get(task_id)
        if task is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown task {task_id!r}")
        if task["status"] == "working" and os.path.exists(task["gate"]):
            task["status"] = "completed"
            task["updated"] = now()
        return task

    def shape(task: dict[str, Any]) -> dict[str, Any]:
        data = {
            "taskId": task["id"],
            "status": task["status"],
            "createdAt": task["created"],
            "lastUpdatedAt": task["updated"],
            "ttl": 600000,
            "pollInterval": 50,
        }
        if task["status"] == "completed":
            data["result"] = {"content": [{"type": "text", "text": f"rendered {task['name']}"}], "isError": False}
        return data

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        args = params.arguments or {}
        meta = params.meta if isinstance(params.meta, dict) else None
        record({"call": params.name, "arguments": args, "meta": meta, "task": params.task is not None})
        task_id = uuid.uuid4().hex
        tasks[task_id] = {
            "id": task_id,
            "status": "working",
            "created": now(),
            "updated": now(),
            "gate": str(args.get("gate")),
            "name": args.get("name"),
        }
        return {"resultType": "task", "task": shape(tasks[task_id])}

    async def get_task(ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        record({"tasks": "tasks/get", "taskId": params.task_id})
        return {"resultType": "complete", **shape(status(params.task_id))}

    async def cancel_task(ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams) -> dict[str, Any]:
        record({"tasks": "tasks/cancel", "taskId": params.task_id})
        task = status(params.task_id)
        if task["status"] == "working":
            task["status"] = "cancelled"
            task["updated"] = now()
        return {"resultType": "complete", **shape(task)}

    server: Server[Any] = Server("tasker", on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
    server.extensions["io.modelcontextprotocol/tasks"] = {}
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)
    import uvicorn

    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=opts.http, log_level="warning")


if __name__ == "__main__":
    main()
