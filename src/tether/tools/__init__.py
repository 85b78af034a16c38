"""Tools: ``@tool``, class-based tools, tool sources, the registry, the context and the executors."""

from .base import Tool, error_result, to_result
from .compensation import Compensate, Undo
from .context import ToolContext
from .decorator import FunctionTool, parse_docstring, tool
from .executors import ConcurrentToolExecutor, SequentialToolExecutor, ToolExecutor
from .registry import ToolRegistry
from .source import SourceTool, ToolSource

__all__ = [
    "Compensate",
    "ConcurrentToolExecutor",
    "FunctionTool",
    "SequentialToolExecutor",
    "SourceTool",
    "Tool",
    "ToolContext",
    "ToolExecutor",
    "ToolRegistry",
    "ToolSource",
    "Undo",
    "error_result",
    "parse_docstring",
    "to_result",
    "tool",
]
