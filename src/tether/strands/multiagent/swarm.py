"""Strands' ``strands.multiagent.swarm`` on Tether: a :class:`Swarm` runs as a Tether swarm
(:class:`tether.multiagent.Swarm`: its turns, its handoff tool, its JSON state) and answers in
Strands' shapes: :class:`SwarmResult` (``node_history`` of :class:`SwarmNode`), Strands' stream
events, and ``serialize_state`` / ``deserialize_state`` / ``take_snapshot`` / ``load_snapshot``
in Strands' ``multiAgent`` envelope.

Members are told what Strands tells them (the ``Context:`` prompt, the handoff tool's texts:
see :mod:`._strands_text`), the member checks and their messages are Strands', and so are the
limits (``max_handoffs`` and ``max_iterations`` count member turns; the repetitive handoff check
looks at the member history), checked on the run's stored state before each turn. Each member
agent gets the ``handoff_to_agent`` tool and holds its latest turn's conversation after a run.
Tether's swarm runs the turns (its JSON state, one merged shared context, shown per member as
Strands keys it); the execution and node timeouts are accepted and not enforced. A member that
raises ends the run as ``FAILED`` with a result, as in Strands.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

from ...agent import Agent
from ...errors import ConfigurationError
from ...multiagent import Swarm as TetherSwarm
from ...multiagent.state import GraphRunState
from ._payload import swarm_payload, swarm_run
from ._results import node_results, totals
from ._running import Driver, unsupported
from ._strands_text import MemberTemplate, handoff_to_agent, shared_context, swarm_turn_input
from .base import MultiAgentBase, MultiAgentResult, Status, zero_usage

_DEFAULT_SWARM_ID = "default_swarm"


@dataclass(eq=False)
class SwarmNode:
    """A member of a swarm: its name (``node_id``) and its agent; ``str(node)`` is the name."""

    node_id: str
    executor: Agent

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SwarmNode) and self.node_id == other.node_id

    def __str__(self) -> str:
        return self.node_id

    def __repr__(self) -> str:
        return f"SwarmNode(node_id='{self.node_id}')"


@dataclass
class SwarmResult(MultiAgentResult):
    """A swarm run's result (Strands' fields): ``node_history`` is the members in turn order."""

    node_history: list[SwarmNode] = field(default_factory=list)


@dataclass
class SwarmState:
    """What ``swarm.state`` shows of the latest run (Strands' fields that Tether has)."""

    current_node: SwarmNode | None = None
    task: Any = ""
    completion_status: Status = Status.PENDING
    shared_context: dict[str, dict[str, Any]] = field(default_factory=dict)
    node_history: list[SwarmNode] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, Any] = field(default_factory=lambda: {"latencyMs": 0})
    handoff_message: str | None = None


def _check_members(nodes: list[Agent], entry_point: Agent | None) -> None:
    """Strands' checks of a swarm's members (and its naming of unnamed ones: ``node_<i>``).

    Raises:
        ConfigurationError: (a ``ValueError``, with Strands' message) The same agent twice, two
            members with one name, an entry point that is not a member, or a member with its own
            ``handoff_to_agent`` tool.
    """
    seen: set[int] = set()
    for agent in nodes:
        if id(agent) in seen:
            raise ConfigurationError("Duplicate node instance detected. Each node must have a unique object instance.")
        seen.add(id(agent))
    names: dict[str, Agent] = {}
    for index, agent in enumerate(nodes):
        if not agent.name:
            agent.name = f"node_{index}"
        if agent.name in names:
            raise ConfigurationError(f"Node ID '{agent.name}' is not unique. Each agent must have a unique name.")
        names[agent.name] = agent
    if entry_point is not None and names.get(str(entry_point.name)) is not entry_point:
        available = [f"{name} ({type(agent).__name__})" for name, agent in names.items()]
        raise ConfigurationError(f"Entry point agent not found in swarm nodes. Available agents: {available}")
    for name, agent in names.items():
        own = agent.tool_registry.get("handoff_to_agent")
        if own is not None and own is not handoff_to_agent:
            raise ConfigurationError(
                f"Agent '{name}' already has tools with names that conflict with swarm coordination tools: handoff_to_agent. "
                "Please rename these tools to avoid conflicts."
            )


class Swarm(MultiAgentBase):
    """Agents handing a task to each other, run by Tether's swarm (Strands' signature)."""

    def __init__(
        self,
        nodes: list[Agent],
        *,
        entry_point: Agent | None = None,
        max_handoffs: int = 20,
        max_iterations: int = 20,
        execution_timeout: float = 900.0,
        node_timeout: float = 300.0,
        repetitive_handoff_detection_window: int = 0,
        repetitive_handoff_min_unique_agents: int = 0,
        session_manager: Any = None,
        hooks: list[Any] | None = None,
        id: str = _DEFAULT_SWARM_ID,
        trace_attributes: Any = None,
        plugins: list[Any] | None = None,
    ) -> None:
        unsupported("Swarm", session_manager=session_manager, hooks=hooks, plugins=plugins)
        nodes = list(nodes)
        _check_members(nodes, entry_point)
        self.id = id
        self.entry_point = entry_point
        self.max_handoffs = max_handoffs
        self.max_iterations = max_iterations
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.repetitive_handoff_detection_window = repetitive_handoff_detection_window
        self.repetitive_handoff_min_unique_agents = repetitive_handoff_min_unique_agents
        self.trace_attributes = trace_attributes
        self.nodes: dict[str, SwarmNode] = {agent.name: SwarmNode(agent.name, agent) for agent in nodes}
        for agent in nodes:  # Strands adds its coordination tool to each member agent
            if "handoff_to_agent" not in agent.tool_registry.names:
                agent.tool_registry.add(handoff_to_agent)
        self._templates = {agent.name: MemberTemplate(agent) for agent in nodes}
        entry = (entry_point or nodes[0]).name if nodes else ""
        self._swarm = TetherSwarm(
            nodes,
            templates=dict(self._templates),
            turn_input=swarm_turn_input([a.name for a in nodes], {a.name: a.description or "" for a in nodes}, entry),
            handoff_tool=handoff_to_agent,
            stop_check=self._stop_check,
            entry_point=entry_point,
            # Strands' limits are checked by _stop_check, before Tether's (which count handoffs and
            # so never trigger first); Tether's repetitive-handoff check counts the target too: off.
            max_handoffs=max(1, max_handoffs),
            max_iterations=max(1, max_iterations),
        )
        self._driver = Driver(self._swarm, self._result, lambda _: "agent", catch_failures=True)

    def _stop_check(self, run: GraphRunState) -> str | None:
        """Strands' ``SwarmState.should_continue`` limits, on the member history of ``run``."""
        history = run.order
        if len(history) >= self.max_handoffs:
            return f"Max handoffs reached: {self.max_handoffs}"
        if len(history) >= self.max_iterations:
            return f"Max iterations reached: {self.max_iterations}"
        window = self.repetitive_handoff_detection_window
        if window > 0 and len(history) >= window:
            unique = len(set(history[-window:]))
            if unique < self.repetitive_handoff_min_unique_agents:
                return f"Repetitive handoff: {unique} unique nodes out of {window} recent iterations"
        return None

    @property
    def state(self) -> SwarmState:
        """The state of the run started or loaded last (Strands' ``swarm.state``)."""
        run = self._driver.current()
        if run is None:
            return SwarmState()
        result = self._result(run)
        data = run.data
        return SwarmState(
            current_node=self.nodes.get(data["current"]),
            task=data["task"],
            completion_status=result.status,
            shared_context=shared_context(run, self._swarm.entry),
            node_history=result.node_history,
            results=result.results,
            accumulated_usage=result.accumulated_usage,
            accumulated_metrics=result.accumulated_metrics,
            handoff_message=data.get("message"),
        )

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> SwarmResult:
        """Run on ``task`` (or continue the state loaded with ``deserialize_state`` / ``load_snapshot``)."""
        try:
            return cast(SwarmResult, await self._driver.invoke(task))
        finally:
            self._sync_back()

    async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run, yielding Strands' multi-agent events (node start/stream/stop, handoffs, result)."""
        try:
            async for event in self._driver.stream(task):
                yield event
        finally:
            self._sync_back()

    def _sync_back(self) -> None:
        """Leave each member's agent holding its latest turn's conversation, as in Strands."""
        for template in self._templates.values():
            template.sync_back()

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> SwarmResult:
        return cast(SwarmResult, super().__call__(task, invocation_state, **kwargs))

    def _result(self, run: GraphRunState) -> SwarmResult:
        data = run.data
        results = node_results({n: run.node_result(n) for n in data["nodes"]}, data.get("error"))
        usage, metrics = totals(results)
        return SwarmResult(
            status=Status(data["status"]),
            results=results,
            accumulated_usage=usage,
            accumulated_metrics=metrics,
            execution_count=len(run.order),
            interrupts=[i for r in results.values() if r.status == Status.INTERRUPTED for i in r.interrupts],
            node_history=[self.nodes[n] for n in run.order],
        )

    def serialize_state(self) -> dict[str, Any]:
        """The swarm's state in Strands' ``Swarm.serialize_state`` shape (plus Tether's own, under
        ``tether_state``, which Strands ignores)."""
        return swarm_payload(self._driver.current(), self.id, self._swarm.entry)

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore a Strands (or Tether) swarm state: one with ``next_nodes_to_execute`` continues
        at the next call (its task is the stored one), one without resets the swarm (as Strands).

        Raises:
            SnapshotError: The payload is malformed or names members this swarm lacks; nothing changed.
        """
        self._driver.restore(swarm_run(payload, self._swarm))


__all__ = ["Swarm", "SwarmNode", "SwarmResult"]
