"""The local asyncio driver: performs the core's effects and streams events to the caller.

It calls the model (retrying throttling with backoff, reducing the conversation on overflow),
runs tools through the tool executor, fires hooks, and folds every outcome back into the core.
It keeps no run state of its own: stop it between any two effects and the ``RunState`` says
everything needed to go on. Subclasses (the durable driver) persist at step boundaries by
overriding the ``on_*`` methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pydantic

from ..budget import Budget
from ..effects.scope import EffectScope
from ..hooks import HookRegistry, MessageAdded
from ..metrics import record_tool
from ..types import LoopEvent, Message, ToolResult, ToolUse
from .core import LoopCore, ModelOutcome
from .effects import CallModel, CloseCycle, Effect, Pause, RunTools, Stop
from .host import LoopHost
from .journal import StateJournal
from .model_call import ModelResponse, respond
from .tool_call import PendingCall, ToolOutcome, begin_call
from .tracing import Span

_log = logging.getLogger(__name__)

_CANCEL_POLL_SECONDS = 0.05
"""How often a throttling backoff checks for cancellation (cancel() is a thread-safe flag)."""


@dataclass
class DriverOptions:
    """What one invocation needs besides the run state."""

    invocation_state: dict[str, Any] = field(default_factory=dict)
    output_model: type[pydantic.BaseModel] | None = None
    output_tool: str | None = None
    forward_deltas: bool = True
    trace_parent: Span | None = None


class LocalDriver:
    """Drives a :class:`LoopCore` to its next stop, in-process."""

    def __init__(self, host: LoopHost, core: LoopCore, options: DriverOptions, cancel: threading.Event) -> None:
        self.host = host
        self.core = core
        self.run_state = core.run
        self.options = options
        self.cancel_event = cancel
        self.hooks: HookRegistry = host.hooks
        self.final: Effect | None = None
        self._has_message_hooks = self.hooks.has(MessageAdded)
        self.journal = StateJournal(self.run_state)
        """Which running call changed what in the agent state (see :mod:`tether.loop.journal`)."""
        self._recorded: set[str] = set()  # the calls of this tool phase whose results are folded
        self._round: tuple[list[ToolUse], Budget | None] = ([], None)  # this tool phase's calls, their shared budget
        self._mark = time.monotonic()  # when the running time last counted against the budget began
        self.effects = EffectScope()
        """What the invocation's tool calls share for side effects (``context.http``, ``context.transaction()``)."""

    async def aclose(self) -> None:
        """The invocation ended: close what its tool calls opened (the HTTP client, transactions
        no recorded result will commit)."""
        await self.effects.aclose()

    # -- persistence points (no-ops here; the durable driver writes) -----------------------

    async def on_messages(self, messages: list[Message]) -> None:
        """Messages were appended to the run."""

    async def on_tool_started(self, tool_use: ToolUse) -> None:
        """A tool call is about to run."""

    async def on_tool_result(self, tool_use_id: str, result: ToolResult) -> None:
        """A tool result was recorded."""

    def on_tools_ended(self) -> None:
        """The cycle's tool calls are over (done, interrupted, cancelled or failed)."""

    save_now: Callable[[], Awaitable[None]] | None = None
    """Stores the run in the middle of a tool call (``ToolContext.save()``); None here."""

    # -- the loop -------------------------------------------------------------------------

    def _tick(self) -> None:
        """Report the running time since the last report to the core (a run's budget counts the
        time its driver runs: measured here, never in the core)."""
        now = time.monotonic()
        self.core.elapsed(now - self._mark)
        self._mark = now

    async def run(self) -> AsyncIterator[LoopEvent]:
        """Perform effects until the core pauses or stops; yields stream events."""
        core = self.core
        cancel = self.cancel_event
        self._mark = time.monotonic()
        while True:
            if cancel.is_set():
                added = core.cancel()
                await self._added(added)
                for message in added:
                    yield {"type": "message", "message": message}
            effect = core.next_effect()
            if _log.isEnabledFor(logging.DEBUG):
                run_id = self.run_state.run_id
                _log.debug("%scycle %d: %s", f"run {run_id!r} " if run_id else "", self.run_state.cursor.cycle_index, _describe(effect))
            if isinstance(effect, CallModel):
                async for event in self._call_model(effect):
                    yield event
            elif isinstance(effect, RunTools):
                try:
                    async for event in self._run_tools(effect):
                        yield event
                finally:
                    self.journal.clear()  # every call is folded, or none will be: the live state stands
                    self.on_tools_ended()
            elif isinstance(effect, CloseCycle):
                await self._added(effect.messages)
                for message in effect.messages:
                    yield {"type": "message", "message": message}
            else:
                self._tick()
                if isinstance(effect, Stop) and effect.detail is not None:
                    _log.info("%sstopped: %s (%s)", _run_label(self.run_state.run_id), effect.reason, effect.detail)
                self.final = effect
                return

    async def _added(self, messages: list[Message]) -> None:
        if not messages:
            return
        await self.on_messages(messages)
        if self._has_message_hooks:
            for message in messages:
                await self.hooks.fire(MessageAdded(self.host.owner, message))

    # -- model calls ----------------------------------------------------------------------

    async def _call_model(self, effect: CallModel) -> AsyncIterator[LoopEvent]:
        run = self.run_state
        response: ModelResponse | None = None
        async for item in respond(
            self.host,
            run,
            tool_specs=self.host.tool_specs(self.options.output_model),
            tool_choice=effect.tool_choice,
            cycle_index=run.cursor.cycle_index,
            retry=self.host.retry,
            backoff=self._backoff,
            forward_deltas=self.options.forward_deltas,
            cancel=self.cancel_event,
            parent=self.options.trace_parent,
            max_tokens=effect.max_tokens,
        ):
            if isinstance(item, ModelResponse):
                response = item
            else:
                yield item
        if response is None:
            return  # cancelled: the loop's next turn records it
        if response.model_state is not None:
            run.model_state = response.model_state
        self._tick()
        added = self.core.model_done(ModelOutcome(response.message, response.stop_reason, response.usage, response.latency_ms))
        await self._added(added)
        for message in added:
            yield {"type": "message", "message": message}

    async def _backoff(self, delay: float) -> None:
        """Wait ``delay`` seconds, or less if the invocation is cancelled meanwhile."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        while not self.cancel_event.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            await asyncio.sleep(min(remaining, _CANCEL_POLL_SECONDS))

    # -- tool calls -----------------------------------------------------------------------

    async def _run_tools(self, effect: RunTools) -> AsyncIterator[LoopEvent]:
        """Run the cycle's calls, yielding each call's events as they happen.

        A ``tool_start`` reaches the caller before that call is recorded as started or its
        tool runs (the call waits until the caller has taken the event and asked for the next
        one), and a ``tool_result`` as soon as its tool finished. Calls the executor runs in
        order run right here; otherwise the executor runs in a task of its own and hands the
        events over a queue. A caller that stops iterating, or a cancelled invocation, cancels
        the calls still running; a call whose ``tool_start`` was not taken never runs.
        """
        executor = self.host.tool_executor
        self._recorded = set()
        in_order = executor.runs_in_order(effect.tool_uses)
        shared = None if in_order else self.core.round_budget(effect.tool_uses, self._nests, at_once=True)
        self._round = (effect.tool_uses, shared)
        if in_order:
            for tool_use in effect.tool_uses:
                events = self._tool_events(tool_use)
                try:
                    async for event in events:
                        yield event
                except BaseException:
                    await events.aclose()  # the caller stopped, or the invocation was cancelled
                    raise
                if tool_use["toolUseId"] not in self._recorded:
                    return  # interrupted, or cancelled: the calls after it do not run
            return
        queue: asyncio.Queue[_Handoff | None] = asyncio.Queue()

        async def run_one(tool_use: ToolUse) -> bool:
            async with contextlib.aclosing(self._tool_events(tool_use)) as events:
                async for event in events:
                    if event["type"] == "tool_start":
                        taken = asyncio.get_running_loop().create_future()
                        queue.put_nowait((event, taken))
                        await taken
                    else:
                        queue.put_nowait((event, None))
            return tool_use["toolUseId"] in self._recorded

        task = asyncio.ensure_future(executor.execute(effect.tool_uses, run_one))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (item := await queue.get()) is not None:
                event, taken = item
                yield event
                if taken is not None and not taken.done():
                    taken.set_result(None)  # the caller came back for more: the call may go on
            await task  # its error, if any
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])  # unlike awaiting it, never swallows our own cancellation

    async def _tool_events(self, tool_use: ToolUse) -> AsyncGenerator[LoopEvent, None]:
        """One call: ``tool_start`` (before the start is recorded and the tool runs), then
        ``tool_result`` and the messages it closed the cycle with. Yields nothing when the
        invocation was cancelled first or a before-hook interrupted it; no ``tool_result``
        when the tool interrupted."""
        if self.cancel_event.is_set():
            return
        core = self.core
        tool_use_id = tool_use["toolUseId"]
        options = self.options
        self.journal.begin(tool_use_id)
        pending = await begin_call(
            self.host,
            self.run_state,
            tool_use,
            invocation_state=options.invocation_state,
            parent=options.trace_parent,
            journal=self.journal,
        )
        if isinstance(pending, ToolOutcome):
            assert pending.interrupt is not None
            _log.debug("tool call %s: %s interrupted by a hook (%s)", tool_use_id, tool_use["name"], pending.interrupt.name)
            for event in await self._outcome(tool_use, pending):
                yield event
            return
        try:
            yield {"type": "tool_start", "toolUse": tool_use}
            _log.debug("tool call %s: %s started", tool_use_id, tool_use["name"])
            core.tool_started(tool_use_id)
            await self.on_tool_started(tool_use)
        except BaseException as exc:
            pending.abandon(exc)
            raise
        pending.pausable = bool(core.config.checkpoint_positions)  # this driver pauses at checkpoints
        pending.budget = self._nested_budget()  # what a nested run of this call may spend
        pending.effects = self.effects
        pending.save = self.save_now
        pending.cancelled = self.cancel_event.is_set
        if pending.selected is not None and pending.selected.streams_events:
            outcome = None
            async for item in self._streamed(pending):
                if isinstance(item, ToolOutcome):
                    outcome = item
                else:
                    yield item
            assert outcome is not None
        else:
            outcome = await pending.finish(output_model=options.output_model, output_tool=options.output_tool)
        for event in await self._outcome(tool_use, outcome):
            yield event

    def _nests(self, name: str) -> bool:
        """Whether the tool named ``name`` nests runs (an agent tool)."""
        found = self.host.tools.get(name)
        return found is not None and found.nests_runs

    def _nested_budget(self) -> Budget | None:
        """The budget a call starting now may give a nested run (:meth:`LoopCore.round_budget`):
        its round's share when the round's calls run at once, else what is left now."""
        uses, shared = self._round
        if shared is not None or self.core.config.budget is None:
            return shared
        return self.core.round_budget(uses[len(self._recorded) :], self._nests, at_once=False)

    async def _outcome(self, tool_use: ToolUse, outcome: ToolOutcome) -> list[LoopEvent]:
        """Fold a finished call's outcome into the run, with the outcomes it must be stored with;
        returns the events to yield.

        A call that read or overwrote a sibling's agent-state change waits until that sibling's
        outcome is folded (see :mod:`tether.loop.journal`); the call that completes a group
        folds the whole group, stores it in one step and returns its events. A call another call
        folded returns none.
        """
        journal = self.journal
        tool_use_id = tool_use["toolUseId"]
        group = journal.finish(tool_use_id, (tool_use, outcome))
        if group is None:
            await journal.wait_folded(tool_use_id)  # folded, with its events, by the call it waited for
            return []
        self._tick()
        added: list[Message] = []
        results: list[ToolResult] = []
        for _, (use, done) in group:
            added += self._fold(use, done, results)
        journal.folded([call_id for call_id, _ in group])
        for result in results:
            await self.on_tool_result(result["toolUseId"], result)
        await self._added(added)  # stored before the caller hears of it: a caller that stops then loses nothing
        events: list[LoopEvent] = [{"type": "tool_result", "toolResult": result} for result in results]
        events += [{"type": "message", "message": message} for message in added]
        return events

    def _fold(self, tool_use: ToolUse, outcome: ToolOutcome, results: list[ToolResult]) -> list[Message]:
        """Fold one outcome into the core (no await: a group is folded at once); a result is
        appended to ``results``. Returns the messages the fold added (a closed cycle)."""
        core = self.core
        tool_use_id = tool_use["toolUseId"]
        if outcome.interrupt is not None:
            _log.debug("tool call %s: %s interrupted (%s)", tool_use_id, tool_use["name"], outcome.interrupt.name)
            core.tool_interrupted([outcome.interrupt.to_dict()])
            return []
        if outcome.paused:
            _log.debug("tool call %s: %s paused at a checkpoint", tool_use_id, tool_use["name"])
            core.tool_paused(tool_use_id)
            return []
        result = outcome.result
        assert result is not None
        _log.debug("tool call %s: %s finished (%s, %.1f ms)", tool_use_id, tool_use["name"], result["status"], outcome.duration_ms)
        outcome.apply_recorded()
        record_tool(self.run_state.metrics, tool_use["name"], outcome.duration_ms, result["status"] == "error")
        results.append(result)
        self._recorded.add(tool_use_id)
        return core.tool_done(tool_use_id, result, structured_output=outcome.structured_output)

    async def _streamed(self, pending: PendingCall) -> AsyncGenerator[LoopEvent | ToolOutcome, None]:
        """Run a tool that streams events (``Tool.streams_events``): yields the events it emits
        while it runs, then its outcome. A caller that stops iterating cancels the tool."""
        queue: asyncio.Queue[LoopEvent | None] = asyncio.Queue()
        pending.emit = queue.put_nowait
        options = self.options
        task = asyncio.ensure_future(pending.finish(output_model=options.output_model, output_tool=options.output_tool))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            yield await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])


def _run_label(run_id: str | None) -> str:
    return f"run {run_id!r} " if run_id else ""


def _describe(effect: Effect) -> str:
    """An effect in a few words, for DEBUG logs (names and ids, never message contents)."""
    if isinstance(effect, RunTools):
        return "run tools " + ", ".join(f"{use['name']} ({use['toolUseId']})" for use in effect.tool_uses)
    if isinstance(effect, CloseCycle):
        return f"close the cycle ({len(effect.messages)} messages)"
    if isinstance(effect, CallModel):
        return "call the model"
    if isinstance(effect, Pause):
        return f"pause at {effect.position}"
    return f"stop ({effect.reason})"


_Handoff = tuple[LoopEvent, "asyncio.Future[None] | None"]
"""An event for the caller and, for ``tool_start``, the future set once the caller has taken it."""


__all__ = ["LoopEvent", "DriverOptions", "LocalDriver", "Pause", "Stop"]
