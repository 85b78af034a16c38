"""Strands' ``AgentTool`` as a Tether :class:`~tether.tools.base.Tool`.

A Strands tool is an object with ``tool_name``, ``tool_spec``, ``tool_type`` and an async
generator ``stream(tool_use, invocation_state, **kwargs)`` whose last event is the result. This
base class keeps that contract for subclasses (the facade's ``@tool`` functions, module tools,
MCP tools, a user's own subclasses) and implements Tether's ``invoke`` on top of ``stream``, so
Tether's loop, hooks, in-doubt handling and durable runs see an ordinary tool.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import Any, cast

from ...tools.base import Tool, error_result
from ...tools.context import ToolContext as _TetherToolContext
from ...types import ToolResult, ToolSpec, ToolUse
from ._events import ToolResultEvent, ToolStreamEvent
from ._schema import normalize_tool_spec
from .context import ToolContext

ToolGenerator = AsyncGenerator[Any, None]
"""What ``AgentTool.stream`` returns: tool events, the last being the result."""


class AgentTool(Tool):
    """Base class of Strands-style tools (Strands' ``strands.types.tools.AgentTool``).

    Subclasses implement ``tool_name``, ``tool_spec``, ``tool_type`` and ``stream``. What the
    model sees is ``tool_spec`` normalized as Strands' registry does (:func:`normalize_tool_spec`).
    ``stream`` receives the call's ``invocation_state`` (with ``agent`` set, as in Strands) and
    the keyword ``_tool_context`` (a :class:`ToolContext`); values it yields before the result
    reach the caller's stream as ``tool_stream`` events.
    """

    streams_events = True

    def __init__(self) -> None:
        self._is_dynamic = False

    @property
    @abstractmethod
    def tool_name(self) -> str:
        """The unique name of the tool."""

    @property
    @abstractmethod
    def tool_spec(self) -> ToolSpec:
        """The tool's specification (name, description, inputSchema)."""

    @property
    @abstractmethod
    def tool_type(self) -> str:
        """The kind of tool (``"function"``, ``"python"``, ...)."""

    @abstractmethod
    def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Run the tool: yield intermediate events, then the result."""

    @property
    def supports_hot_reload(self) -> bool:
        return False

    @property
    def is_dynamic(self) -> bool:
        return getattr(self, "_is_dynamic", False)

    def mark_dynamic(self) -> None:
        self._is_dynamic = True

    def get_display_properties(self) -> dict[str, str]:
        return {"Name": self.tool_name, "Type": self.tool_type}

    @property
    def spec(self) -> ToolSpec:
        """The spec sent to models: ``tool_spec`` normalized (computed on each read, since
        Strands lets ``tool_spec`` be replaced at run time)."""
        return normalize_tool_spec(self.tool_spec)

    async def invoke(self, tool_use: ToolUse, context: _TetherToolContext) -> ToolResult:
        """Run ``stream`` and return its result; a failure is an error result as in Strands.

        Interrupt signals (``BaseException``) pass through to the driver.
        """
        tool_use_id = tool_use["toolUseId"]
        strands_context = ToolContext.from_tether(context)
        invocation_state = context.invocation_state
        invocation_state["agent"] = context.agent
        result: Any = None
        streamed = False
        try:
            async for event in self.stream(tool_use, invocation_state, _tool_context=strands_context):
                if isinstance(event, ToolResultEvent):
                    result = event.tool_result
                    break
                if isinstance(event, ToolStreamEvent):
                    context.emit(cast(Any, event))
                    continue
                context.emit(cast(Any, ToolStreamEvent(tool_use, event)))
                streamed, result = True, event
            else:
                if not streamed:
                    return error_result(tool_use_id, f"Tool '{tool_use['name']}' did not return a result")
        except Exception as exc:  # a tool's failure is the model's information, as in Strands
            return error_result(tool_use_id, f"Error: {exc}")
        if not isinstance(result, dict) or result.get("status") not in ("success", "error") or not isinstance(result.get("content"), list):
            return error_result(tool_use_id, f"Error: tool {tool_use['name']!r} returned a malformed ToolResult: {result!r:.200}")
        return cast(ToolResult, {**result, "toolUseId": tool_use_id})

    def run(self, input: dict[str, Any], context: _TetherToolContext) -> Any:
        raise NotImplementedError("a Strands-style tool runs through stream(); call invoke()")


__all__ = ["AgentTool", "ToolGenerator"]
