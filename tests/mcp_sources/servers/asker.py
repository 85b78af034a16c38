"""A real MCP server (the ``mcp`` SDK's low-level ``Server``, 2026-07-28 multi-round-trip results)
whose ``book`` tool asks for input mid-call.

Run as ``python asker.py --log FILE [--key KEY]``. ``book(city)`` answers a first call with an
``InputRequiredResult``: two elicitation questions (``seat`` and ``confirm``) and an opaque
``requestState`` (HMAC-signed, naming the city and the round). A retry carrying both answers and
that state books the flight: it appends ``{"effect": "booked", ...}`` to ``--log`` and answers
``booked <city> seat <seat>``. A retry whose state does not verify is refused with a JSON-RPC
error (invalid params). With ``gate`` in the arguments, a retry waits for that file first: tampered, or signed with another key (``--key``).
Every ``tools/call`` is logged as ``{"call": ...}`` first.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

KEY = b"asker-test-key"

TOOLS = [
    types.Tool(
        name="book",
        description="Book a flight to a city (asks for a seat and a confirmation).",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--key", default=KEY.decode())  # the key signing requestState (a test rotates it)
    opts = parser.parse_args()
    key = opts.key.encode()

    def seal(data: dict[str, Any]) -> str:
        body = json.dumps(data, sort_keys=True)
        return body + "." + hmac.new(key, body.encode(), hashlib.sha256).hexdigest()

    def unseal(token: str) -> dict[str, Any] | None:
        body, _, mac = token.rpartition(".")
        if not hmac.compare_digest(mac, hmac.new(key, body.encode(), hashlib.sha256).hexdigest()):
            return None
        data: dict[str, Any] = json.loads(body)
        return data

    def record(entry: dict[str, Any]) -> None:
        with open(opts.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({**entry, "pid": os.getpid()}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        args = params.arguments or {}
        meta = params.meta if isinstance(params.meta, dict) else None
        answers = {key: value.model_dump(by_alias=True, exclude_none=True) for key, value in (params.input_responses or {}).items()}
        record({"call": params.name, "arguments": args, "meta": meta, "answers": answers, "state": params.request_state})
        city = str(args.get("city", ""))
        if params.request_state is None:
            questions: dict[str, types.InputRequest] = {
                "seat": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message=f"Which seat on the flight to {city}?",
                        requested_schema={"type": "object", "properties": {"seat": {"type": "string"}}, "required": ["seat"]},
                    )
                ),
                "confirm": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message=f"Charge 420 EUR for the flight to {city}?",
                        requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
                    )
                ),
            }
            return types.InputRequiredResult(input_requests=questions, request_state=seal({"city": city, "round": 1}))
        state = unseal(params.request_state)
        if state is None or state.get("city") != city:
            raise MCPError(code=types.INVALID_PARAMS, message="requestState does not verify")
        if args.get("gate"):  # a slow retry: it waits for the file (a test kills the client meanwhile)
            while not os.path.exists(str(args["gate"])):
                await anyio.sleep(0.01)
        seat = answers.get("seat", {}).get("content", {}).get("seat")
        confirmed = answers.get("confirm", {}).get("content", {}).get("ok")
        if answers.get("confirm", {}).get("action") != "accept" or not confirmed:
            return types.CallToolResult(content=[types.TextContent(text=f"not booked: {city} declined")])
        record({"effect": "booked", "city": city, "seat": seat, "key": (meta or {}).get("tether/idempotency_key")})
        return types.CallToolResult(content=[types.TextContent(text=f"booked {city} seat {seat}")])

    server: Server[Any] = Server("asker", on_list_tools=list_tools, on_call_tool=call_tool)
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
