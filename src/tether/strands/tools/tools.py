"""Strands' ``strands.tools.tools``: module-based tools (``PythonAgentTool``) and spec normalization."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from ...types import ToolSpec, ToolUse
from ._events import ToolResultEvent
from ._schema import (
    InvalidToolUseNameException,
    normalize_schema,
    normalize_tool_spec,
    validate_tool_use,
    validate_tool_use_name,
)
from .agent_tool import AgentTool, ToolGenerator


class FunctionAgentTool(AgentTool):
    """A Strands-style tool backed by one function: its name and spec held here, the spec
    replaceable at run time under Strands' rule (same name; ``description`` and ``inputSchema``
    present). The base of ``@tool`` functions and module tools."""

    def __init__(self, tool_name: str, tool_spec: ToolSpec, tool_func: Any) -> None:
        super().__init__()
        self._tool_name = tool_name
        self._tool_spec = tool_spec
        self._tool_func = tool_func

    @property
    def tool_name(self) -> str:
        return self._tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        return self._tool_spec

    @tool_spec.setter
    def tool_spec(self, value: ToolSpec) -> None:
        _check_spec_change(self._tool_name, value)
        self._tool_spec = value

    @property
    def supports_hot_reload(self) -> bool:
        return True


class PythonAgentTool(FunctionAgentTool):
    """A module-based tool: a ``TOOL_SPEC`` dict and a function ``name(tool_use, **kwargs)``
    returning a ToolResult. The function receives the call's ``invocation_state`` as keyword
    arguments (``agent`` among them), as in Strands."""

    streams_events = False

    @property
    def tool_type(self) -> str:
        return "python"

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        if inspect.iscoroutinefunction(self._tool_func):
            result = await self._tool_func(tool_use, **invocation_state)
        else:
            result = await asyncio.to_thread(self._tool_func, tool_use, **invocation_state)
        yield ToolResultEvent(result)


def _check_spec_change(name: str, value: ToolSpec) -> None:
    """Strands' rule for replacing a tool's spec at run time: same name, description and inputSchema present."""
    if value.get("name") != name:
        raise ValueError(f"cannot change tool name via tool_spec (expected '{name}', got '{value.get('name')}')")
    for key in ("description", "inputSchema"):
        if key not in value:
            raise ValueError(f"tool_spec must contain '{key}'")


__all__ = [
    "InvalidToolUseNameException",
    "PythonAgentTool",
    "normalize_schema",
    "normalize_tool_spec",
    "validate_tool_use",
    "validate_tool_use_name",
]
