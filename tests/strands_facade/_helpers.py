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


def strands_result(
    strands_tool: Any, tool_use: dict[str, Any], invocation_state: dict[str, Any] | None = None
) -> tuple[list[Any], dict[str, Any]]:
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


def strands_agent(script: list[Any], **kwargs: Any) -> Any:
    """A real ``strands.Agent`` whose model replays ``script`` (strings and :func:`call` messages)."""
    import json

    from strands import Agent as StrandsAgent
    from strands.models import Model as StrandsModel

    class Scripted(StrandsModel):  # type: ignore[misc]
        def __init__(self) -> None:
            self.script = list(script)

        def update_config(self, **config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            yield {"messageStart": {"role": "assistant"}}
            if isinstance(item, str):
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": item}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
            else:
                use = item["content"][0]["toolUse"]
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
            yield {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}}}

    return StrandsAgent(model=Scripted(), callback_handler=None, **kwargs)
