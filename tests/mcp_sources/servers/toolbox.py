"""A real MCP server (the ``mcp`` SDK's low-level ``Server``) for Tether's tests.

Run as ``python toolbox.py [--http PORT [--json-response]] [--log FILE] [--prefix-fail MODE]``: stdio
by default, streamable HTTP on 127.0.0.1:PORT with ``--http`` (answers as event streams, or as plain
JSON bodies with ``--json-response``). Every ``tools/call`` is appended to ``--log``
as one JSON line (tool, arguments, the request's ``_meta``, pid) *before* the tool runs, so a
test can count calls server-side even for a call the server never finished.

Environment: ``TOOLBOX_MODE`` = ``""`` (normal), ``"exit"`` (write to stderr and exit 3 before
serving), ``"mute"`` (never answer anything), ``"badschema"`` (list a tool whose schema is not an
object).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

OBJ = {"type": "object"}
TOOLS = [
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
        annotations=types.ToolAnnotations(idempotent_hint=True),
    ),
    types.Tool(name="echo", description="Echo a text.", input_schema={"type": "object", "properties": {"text": {"type": "string"}}}),
    types.Tool(
        name="stats",
        description="Structured statistics of numbers.",
        input_schema={"type": "object", "properties": {"values": {"type": "array", "items": {"type": "number"}}}},
    ),
    types.Tool(name="pixel", description="A 1x1 PNG image.", input_schema=OBJ),
    types.Tool(name="fail", description="Always fails (isError).", input_schema=OBJ),
    types.Tool(
        name="slow",
        description="Waits until the file named by 'gate' exists, then answers.",
        input_schema={"type": "object", "properties": {"gate": {"type": "string"}}},
    ),
    types.Tool(name="crash", description="Writes to stderr and exits the server mid-call.", input_schema=OBJ),
    types.Tool(name="hang", description="Never answers.", input_schema=OBJ),
    types.Tool(
        name="blob",
        description="A text of 'size' bytes (a large result).",
        input_schema={"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--log", default=os.environ.get("TOOLBOX_LOG", ""))
    opts = parser.parse_args()
    mode = os.environ.get("TOOLBOX_MODE", "")
    print(f"toolbox starting pid={os.getpid()} mode={mode!r}", file=sys.stderr, flush=True)
    if mode == "exit":
        print("toolbox: fatal: cannot open the database /nonexistent/db", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "mute":
        print("toolbox: muted, will never answer", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)

    def record(name: str, arguments: dict[str, Any], meta: Any) -> None:
        if opts.log:
            line = json.dumps({"tool": name, "arguments": arguments, "meta": meta, "pid": os.getpid()})
            with open(opts.log, "a", encoding="utf-8") as f:
                f.write(line + "\n")
                f.flush()
                os.fsync(f.fileno())

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if mode == "badschema":
            return types.ListToolsResult(
                tools=[*TOOLS[:1], types.Tool.model_construct(name="weird", description="Array schema.", input_schema={"type": "array"})]
            )
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        meta = (
            params.meta.model_dump(by_alias=True, exclude_none=True)
            if params.meta is not None and hasattr(params.meta, "model_dump")
            else params.meta
        )
        record(params.name, args, meta)
        text = lambda t: types.CallToolResult(content=[types.TextContent(text=t)])  # noqa: E731
        if params.name == "add":
            return text(str(int(args["a"]) + int(args["b"])))
        if params.name == "echo":
            return text(str(args.get("text", "")))
        if params.name == "stats":
            values = [float(v) for v in args.get("values", [])]
            data = {"count": len(values), "total": sum(values)}
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(data))], structured_content=data)
        if params.name == "pixel":
            return types.CallToolResult(
                content=[types.TextContent(text="a pixel"), types.ImageContent(data=base64.b64encode(PNG).decode(), mime_type="image/png")]
            )
        if params.name == "fail":
            return types.CallToolResult(content=[types.TextContent(text="the widget is broken")], is_error=True)
        if params.name == "slow":
            gate = str(args["gate"])
            while not os.path.exists(gate):
                await anyio.sleep(0.01)
            return text("slow done")
        if params.name == "crash":
            print("toolbox: segfault in crash()", file=sys.stderr, flush=True)
            os._exit(9)
        if params.name == "hang":
            await anyio.sleep_forever()
        if params.name == "blob":
            return text("x" * int(args["size"]))
        return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True)

    server: Server[Any] = Server("toolbox", on_list_tools=list_tools, on_call_tool=call_tool)
    if opts.http:
        import uvicorn

        app = server.streamable_http_app(json_response=opts.json_response)
        uvicorn.run(app, host="127.0.0.1", port=opts.http, log_level="warning")
    else:
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)


if __name__ == "__main__":
    main()
