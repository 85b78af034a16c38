"""`DurableDriver`: the local driver plus a store write at every step boundary."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..loop.core import LoopCore
from ..loop.driver import DriverOptions, LocalDriver
from ..types import Message, ToolResult, ToolUse
from .session import DurableSession

if TYPE_CHECKING:
    from ..agent import Agent


class DurableDriver(LocalDriver):
    """Persists the assistant message after each model call, the start of each tool call and
    each tool result as soon as that tool finishes (so a crash re-runs only unfinished tools)."""

    def __init__(self, agent: Agent, core: LoopCore, options: DriverOptions, cancel: threading.Event, session: DurableSession) -> None:
        super().__init__(agent, core, options, cancel)
        self.session = session

    async def on_messages(self, messages: list[Message]) -> None:
        self.session.sync()

    async def on_tool_started(self, tool_use: ToolUse) -> None:
        self.session.sync()

    async def on_tool_result(self, tool_use_id: str, result: ToolResult) -> None:
        self.session.sync()
