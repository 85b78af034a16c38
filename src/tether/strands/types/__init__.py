"""Strands' `strands.types` on Tether (see :mod:`tether.strands`).

The data shapes are Tether's own (:mod:`tether.types`) under Strands' names: a message, a tool
use or a tool result is the same JSON dict in both.
"""

from ...snapshot import Snapshot
from .content import ContentBlock, Message, Messages, SystemContentBlock
from .tools import ToolResult, ToolSpec, ToolUse

__all__ = ["ContentBlock", "Message", "Messages", "Snapshot", "SystemContentBlock", "ToolResult", "ToolSpec", "ToolUse"]
