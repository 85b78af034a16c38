"""Strands' ``strands.multiagent.swarm`` on Tether: a :class:`Swarm` runs as a Tether swarm
(:class:`tether.multiagent.Swarm`: its turns, its handoff tool, its JSON state) and answers in
Strands' shapes: :class:`SwarmResult` (``node_history`` of :class:`SwarmNode`), Strands' stream
events, and ``serialize_state`` / ``deserialize_state`` / ``take_snapshot`` / ``load_snapshot``
in Strands' ``multiAgent`` envelope.

Where Tether's swarm decides, its rules hold (see :mod:`tether.multiagent.swarm`): the member
prompt is Tether's, the shared context is one JSON object (Strands keys it by member), and the
execution and node timeouts are accepted and not enforced. A member that raises ends the run
as ``FAILED`` with a result, as in Strands.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

from ...agent import Agent
from ...multiagent import Swarm as TetherSwarm
from ...multiagent.state import GraphRunState
from ._payload import swarm_payload, swarm_run
from ._results import node_results, totals
from ._running import Driver, unsupported
from ._strands_text import MemberTemplate, handoff_to_agent, swarm_turn_input
from .base import MultiAgentBase, MultiAgentResult, Status

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
        self.id = id
        self.entry_point = entry_point
        self.max_handoffs = max_handoffs
        self.max_iterations = max_iterations
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.repetitive_handoff_detection_window = repetitive_handoff_detection_window
        self.repetitive_handoff_min_unique_agents = repetitive_handoff_min_unique_agents
        self.trace_attributes = trace_attributes
        self._templates = {agent.name: MemberTemplate(agent) for agent in nodes}
        self._swarm = TetherSwarm(
            nodes,
            templates=dict(self._templates),
            turn_input=swarm_turn_input([a.name for a in nodes], {a.name: a.description or "" for a in nodes}),
            handoff_tool=handoff_to_agent,
            entry_point=entry_point,
            max_handoffs=max_handoffs,
            max_iterations=max_iterations,
            repetitive_handoff_detection_window=repetitive_handoff_detection_window,
            repetitive_handoff_min_unique_agents=repetitive_handoff_min_unique_agents,
        )
        self.nodes: dict[str, SwarmNode] = {agent.name: SwarmNode(agent.name, agent) for agent in nodes}
        self._driver = Driver(self._swarm, self._result, lambda _: "agent", catch_failures=True)

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
