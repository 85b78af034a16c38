"""`DurableDriver`: the local driver plus a store write at every step boundary."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator

from ..effects.scope import EffectScope
from ..loop.core import LoopCore
from ..loop.driver import DriverOptions, LocalDriver, LoopEvent
from ..loop.host import LoopHost
from ..types import Message, ToolResult, ToolUse
from .session import DurableSession


class DurableDriver(LocalDriver):
    """Persists the assistant message after each model call, the start of each tool call and
    each tool result as soon as that tool finishes (so a crash re-runs only unfinished tools).

    Writes at cycle boundaries also append a step row (turn_start, after_model, after_tools)."""

    def __init__(self, host: LoopHost, core: LoopCore, options: DriverOptions, cancel: threading.Event, session: DurableSession) -> None:
        super().__init__(host, core, options, cancel)
        self.session = session
        self.looping = False
        session.turn_active = True
        session.journal = self.journal  # its writes store the state of the calls whose outcomes are folded
        self.effects = EffectScope(session.effects)  # context.transaction() commits with the result's store write

    async def run(self) -> AsyncIterator[LoopEvent]:
        self.looping = True  # messages reported before this are the prompt of a new turn
        async for event in super().run():
            yield event

    async def on_messages(self, messages: list[Message]) -> None:
        if not self.looping:
            position = "turn_start"
        else:
            position = "after_model" if messages[0]["role"] == "assistant" else "after_tools"
        await self.session.sync_async(position)

    async def on_tool_started(self, tool_use: ToolUse) -> None:
        tool = self.host.tools.get(tool_use["name"])
        nested = tool is not None and tool.nests_runs
        self.session.timeline.tool_started(tool_use["toolUseId"], nested=nested, run_id=self.session.run_id)
        await self.session.sync_async()  # before the tool runs: a fenced owner never starts one

    async def on_tool_result(self, tool_use_id: str, result: ToolResult) -> None:
        self.session.timeline.tool_finished(tool_use_id)
        if self.run_state.cursor.phase == "tools":
            await self.session.sync_async()
        # else the result closed the cycle: the results message is reported next (on_messages),
        # and that one write stores it with the after_tools step, before anything else happens
