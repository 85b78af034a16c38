"""Interrupt stops of a cut-off turn, handed back to the restarted program in order.

A Strands turn that stopped for interrupts is finished by further calls answering them
(``agent([{"interruptResponse": ...}])``). When such a turn is cut off by a crash after an answer
was recorded, the restarted program makes the turn's first call again, which, uninterrupted,
returned the interrupts: a program written to answer once reads ``result.interrupts``. So the
session manager records each stop of the open turn (:func:`record_stop`) and the program's answer
(:func:`record_answer`), and after a restart hands the answered stops back in order: each call gets
the conversation and Strands' interrupt state as they were at its stop, and the stop's result (same
interrupts, same ids, its ``metrics`` as they were at the stop) without running anything (:func:`hand_back` arms :class:`StopReplay`, an
``AgentStreamStage`` middleware); the program's answer is compared with the recorded one
(:func:`answered`); once the last recorded stop is answered, the turn continues from the record as
any cut-off turn does (recorded model responses and tool results reused, nothing recorded re-run).
Nothing is written while stops are handed back: the run is ahead of the agent and holds all of it.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from strands.interrupt import Interrupt
from strands.middleware._agent_stream import AgentStreamContext
from strands.telemetry.metrics import EventLoopMetrics
from strands.types._events import EventLoopStopEvent
from strands.types.session import SessionAgent

from .._json import json_copy
from ..errors import PromptError
from ._binding import AgentBinding
from ._echo import turn_events
from ._metrics import restore, snapshot

if TYPE_CHECKING:
    from strands import Agent


def record_stop(turn: dict[str, Any], binding: AgentBinding, result: Any) -> None:
    """Record an interrupt stop of the open ``turn`` (an unanswered last one, asked again after a
    restart, is replaced)."""
    stops: list[dict[str, Any]] = turn.setdefault("stops", [])
    if stops and "answer" not in stops[-1]:
        stops.pop()
    stops.append(
        {
            "messages": len(binding.messages()),
            "interrupt_state": json_copy(binding.agent._interrupt_state.to_dict()),
            "interrupts": [json_copy(item.to_dict()) for item in result.interrupts or []],
            "message": json_copy(result.message),
            "metrics": snapshot(binding.agent.event_loop_metrics),
        }
    )


def record_answer(turn: dict[str, Any], agent: Agent) -> None:
    """The program answers the turn's last stop (a call continuing the open turn): recorded, written
    with the turn's next step."""
    stops = turn.get("stops") or []
    interrupts = agent._interrupt_state
    if stops and "answer" not in stops[-1] and interrupts.activated:
        stops[-1]["answer"] = json_copy(interrupts.context.get("responses") or [])


def _set_interrupt_state(agent: Agent, state: dict[str, Any]) -> None:
    SessionAgent(agent.agent_id, agent.state.get(), {}, {"interrupt_state": copy.deepcopy(state)}).initialize_internal_state(agent)


def hand_back(binding: AgentBinding) -> None:
    """Make the current invocation return the next recorded stop (``binding.full``: the whole
    restored conversation, without the held response)."""
    stop = binding.stops.pop(0)
    full = binding.full or []
    stored = [*full, binding.held] if binding.held is not None else full  # the held response is stored too
    binding.agent.messages = list(stored[: int(stop["messages"])])
    _set_interrupt_state(binding.agent, stop["interrupt_state"])
    binding.replaying = binding.arm_stop = stop


def answered(binding: AgentBinding, session_id: str) -> bool:
    """The program answered the stop handed back: hand back the next one (False), or put the
    restored conversation and interrupt state back for the turn to resume from the record (True).

    Raises:
        PromptError: The answer is not the recorded one (nothing is written).
    """
    stop, binding.replaying = binding.replaying, None
    assert stop is not None
    agent, run = binding.agent, binding.run
    answer = json_copy(agent._interrupt_state.context.get("responses") or [])
    if answer != stop["answer"]:
        raise PromptError(
            f"run {run.run_id!r} (Strands session {session_id!r}, agent {agent.agent_id!r}): the cut-off turn's interrupts "
            f"were answered {_brief(stop['answer'])} before the crash, not {_brief(answer)}; answer them as before to "
            f"finish the turn (or delete the run with `tether rm {run.run_id}`)"
        )
    if binding.stops:
        hand_back(binding)
        return False
    agent.messages, binding.full = binding.full or [], None
    if binding.held_interrupts is not None:
        # cut off inside the answered stop's tool cycle: Strands' state is that stop, answered again
        # just now, so its tools run (recorded results returned, the cut-off call in doubt)
        binding.held_interrupts = None
    else:
        _set_interrupt_state(agent, binding.crash_interrupts)
    return True


class StopReplay:
    """``AgentStreamStage`` middleware: a recorded interrupt stop instead of running the invocation
    (when :func:`hand_back` armed one); else the events of the resumed turn's recorded messages
    (``binding.echo``, :mod:`tether.strands._echo`) before the invocation's own."""

    def __init__(self, binding_of: Callable[[Any], AgentBinding | None]) -> None:
        self.binding_of = binding_of

    async def __call__(self, context: AgentStreamContext, next_fn: Any) -> AsyncGenerator[Any, None]:
        binding = self.binding_of(context.agent)
        if binding is None or binding.arm_stop is None:
            if binding is not None and binding.echo:  # a resumed turn's recorded messages: their events first
                echo, binding.echo = binding.echo, []
                async for event in turn_events(echo):
                    yield event
            async for event in next_fn(context):
                yield event
            return
        stop, binding.arm_stop = binding.arm_stop, None
        agent = binding.agent
        table = agent._interrupt_state.interrupts
        interrupts = [table.get(item["id"]) or Interrupt(**item) for item in stop["interrupts"]]
        request_state = context.invocation_state.get("request_state", {})
        metrics = agent.event_loop_metrics
        if isinstance(stop.get("metrics"), dict):  # the stop's result.metrics as they were (its calls' usage included)
            metrics = EventLoopMetrics()
            restore(metrics, stop["metrics"])
        yield EventLoopStopEvent("interrupt", copy.deepcopy(stop["message"]), metrics, request_state, interrupts)


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["StopReplay", "answered", "hand_back", "record_answer", "record_stop"]
