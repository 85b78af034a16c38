"""Swarms: agents that hand a task to each other with an injected ``handoff_to_agent`` tool.

One member works at a time. Its turn runs a fresh copy of the member agent with one more tool,
``handoff_to_agent(agent_name, message, context)``; a turn that called it hands the task (the
message, and ``context`` merged into the swarm's shared JSON context) to that member, and a
turn that did not ends the swarm with its answer. The handoff is recorded in the member run's
own agent state, so a durable swarm resumed after a crash knows where the task went without
running the turn again. Limits: ``max_handoffs``, ``max_iterations`` (member turns), and the
repetitive handoff check (``repetitive_handoff_detection_window`` recent turns must involve at
least ``repetitive_handoff_min_unique_agents`` distinct members).
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from ..agent import Agent
from ..answers import answers_from, route_answers
from ..budget import Budget, spend_of
from ..durable.adoption import adopt_child
from ..durable.store import RunStore
from ..errors import ConfigurationError, PromptError, SnapshotError, ToolError
from ..result import AgentResult
from ..tools.context import ToolContext
from ..tools.decorator import tool
from . import executions
from .base import ANSWER_AT, MultiAgentBase
from .durable_graph import GraphRecorder
from .nodes import AgentTemplate
from .results import SwarmResult
from .state import GraphRunState, decode_result
from .swarm_turns import HANDOFF_KEY, SwarmSpec, begin, check_state, fail, member_failed, new_state, record_turn, start_turn

SWARM_KEY = "tether.swarm"
_MEMBER_KEY = "tether.swarm_member"
_HANDOFF_KEY = HANDOFF_KEY


TurnInputFormat = Callable[[GraphRunState, str], Any]
"""``turn_input(run, member)``: the prompt of ``member``'s turn about to start in ``run``. Its
value must be JSON (text or content blocks): it is stored."""

StopCheck = Callable[[GraphRunState], str | None]
"""``stop_check(run)``: a reason to fail ``run`` before its next member turn starts, or None."""


@tool(name="handoff_to_agent")
def handoff_to_agent(agent_name: str, message: str, tool_context: ToolContext, context: dict[str, Any] | None = None) -> str:
    """Hand the task to another agent of the swarm; finish your turn after calling this.

    Args:
        agent_name: The agent to hand off to (one of those listed in your instructions).
        message: What the next agent should do, and what you found.
        context: Facts to add to the swarm's shared context (a JSON object).
    """
    record_handoff(tool_context, agent_name, message, context)
    return f"handed off to {agent_name}"


def handoff_targets(tool_context: ToolContext) -> list[str]:
    """The members the agent running this handoff tool call may hand off to."""
    member = tool_context.agent.state.get(_MEMBER_KEY) or {}
    return list(member.get("others") or [])


def record_handoff(tool_context: ToolContext, agent_name: str, message: str, context: dict[str, Any] | None) -> None:
    """Record a member turn's handoff where the swarm reads it (the turn's agent state).

    Raises:
        ToolError: ``agent_name`` is not another member of the swarm.
        TypeError: ``context`` is not JSON (it is stored).
    """
    others = handoff_targets(tool_context)
    if agent_name not in others:
        raise ToolError(f"unknown agent {agent_name!r}: hand off to one of {others}")
    if context is not None:
        json.dumps(context)  # JSON only: it is stored
    tool_context.agent.state.set(_HANDOFF_KEY, {"to": agent_name, "message": message, "context": context or {}})


class Swarm(MultiAgentBase[SwarmResult]):
    """Agents handing a task to each other; run it like a graph (``swarm(task)``, ``invoke_async``,
    ``stream_async``, ``resume``, ``take_snapshot`` / ``load_snapshot``: see
    :class:`~tether.multiagent.base.MultiAgentBase`)."""

    kind = "swarm"
    label = "swarm"
    state_key = SWARM_KEY
    snapshot_type = SWARM_KEY
    order_key = "node_history"
    no_state_error = SnapshotError
    spec: SwarmSpec

    def __init__(
        self,
        nodes: Sequence[Agent],
        *,
        entry_point: Agent | None = None,
        max_handoffs: int = 20,
        max_iterations: int = 20,
        repetitive_handoff_detection_window: int = 0,
        repetitive_handoff_min_unique_agents: int = 0,
        store: RunStore | None = None,
        templates: dict[str, AgentTemplate] | None = None,
        turn_input: TurnInputFormat | None = None,
        handoff_tool: Any = None,
        stop_check: StopCheck | None = None,
        budget: Budget | None = None,
    ) -> None:
        """Configure a swarm.

        Args:
            nodes: The member agents; each needs a unique ``name`` (the handoff tool names it).
            entry_point: The member that gets the task first (default: the first).
            max_handoffs: The most handoffs in one run; one more fails the run.
            max_iterations: The most member turns in one run.
            repetitive_handoff_detection_window: How many recent turns the loop check looks
                at (0: no check).
            repetitive_handoff_min_unique_agents: How many distinct members those turns must
                involve; fewer fails the run (a ping-pong between two agents).
            store: Where durable swarm runs and member turns are kept (default: the first
                member's store, else the default SQLite store).
            templates: The members' configurations by name (default: taken from the agents
                now); a facade passes its own :class:`AgentTemplate` subclass here.
            turn_input: Builds a member turn's prompt from the run's state and the member's
                name (default: :func:`~tether.multiagent.swarm_turns.turn_input`); a facade
                gives its framework's wording here. Its value is stored as the turn's input.
            handoff_tool: The handoff tool members get (default: :func:`handoff_to_agent`); a
                replacement must record the handoff as :func:`record_handoff` does.
            stop_check: Called before each member turn starts with the run's state; a string
                it returns fails the run with that reason (a facade's own limits, checked
                on the stored state only, so a resumed run decides the same).
            budget: What one durable swarm run may spend, its members' turns included: each
                turn receives what is left (see :attr:`budget`).

        Raises:
            ConfigurationError: No members, a member that is not an Agent, a missing or
                duplicate name, an entry point that is not a member, or a bad limit.
        """
        members = list(nodes)
        if not members:
            raise ConfigurationError("Swarm: nodes is empty")
        names: list[str] = []
        for index, agent in enumerate(members):
            if not isinstance(agent, Agent):
                raise ConfigurationError(f"Swarm: nodes[{index}] is a {type(agent).__name__}, not an Agent")
            if agent.name in names:
                raise ConfigurationError(f"Swarm: two members are named {agent.name!r}; give each agent a unique name=")
            names.append(agent.name)
        if entry_point is not None and entry_point not in members:
            raise ConfigurationError("Swarm: entry_point is not one of nodes")
        for label, value in (("max_handoffs", max_handoffs), ("max_iterations", max_iterations)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"Swarm: {label} must be a positive int, got {value!r}")
        window, unique = repetitive_handoff_detection_window, repetitive_handoff_min_unique_agents
        if window < 0 or unique < 0 or (window and unique > window):
            raise ConfigurationError("Swarm: repetitive_handoff_min_unique_agents must be between 0 and the detection window")
        self.names = names
        self.entry = (entry_point or members[0]).name
        self.max_handoffs = max_handoffs
        self.max_iterations = max_iterations
        self.window = window
        self.min_unique = unique
        self.store = store
        given = templates or {}
        self._templates = {a.name: given.get(a.name) or AgentTemplate(a) for a in members}
        self.turn_input = turn_input
        self.handoff_tool = handoff_tool if handoff_tool is not None else handoff_to_agent
        self.stop_check = stop_check
        self.budget = budget
        """What one durable swarm run may spend, nested runs included (None: no bound). Each member
        turn receives what is left of it (no more than the member's own budget); a turn stopped by
        it waits like one stopped on interrupts, and ``resume`` goes on once the budget is raised."""
        self._current: GraphRunState | None = None
        descriptions = {a.name: a.description or "" for a in members}
        self.spec = SwarmSpec(tuple(names), descriptions, self.entry, max_handoffs, max_iterations, window, unique)
        """What the turn logic reads of this swarm (:mod:`tether.multiagent.swarm_turns`), as JSON-able data."""

    # -- state ---------------------------------------------------------------------------------

    def _new(self, task: Any) -> GraphRunState:
        return GraphRunState(new_state(self.spec, task))

    def _restore(self, data: Any, order: Any, where: str) -> GraphRunState:
        check_state(self.spec, data, order, where)
        for name, entry in data["nodes"].items():
            if entry.get("result") is not None:
                decode_result(entry["result"], f"swarm {where}: member {name!r}")
        return GraphRunState(copy.deepcopy(data), list(order))

    def child(self, step: str, where: str | None = None) -> object:
        """A fresh agent for member ``step`` (:meth:`member_agent`)."""
        return self.member_agent(step)

    def member_agent(self, name: str, store: RunStore | None = None) -> Agent:
        """A fresh agent for one turn of member ``name``: its configuration, the handoff tool and
        the names it may hand off to (keeping runs in ``store``).

        Raises:
            ConfigurationError: The swarm has no member ``name``.
        """
        template = self._templates.get(name)
        if template is None:
            raise ConfigurationError(f"the swarm has no member {name!r} (members: {', '.join(self.names)})")
        return template.fresh(store, [self.handoff_tool], {_MEMBER_KEY: {"others": [n for n in self.names if n != name]}})

    # -- running -------------------------------------------------------------------------------

    async def _drive(
        self, run: GraphRunState, recorder: GraphRecorder | None, answers: list[dict[str, Any]] | None, forward: bool
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Run member turns until one answers without a handoff, a limit or a failure stops the
        run, or a member waits on interrupts (a member's events are yielded whatever ``forward``)."""
        data = run.data
        if answers is not None:
            self._check_answers(run, answers, durable=recorder is not None)
        elif data["status"] == "interrupted" and not (recorder is not None and _budget_stopped(run)):
            # A member waits on interrupts and nothing answers them: it still waits.
            yield {"type": "result", "result": self._result(run, None if recorder is None else recorder.run_id)}
            return
        if not begin(data):
            # Stopped by a limit with no member turn in flight to retry: the outcome stands.
            yield {"type": "result", "result": self._result(run, None if recorder is None else recorder.run_id)}
            return
        while data["status"] == "executing":
            if data["running"] is None:
                reason = None if self.stop_check is None else self.stop_check(run)
                if reason is not None:
                    fail(data, reason)
                    break
                started = start_turn(self.spec, data, run.order)
                if started is None:
                    break
                if self.turn_input is not None:
                    started["input"] = self.turn_input(run, started["member"])
                if recorder is not None:
                    await recorder.sync(run)
            running = data["running"]
            name = running["member"]
            yield {"type": "node_start", "node_id": name, "execution": running["n"]}
            agent = self.member_agent(name, None if recorder is None else recorder.store)
            result: AgentResult | None = None
            child_id = None if recorder is None else recorder.child(run, name, running["n"])
            budget = agent.budget
            if self.budget is not None and recorder is not None:
                # What the swarm run has left, plus what it already counted of this turn.
                rolled = executions.entry_of(run.data, name, running["n"]).get("usage") or {}
                budget = self.budget.left(spend_of(recorder.session.run.metrics)).widened(spend_of(rolled)).tightest(agent.budget)
            try:
                if recorder is not None and child_id is not None and adopt_child(recorder.store, recorder.run_id, child_id):
                    result = await agent.resume_async(child_id, answers, budget=budget)
                elif answers is not None and running.get("paused") is not None:
                    # A run kept in memory whose member stopped on interrupts: its agent as it
                    # stopped (kept in the swarm state), continued with the answers.
                    agent.load_snapshot(running["paused"])
                    async for event in agent.stream_async(answers):
                        if event["type"] == "result":
                            result = event["result"]
                        else:
                            yield {"type": "node_event", "node_id": name, "event": event}
                else:
                    parent = None if recorder is None else recorder.run_id
                    async for event in agent.stream_async(running["input"], run_id=child_id, parent_run_id=parent, budget=budget):
                        if event["type"] == "result":
                            result = event["result"]
                        else:
                            yield {"type": "node_event", "node_id": name, "event": event}
            except Exception as exc:
                if recorder is not None:
                    recorder.completed(run, name, running["n"])
                member_failed(data, name, exc)
                if recorder is not None:
                    await recorder.finish(run)
                raise
            assert result is not None
            answers = None
            recorded = _record_turn(self, run, recorder, name, running["n"], result, agent)
            if recorder is None and data["status"] == "interrupted":
                data["running"]["paused"] = agent.take_snapshot(preset="session").to_dict()
            yield recorded
            if recorder is not None:
                await recorder.sync(run)
        if data["status"] == "executing":
            data["status"] = "completed"
        if recorder is not None:
            await recorder.finish(run)
        yield {"type": "result", "result": self._result(run, None if recorder is None else recorder.run_id)}

    def _check_answers(self, run: GraphRunState, answers: list[dict[str, Any]], *, durable: bool) -> None:
        """Refuse answers the member waiting on interrupts cannot take (before anything changes:
        :func:`~tether.answers.route_answers`)."""
        data = run.data
        running = data["running"]
        waiting: dict[str, list[Any]] = {}
        if data["status"] == "interrupted" and running is not None:
            result = run.node_result(running["member"]).result
            if isinstance(result, AgentResult):
                waiting[running["member"]] = [interrupt.to_dict() for interrupt in result.interrupts]
        route_answers(answers_from(answers, ANSWER_AT), waiting, "member of this swarm", ANSWER_AT)
        if not durable and running is not None and running.get("paused") is None:
            raise PromptError(
                f"member {running['member']!r} stopped on interrupts in a durable swarm run: "
                "answer them with swarm.resume(run_id, responses)"
            )

    def _result(self, run: GraphRunState, run_id: str | None) -> SwarmResult:
        return swarm_result(run, run_id)


def swarm_result(run: GraphRunState, run_id: str | None) -> SwarmResult:
    """The :class:`SwarmResult` of a swarm run's state (its member results decoded)."""
    result = run.outcome(SwarmResult, run_id)
    result.context = copy.deepcopy(run.data["context"])
    return result


def _budget_stopped(run: GraphRunState) -> bool:
    """True when the run's member turn in flight stopped because its budget ran out."""
    running = run.data["running"]
    if running is None:
        return False
    result = run.node_result(running["member"]).result
    return isinstance(result, AgentResult) and result.stop_reason == "budget_exhausted"


def _record_turn(
    swarm: Swarm, run: GraphRunState, recorder: GraphRecorder | None, name: str, n: int, result: AgentResult, agent: Agent
) -> dict[str, Any]:
    """Record a finished member turn; returns the event to yield (``node_result`` or ``handoff``)."""
    run.set_result(name, result)
    if recorder is not None:
        recorder.completed(run, name, n)
    interrupted = result.stop_reason in ("interrupt", "budget_exhausted")  # a turn its budget stopped waits too
    event = record_turn(
        swarm.spec, run.data, run.order, name, n, interrupted=interrupted, handoff=None if interrupted else agent.state.get(_HANDOFF_KEY)
    )
    if event["type"] == "node_result":
        event["result"] = run.node_result(name)
    return event


__all__ = ["StopCheck", "Swarm", "SwarmResult", "TurnInputFormat", "handoff_targets", "handoff_to_agent", "record_handoff", "swarm_result"]
