"""Helpers shared by the facade's tool, hook and MCP tests."""

from __future__ import annotations

import asyncio
from typing import Any

from tether.types import Message


def call(name: str, input: Any = None, tool_use_id: str = "t1") -> Message:
    """An assistant message calling one tool."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": tool_use_id, "name": name, "input": input or {}}}]}  # type: ignore[typeddict-item]


def tool_results(messages: list[Message]) -> list[dict[str, Any]]:
    """Every toolResult of a conversation, in order."""
    return [block["toolResult"] for m in messages for block in m["content"] if "toolResult" in block]  # type: ignore[misc]


def strands_result(strands_tool: Any, tool_use: dict[str, Any], invocation_state: dict[str, Any] | None = None) -> tuple[list[Any], dict[str, Any]]:
    """Run a real Strands tool's ``stream``: (the values it streamed, its result)."""

    async def go() -> tuple[list[Any], dict[str, Any]]:
        streamed: list[Any] = []
        result: dict[str, Any] | None = None
        async for event in strands_tool.stream(tool_use, invocation_state if invocation_state is not None else {}):
            if type(event).__name__ == "ToolResultEvent":
                result = dict(event.tool_result)
            else:
                streamed.append(event["tool_stream_event"]["data"])
        assert result is not None
        return streamed, result

    return asyncio.run(go())
