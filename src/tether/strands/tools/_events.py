"""The two tool events of Strands' stream protocol that facade tools produce.

Strands' ``AgentTool.stream`` yields intermediate values and ends with a ``ToolResultEvent``;
the agent wraps every intermediate value in a ``ToolStreamEvent``. Both are plain dicts with
Strands' keys, so what reaches the caller's stream has Strands' shape.
"""

from __future__ import annotations

from typing import Any, cast

from ...types import ToolResult, ToolUse


class ToolResultEvent(dict[str, Any]):
    """The last event of a tool's stream: its result (``{"type": "tool_result", "tool_result": ...}``)."""

    def __init__(self, tool_result: ToolResult, exception: Exception | None = None) -> None:
        super().__init__({"type": "tool_result", "tool_result": tool_result})
        self.exception = exception

    @property
    def tool_result(self) -> ToolResult:
        """The result returned to the model."""
        return cast(ToolResult, self["tool_result"])

    @property
    def tool_use_id(self) -> str:
        return self.tool_result["toolUseId"]


class ToolStreamEvent(dict[str, Any]):
    """A value a tool yielded while running (``{"type": "tool_stream", "tool_stream_event": {"tool_use", "data"}}``)."""

    def __init__(self, tool_use: ToolUse, tool_stream_data: Any) -> None:
        super().__init__({"type": "tool_stream", "tool_stream_event": {"tool_use": tool_use, "data": tool_stream_data}})

    @property
    def tool_use_id(self) -> str:
        return cast(ToolUse, self["tool_stream_event"]["tool_use"])["toolUseId"]


__all__ = ["ToolResultEvent", "ToolStreamEvent"]
