"""Strands' `strands.tools` on Tether (see :mod:`tether.strands`): ``@tool`` with Strands' spec and
result mapping, ``ToolContext``, module tools (``PythonAgentTool``), ``ToolProvider`` and the
spec helpers. :func:`to_tether_tools` turns a Strands ``tools=[...]`` list into Tether's."""

from ._adapt import to_tether_tools
from ._events import ToolResultEvent, ToolStreamEvent
from .agent_tool import AgentTool, ToolGenerator
from .context import ToolContext
from .decorator import DecoratedFunctionTool, tool
from .tool_provider import ToolProvider
from .tools import InvalidToolUseNameException, PythonAgentTool, normalize_schema, normalize_tool_spec

__all__ = [
    "AgentTool",
    "DecoratedFunctionTool",
    "InvalidToolUseNameException",
    "PythonAgentTool",
    "ToolContext",
    "ToolGenerator",
    "ToolProvider",
    "ToolResultEvent",
    "ToolStreamEvent",
    "normalize_schema",
    "normalize_tool_spec",
    "to_tether_tools",
    "tool",
]
