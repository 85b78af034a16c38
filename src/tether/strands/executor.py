"""`TetherToolExecutor`: per-tool durability for a real Strands agent, around the agent's own executor.

:class:`~tether.strands.session_manager.TetherSessionManager` installs it at ``initialize(agent)``,
wrapping whatever executor the agent has (``ConcurrentToolExecutor``, ``SequentialToolExecutor``
or a custom one), which still decides how the calls run. For each batch of calls Strands hands it:

- a call whose result is recorded in the run is answered with that result; the tool does not run
  (nor its ``BeforeToolCallEvent``/``AfterToolCallEvent`` hooks: it ran in the process that
  recorded it);
- a call that started but has no recorded result is *in doubt*: an idempotent tool runs again with
  the same idempotency key; a tool named in the manager's ``non_idempotent`` goes to its
  ``reconcile`` callable, or without one stops the turn with a ``tether.in_doubt`` interrupt, as a
  native durable run does (:mod:`tether.durable.indoubt`); the step row of the resume lists them;
- the other calls run through the wrapped executor, each result recorded as soon as it arrives,
  except the batch's last one of an idempotent tool: Strands appends the message of the batch's
  results right after it, and that write stores it (a tool cycle is two fenced writes: the
  model's response with the start markers, the results with their message). Killed in between,
  that call is in doubt and runs again with the same key; a non-idempotent tool's result is
  always written at once. Their start markers: an idempotent call is recorded as started in the
  write that stores the model's response (one write fewer per cycle, as in native runs; a call
  the response asked for is in doubt after a crash even if it never began, and runs again with
  the same key, which is what a call that never started does); a non-idempotent call gets its
  own marker right before it runs (``BeforeToolCallEvent``); a call given to this executor that
  has none yet gets one before the batch runs.

**Idempotency key.** Every call that runs has the key ``<run_id>/<toolUseId>``, the same in every
process that runs it. A tool declared with ``@tool(context=True)`` reads it with
:func:`idempotency_key`\\ ``(tool_context)``, which takes the run from the calling agent (the
graph's parallel nodes share one ``invocation_state``); it is also in
``tool_context.invocation_state["tether"]["idempotency_keys"][toolUseId]``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from strands.interrupt import Interrupt
from strands.tools.executors._executor import ToolExecutor
from strands.types._events import ToolInterruptEvent
from strands.types.events import ToolResultEvent, TypedEvent

from ..durable.indoubt import IN_DOUBT, RERUN, InDoubtCall
from ..errors import ConfigurationError
from ..tools.base import to_result
from ._metrics import count_recorded

if TYPE_CHECKING:
    from strands import Agent
    from strands.telemetry.metrics import Trace
    from strands.tools.structured_output._structured_output_context import StructuredOutputContext
    from strands.types.tools import ToolContext, ToolResult, ToolUse

    from ._binding import AgentBinding


class BindingSource(Protocol):
    """What the executor asks of its session manager (:class:`~tether.strands.session_manager.TetherSessionManager`)."""

    non_idempotent: frozenset[str]
    reconcile: Callable[[InDoubtCall], Any] | None

    def binding(self, agent: Any) -> AgentBinding | None:
        """The agent's binding, if the manager initialized it."""
        ...


def idempotency_key(tool_context: ToolContext) -> str:
    """The idempotency key of the running call: ``<run_id>/<toolUseId>``, the same after a crash.

    Raises:
        ConfigurationError: The call was not run by an agent of a ``TetherSessionManager``.
    """
    ident = tool_context.tool_use["toolUseId"]
    agent = getattr(tool_context, "agent", None)
    executor = getattr(agent, "tool_executor", None)
    binding = executor.manager.binding(agent) if isinstance(executor, TetherToolExecutor) else None
    if binding is not None:  # the calling agent's own run: parallel graph nodes share one invocation_state
        return f"{binding.run.run_id}/{ident}"
    tether = tool_context.invocation_state.get("tether")
    key = tether.get("idempotency_keys", {}).get(ident) if isinstance(tether, dict) else None
    if not isinstance(key, str):
        raise ConfigurationError(
            f"tool call {ident!r} has no idempotency key: its agent has no TetherSessionManager (session_manager=TetherSessionManager(...))"
        )
    return key


def in_doubt_interrupt_id(tool_use_id: str) -> str:
    """The id of the ``tether.in_doubt`` interrupt raised for call ``tool_use_id``."""
    return f"{IN_DOUBT}:{tool_use_id}"


class TetherToolExecutor(ToolExecutor):
    """Strands' ``ToolExecutor`` recording each call's start and result in the agent's Tether run.

    Args:
        inner: The executor that runs the calls (the agent's own).
        manager: The session manager whose run records them.
    """

    def __init__(self, inner: ToolExecutor, manager: BindingSource) -> None:
        self.inner = inner
        self.manager = manager

    async def _execute(
        self,
        agent: Agent,
        tool_uses: list[ToolUse],
        tool_results: list[ToolResult],
        cycle_trace: Trace,
        cycle_span: Any,
        invocation_state: dict[str, Any],
        structured_output_context: StructuredOutputContext | None = None,
    ) -> AsyncGenerator[TypedEvent, None]:
        binding = self.manager.binding(agent)
        if binding is None:  # an agent of another manager shares this executor: not ours to record
            async for event in self.inner._execute(
                agent, tool_uses, tool_results, cycle_trace, cycle_span, invocation_state, structured_output_context
            ):
                yield event
            return
        run = binding.run
        cursor = run.run.cursor
        tether = invocation_state.setdefault("tether", {"run_id": run.run_id, "resumed": False, "idempotency_keys": {}})
        keys = tether.setdefault("idempotency_keys", {})
        to_run: list[ToolUse] = []
        markers: list[dict[str, Any]] = []
        replayed = False
        for use in tool_uses:
            ident = use["toolUseId"]
            recorded = cursor.results.get(ident)
            if recorded is not None:
                replayed = True
                count_recorded(agent, use, cast("ToolResult", recorded), cycle_trace)  # in result.metrics, as if it ran
                tool_results.append(cast("ToolResult", recorded))
                yield ToolResultEvent(cast("ToolResult", recorded))
                continue
            keys[ident] = f"{run.run_id}/{ident}"
            if ident in cursor.started and ident not in binding.premarked:  # started in an earlier process, no result: in doubt
                run.session.timeline.in_doubt.add(ident)
                marker: dict[str, Any] = {"toolUseId": ident, "name": use["name"], "action": RERUN}
                markers.append(marker)
                if use["name"] in self.manager.non_idempotent:
                    outcome = await self._settle(agent, use, keys[ident], marker)
                    if isinstance(outcome, ToolInterruptEvent):
                        yield outcome
                        continue
                    if outcome is not None:
                        run.record_result(outcome)
                        tool_results.append(outcome)
                        yield ToolResultEvent(outcome)
                        continue
            to_run.append(use)
        if markers:
            status = "interrupted" if any(m["action"] == "interrupt" for m in markers) else "running"
            run.write(binding.messages(), "resumed", status=status, in_doubt=markers)
        fresh = [
            use["toolUseId"] for use in to_run if use["name"] not in self.manager.non_idempotent and use["toolUseId"] not in cursor.started
        ]
        for use in to_run:
            if use["toolUseId"] in binding.premarked:
                run.session.timeline.tool_started(use["toolUseId"])
        if fresh:
            for ident in fresh:
                cursor.started.append(ident)
                run.session.timeline.tool_started(ident)
            run.write(binding.messages())  # before any of them runs: a fenced owner starts none
        waiting = {use["toolUseId"]: use["name"] for use in to_run}
        async for event in self.inner._execute(
            agent, to_run, tool_results, cycle_trace, cycle_span, invocation_state, structured_output_context
        ):
            if isinstance(event, ToolResultEvent):
                result = event.tool_result
                name = waiting.pop(result["toolUseId"], None)
                # The batch's last result of an idempotent tool is stored with the message of the
                # batch's results, which Strands appends next (one write per cycle fewer).
                run.record_result(result, write=bool(waiting) or name is None or name in self.manager.non_idempotent)
            elif isinstance(event, ToolInterruptEvent):
                if event.tool_use_id in cursor.started:  # stopped for a question: it runs again once answered, not in doubt
                    cursor.started.remove(event.tool_use_id)
                    run.write(binding.messages())
            yield event
        if replayed:  # recorded and new results in the calls' order, as a run without a crash mostly has them
            order = {use["toolUseId"]: index for index, use in enumerate(tool_uses)}
            tool_results.sort(key=lambda result: order.get(result["toolUseId"], -1))

    async def _settle(self, agent: Agent, use: ToolUse, key: str, marker: dict[str, Any]) -> ToolResult | ToolInterruptEvent | None:
        """An in-doubt call of a non-idempotent tool: its result to record, an interrupt to ask
        about it, or None to run it again."""
        ident = use["toolUseId"]
        call = InDoubtCall(key.rsplit("/", 1)[0], cast("Any", use), key)
        reconcile = self.manager.reconcile
        if reconcile is not None:
            answer = reconcile(call)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer == RERUN:
                return None
            marker["action"] = "reconciled"
            return cast("ToolResult", to_result(ident, answer))
        table = agent._interrupt_state.interrupts
        asked = table.get(in_doubt_interrupt_id(ident))
        if asked is not None and asked.response is not None:
            marker["action"] = "answered"
            return None if asked.response == RERUN else cast("ToolResult", to_result(ident, asked.response))
        interrupt = Interrupt(in_doubt_interrupt_id(ident), IN_DOUBT, call.to_reason())
        table.setdefault(interrupt.id, interrupt)
        marker["action"] = "interrupt"
        return ToolInterruptEvent(use, [interrupt])


__all__ = ["TetherToolExecutor", "idempotency_key", "in_doubt_interrupt_id"]
