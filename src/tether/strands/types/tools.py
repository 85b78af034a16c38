"""Strands' `strands.types.tools`: tool specs, uses, results and the tool context."""

from ...tools.context import ToolContext
from ...types.content import ToolResult, ToolResultContent, ToolResultStatus, ToolUse
from ...types.tools import ToolChoice, ToolSpec

__all__ = ["ToolChoice", "ToolContext", "ToolResult", "ToolResultContent", "ToolResultStatus", "ToolSpec", "ToolUse"]
