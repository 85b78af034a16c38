"""`DurableDriver`: the local driver plus a store write at every step boundary."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator

from ..effects.scope import EffectScope
from ..loop.core import LoopCore, tool_uses_of
from ..loop.driver import DriverOptions, LocalDriver, LoopEvent
from ..loop.host import LoopHost
from ..types import Message, ToolResult, ToolUse
from .session import DurableSession


class DurableDriver(LocalDriver):
    """Persists the assistant message after each model call, the start of each tool call and
    each tool result as soon as that tool finishes (so a crash re-runs only unfinished tools).

    Writes at cycle boundaries also append a step row (turn_start, after_model, after_tools).

    The write that records a cycle's tool results (``after_tools``) commits *behind* when
    nobody watches the run as it goes (an ``invoke``, not a ``stream``, and no message hooks):
    the next model call is made while the store commits it, and the next write waits for it
    (it is also the same connection's next statement). A crash before that commit is done is a
    crash before the results were stored, as it always was: the calls' results are lost and
    the calls are in doubt, and the model call made meanwhile was never recorded (a resume
    makes it again, as it makes any call a crash interrupted). Nothing reaches the caller
    before the write is done: the events after it are held until then, and the turn does not
    end before it.

    The start of an *idempotent* tool's call rides on the write that records the model's
    response (one save point fewer per cycle): the calls the response asks for are recorded as
    started in that write, before any of them runs. A crash between that write and a call's
    start leaves the call in doubt although it never ran; an idempotent call in doubt runs again
    with the same idempotency key, which is what a call that never started does too. A call of
    an ``idempotent=False`` tool keeps its own start write right before it runs (an in-doubt
    call of such a tool is asked about or reconciled, so it must not be flagged early).
    """

    def __init__(self, host: LoopHost, core: LoopCore, options: DriverOptions, cancel: threading.Event, session: DurableSession) -> None:
        super().__init__(host, core, options, cancel)
        self.session = session
        self.looping = False
        self.premarked: set[str] = set()  # calls recorded as started with the model's response
        self.begun: set[str] = set()  # the calls of the tool phase that did begin
        session.turn_active = True
        session.journal = self.journal  # its writes store the state of the calls whose outcomes are folded
        self.effects = EffectScope(session.effects)  # context.transaction() commits with the result's store write
        # The results write of a cycle commits while the next model call is made when nobody
        # watches the run as it goes (no deltas forwarded: invoke, not stream; no message hooks).
        self._behind_ok = not options.forward_deltas and not self._has_message_hooks
        self.save_now = self._save_now

    async def _save_now(self) -> None:
        """A tool call's ``context.save()``: store the run (with what the call keeps in its state)."""
        await self.session.sync_async()

    async def run(self) -> AsyncIterator[LoopEvent]:
        """The loop's events, each only once what it reports is stored: while a write made
        behind (see :meth:`on_messages`) commits, the events that follow it are held, and the
        turn does not end, however it ends, before that write is settled."""
        self.looping = True  # messages reported before this are the prompt of a new turn
        session = self.session
        held: list[LoopEvent] = []
        try:
            async for event in super().run():
                if session.writing_behind:
                    held.append(event)  # stored before the caller hears of it
                    continue
                if held:
                    for waited in held:
                        yield waited
                    held.clear()
                yield event
            # The loop stopped before the tools the last response asked for ran (a budget that
            # refused the round): they did not start, and the turn's last write must say so.
            self.on_tools_ended()
        finally:
            await session.settle()
        for event in held:
            yield event

    async def on_messages(self, messages: list[Message]) -> None:
        if not self.looping:
            position = "turn_start"
        else:
            position = "after_model" if messages[0]["role"] == "assistant" else "after_tools"
        if position == "after_model":
            self._premark(messages[-1])
        await self.session.sync_async(position, behind=position == "after_tools" and self._behind_ok)

    def _premark(self, message: Message) -> None:
        """Record the idempotent calls of a model response as started, when they run next."""
        cursor = self.run_state.cursor
        self.premarked.clear()
        self.begun.clear()
        if cursor.phase != "tools" or cursor.pending_pause is not None or message.get("role") != "assistant":
            return  # no tools to run now (a checkpoint pauses first, or the response ended the turn)
        for use in tool_uses_of(message):
            tool = self.host.tools.get(use["name"])
            if tool is not None and tool.idempotent:  # a tool not listed yet (a tool source's) keeps its own write
                self.core.tool_started(use["toolUseId"])
                self.premarked.add(use["toolUseId"])

    async def on_tool_started(self, tool_use: ToolUse) -> None:
        tool = self.host.tools.get(tool_use["name"])
        nested = tool is not None and tool.nests_runs
        self.session.timeline.tool_started(tool_use["toolUseId"], nested=nested, run_id=self.session.run_id)
        self.begun.add(tool_use["toolUseId"])
        if tool_use["toolUseId"] in self.premarked:
            return  # its start was stored with the model's response
        await self.session.sync_async()  # before the tool runs: a fenced owner never starts one

    def on_tools_ended(self) -> None:
        """Calls recorded as started with the model's response that never began (an interrupt
        or a cancellation stopped the cycle first) are not started: the next write says so, so
        a resume does not take them for calls in doubt."""
        unstarted = self.premarked - self.begun
        if unstarted:
            cursor = self.run_state.cursor
            cursor.started = [ident for ident in cursor.started if ident not in unstarted]
        self.premarked.clear()

    async def on_tool_result(self, tool_use_id: str, result: ToolResult) -> None:
        self.session.timeline.tool_finished(tool_use_id)
        if self.run_state.cursor.phase == "tools":
            await self.session.sync_async()
        # else the result closed the cycle: the results message is reported next (on_messages),
        # and that one write stores it with the after_tools step, before anything else happens
