"""Strands' ``strands.multiagent.graph`` on Tether: ``GraphBuilder`` builds a :class:`Graph`
that runs as a Tether graph (:class:`tether.multiagent.Graph`: its scheduler, its JSON state,
its snapshots) and answers in Strands' shapes: :class:`GraphResult`, :class:`GraphState` for
edge conditions, Strands' stream events, and ``serialize_state`` / ``deserialize_state`` /
``take_snapshot`` / ``load_snapshot`` in Strands' ``multiAgent`` envelope.

Nodes are told what Strands tells them (``Original Task:`` and ``Inputs from previous nodes:``
content blocks, see :mod:`._strands_text`); a cycle needs no limit (``build`` warns, as
Strands); a self-loop re-runs its node by itself; without ``reset_on_revisit`` a node's agent
continues its conversation across executions of an in-memory run, and every node's agent holds
its latest conversation after a run. Where Tether's scheduler decides, its rules hold (see
:mod:`tether.multiagent.graph`): a node with several incoming edges waits for all of them
(Strands runs in supersteps and starts it when any edge from the batch that just finished is
taken); a durable execution starts from the agent as it was added. The execution and node
timeouts are accepted and not enforced.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from ...agent import Agent
from ...errors import ConfigurationError
from ...multiagent import Graph as TetherGraph
from ...multiagent import GraphEdge as TetherEdge
from ...multiagent import GraphNode as TetherNode
from ...multiagent.state import GraphRunState
from ...multiagent.state import GraphState as TetherGraphState
from ._payload import graph_payload, graph_run
from ._results import node_results, totals
from ._running import Driver, unsupported
from ._strands_text import MemberTemplate, graph_node_input
from .base import MultiAgentBase, MultiAgentResult, NodeResult, Status, zero_usage

_DEFAULT_GRAPH_ID = "default_graph"


@dataclass(eq=False)
class GraphNode:
    """A node of a graph: its id and what executes it (an Agent or a Graph).

    Attributes:
        node_id: The node's id.
        executor: The agent or nested graph.
        dependencies: The nodes with an edge into this one.
        execution_status: The node's status in the latest run read from the graph.
    """

    node_id: str
    executor: Any
    dependencies: set[GraphNode] = field(default_factory=set)
    execution_status: Status = Status.PENDING
    result: NodeResult | None = None
    execution_time: int = 0

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphNode) and self.node_id == other.node_id


EdgeCondition = Callable[..., bool]
"""``condition(state)`` or ``condition(state, *, invocation_state)``: whether the edge is taken."""


@dataclass
class GraphEdge:
    """An edge ``from_node -> to_node``, taken when ``condition`` (if any) is true."""

    from_node: GraphNode
    to_node: GraphNode
    condition: EdgeCondition | None = None

    def __hash__(self) -> int:
        return hash((self.from_node.node_id, self.to_node.node_id))


@dataclass
class GraphState:
    """What an edge condition sees (Strands' fields; nodes are :class:`GraphNode` objects)."""

    task: Any = ""
    status: Status = Status.PENDING
    completed_nodes: set[GraphNode] = field(default_factory=set)
    failed_nodes: set[GraphNode] = field(default_factory=set)
    interrupted_nodes: set[GraphNode] = field(default_factory=set)
    execution_order: list[GraphNode] = field(default_factory=list)
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, Any] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    execution_time: int = 0
    total_nodes: int = 0
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    entry_points: list[GraphNode] = field(default_factory=list)


@dataclass
class GraphResult(MultiAgentResult):
    """A graph run's result (Strands' fields)."""

    total_nodes: int = 0
    completed_nodes: int = 0
    failed_nodes: int = 0
    interrupted_nodes: int = 0
    execution_order: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    entry_points: list[GraphNode] = field(default_factory=list)


class GraphBuilder:
    """Builds a :class:`Graph` (Strands' builder: ``add_node``, ``add_edge``, ``set_entry_point``,
    the limits, ``set_graph_id``, ``build``)."""

    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}
        self.edges: set[GraphEdge] = set()
        self.entry_points: set[GraphNode] = set()
        self._edge_order: list[GraphEdge] = []
        self._entry_order: list[GraphNode] = []
        self._max_node_executions: int | None = None
        self._execution_timeout: float | None = None
        self._node_timeout: float | None = None
        self._reset_on_revisit = False
        self._id = _DEFAULT_GRAPH_ID
        self._session_manager: Any = None
        self._hooks: list[Any] | None = None

    def add_node(self, executor: Any, node_id: str | None = None) -> GraphNode:
        """Add an Agent or a Graph (or Swarm) as a node; ``node_id`` defaults to its ``id`` or ``name``.

        Raises:
            ConfigurationError: (a ``ValueError``, as in Strands) The same object twice, or a duplicate id.
        """
        if any(node.executor is executor for node in self.nodes.values()):
            raise ConfigurationError("Duplicate node instance detected. Each node must have a unique object instance.")
        if node_id is None:
            node_id = getattr(executor, "id", None) or getattr(executor, "name", None) or f"node_{len(self.nodes)}"
        if node_id in self.nodes:
            raise ConfigurationError(f"Node '{node_id}' already exists")
        node = GraphNode(node_id=str(node_id), executor=executor)
        self.nodes[node.node_id] = node
        return node

    def add_edge(self, from_node: str | GraphNode, to_node: str | GraphNode, condition: EdgeCondition | None = None) -> GraphEdge:
        """Add an edge, taken when ``condition(state)`` (or ``condition(state, invocation_state=...)``) is true."""

        def resolve(node: str | GraphNode, role: str) -> GraphNode:
            if isinstance(node, str):
                if node not in self.nodes:
                    raise ConfigurationError(f"{role} node '{node}' not found")
                return self.nodes[node]
            if node not in self.nodes.values():
                raise ConfigurationError(f"{role} node object has not been added to the graph, use graph.add_node")
            return node

        source, target = resolve(from_node, "Source"), resolve(to_node, "Target")
        edge = GraphEdge(source, target, condition)
        if edge not in self.edges:
            self._edge_order.append(edge)
        self.edges.add(edge)
        target.dependencies.add(source)
        return edge

    def set_entry_point(self, node_id: str) -> GraphBuilder:
        """Make ``node_id`` an entry point."""
        if node_id not in self.nodes:
            raise ConfigurationError(f"Node '{node_id}' not found")
        node = self.nodes[node_id]
        if node not in self.entry_points:
            self._entry_order.append(node)
        self.entry_points.add(node)
        return self

    def reset_on_revisit(self, enabled: bool = True) -> GraphBuilder:
        """Accepted for Strands' API; on Tether every node execution starts from the node agent
        as it was added, so a revisit always starts fresh."""
        self._reset_on_revisit = enabled
        return self

    def set_max_node_executions(self, max_executions: int) -> GraphBuilder:
        """Limit the node executions of one run."""
        self._max_node_executions = max_executions
        return self

    def set_execution_timeout(self, timeout: float) -> GraphBuilder:
        """Accepted for Strands' API; not enforced on Tether (see the module docstring)."""
        self._execution_timeout = timeout
        return self

    def set_node_timeout(self, timeout: float) -> GraphBuilder:
        """Accepted for Strands' API; not enforced on Tether (see the module docstring)."""
        self._node_timeout = timeout
        return self

    def set_graph_id(self, graph_id: str) -> GraphBuilder:
        """Set the graph's id (snapshots name it)."""
        self._id = graph_id
        return self

    def set_session_manager(self, session_manager: Any) -> GraphBuilder:
        """Not supported on Tether yet (see :func:`._running.unsupported`)."""
        self._session_manager = session_manager
        return self

    def set_hook_providers(self, hooks: list[Any]) -> GraphBuilder:
        """Not supported on Tether yet (see :func:`._running.unsupported`)."""
        self._hooks = hooks
        return self

    def build(self) -> Graph:
        """The graph (entry points default to the nodes without dependencies).

        Raises:
            ConfigurationError: No nodes or no entry point.
        """
        if not self.nodes:
            raise ConfigurationError("Graph must contain at least one node")
        entry = list(self._entry_order) or [n for n in self.nodes.values() if not n.dependencies]
        if not entry:
            raise ConfigurationError("No entry points found - all nodes have dependencies")
        if self._max_node_executions is None and self._execution_timeout is None:
            warnings.warn("graph has no max_node_executions or execution_timeout set; execution is unbounded", stacklevel=2)
        return Graph(
            nodes=dict(self.nodes),
            edges=set(self._edge_order),
            entry_points=set(entry),
            max_node_executions=self._max_node_executions,
            execution_timeout=self._execution_timeout,
            node_timeout=self._node_timeout,
            reset_on_revisit=self._reset_on_revisit,
            session_manager=self._session_manager,
            hooks=self._hooks,
            id=self._id,
            _edge_order=list(self._edge_order),
            _entry_order=entry,
        )


class Graph(MultiAgentBase):
    """A graph of agents, run by Tether's graph scheduler (see :mod:`tether.multiagent.graph`)."""

    def __init__(
        self,
        nodes: dict[str, GraphNode],
        edges: set[GraphEdge],
        entry_points: set[GraphNode],
        max_node_executions: int | None = None,
        execution_timeout: float | None = None,
        node_timeout: float | None = None,
        reset_on_revisit: bool = False,
        session_manager: Any = None,
        hooks: list[Any] | None = None,
        id: str = _DEFAULT_GRAPH_ID,
        trace_attributes: Any = None,
        plugins: list[Any] | None = None,
        *,
        _edge_order: list[GraphEdge] | None = None,
        _entry_order: list[GraphNode] | None = None,
    ) -> None:
        unsupported("Graph", session_manager=session_manager, hooks=hooks, plugins=plugins)
        self.nodes = nodes
        self.edges = edges
        self.entry_points = entry_points
        self.max_node_executions = max_node_executions
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.reset_on_revisit = reset_on_revisit
        self.id = id
        self.trace_attributes = trace_attributes
        self._invocation_state: dict[str, Any] = {}
        ordered = _edge_order if _edge_order is not None else sorted(edges, key=lambda e: (e.from_node.node_id, e.to_node.node_id))
        entry = _entry_order if _entry_order is not None else sorted(entry_points, key=lambda n: n.node_id)
        tether_nodes = {n: TetherNode(n, _executor(node.executor, n)) for n, node in nodes.items()}
        tether_edges = [TetherEdge(e.from_node.node_id, e.to_node.node_id, self._condition(e.condition)) for e in ordered]
        # As in Strands, a cycle needs no limit (build() warned that execution is unbounded), a
        # self-loop re-runs its node by itself, and without reset_on_revisit a node's agent
        # continues its conversation (see MemberTemplate). Tether's join stays: a node with
        # several sources waits for all of them (Strands runs in supersteps, Tether does not).
        self._templates = {
            n: MemberTemplate(node.executor, carry=not reset_on_revisit) for n, node in nodes.items() if isinstance(node.executor, Agent)
        }
        self._graph = TetherGraph(
            tether_nodes,
            tether_edges,
            [n.node_id for n in entry],
            max_node_executions,
            None,
            templates=dict(self._templates),
            node_input=graph_node_input,
            join="all_but_self",
        )
        self._driver = Driver(self._graph, self._result, lambda n: "agent" if self._graph.spec.kinds[n] == "agent" else "multiagent")

    # -- edge conditions -------------------------------------------------------------------------

    def _condition(self, condition: EdgeCondition | None) -> Callable[[TetherGraphState], bool] | None:
        """A Strands condition as a Tether one: it sees this graph's :class:`GraphState`."""
        if condition is None:
            return None
        try:
            with_context = "invocation_state" in inspect.signature(condition).parameters
        except (TypeError, ValueError):
            with_context = False

        def evaluate(view: TetherGraphState) -> bool:
            run = self._driver.current()  # the run whose node just completed (``view`` reads it)
            assert run is not None
            state = self._state(run)
            if with_context:
                return bool(condition(state, invocation_state=self._invocation_state))
            return bool(condition(state))

        return evaluate

    # -- running ---------------------------------------------------------------------------------

    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> GraphResult:
        """Run on ``task`` (or continue the state loaded with ``deserialize_state`` / ``load_snapshot``)."""
        self._invocation_state = invocation_state or {}
        try:
            return cast(GraphResult, await self._driver.invoke(task))
        finally:
            self._sync_back()

    async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run, yielding Strands' multi-agent events (``multiagent_node_start``,
        ``multiagent_node_stream``, ``multiagent_node_stop``, ``multiagent_result``)."""
        self._invocation_state = invocation_state or {}
        try:
            async for event in self._driver.stream(task):
                yield event
        finally:
            self._sync_back()

    def _sync_back(self) -> None:
        """Leave each node's agent holding its latest execution's conversation, as in Strands."""
        for template in self._templates.values():
            template.sync_back()

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> GraphResult:
        return cast(GraphResult, super().__call__(task, invocation_state, **kwargs))

    # -- state -----------------------------------------------------------------------------------

    @property
    def state(self) -> GraphState:
        """The state of the run started or loaded last (Strands' ``graph.state``)."""
        run = self._driver.current()
        return GraphState(total_nodes=len(self.nodes)) if run is None else self._state(run)

    def _state(self, run: GraphRunState) -> GraphState:
        data = run.data
        results = node_results({n: run.node_result(n) for n in data["nodes"]}, data.get("error"))
        usage, metrics = totals(results)
        statuses = {n: e["status"] for n, e in data["nodes"].items()}
        for node_id, node in self.nodes.items():
            node.execution_status = Status(statuses[node_id])
            node.result = results.get(node_id)
        return GraphState(
            task=data["task"],
            status=Status(data["status"]),
            completed_nodes={self.nodes[n] for n, s in statuses.items() if s == "completed"},
            failed_nodes={self.nodes[n] for n, s in statuses.items() if s == "failed"},
            interrupted_nodes={self.nodes[n] for n, s in statuses.items() if s == "interrupted"},
            execution_order=[self.nodes[n] for n in run.order],
            results=results,
            accumulated_usage=usage,
            accumulated_metrics=metrics,
            execution_count=len(run.order),
            total_nodes=len(self.nodes),
            edges=[(e.from_node, e.to_node) for e in self.edges],
            entry_points=list(self.entry_points),
        )

    def _result(self, run: GraphRunState) -> GraphResult:
        state = self._state(run)
        interrupts = [i for r in state.results.values() for i in r.interrupts]
        return GraphResult(
            status=state.status,
            results=state.results,
            accumulated_usage=state.accumulated_usage,
            accumulated_metrics=state.accumulated_metrics,
            execution_count=state.execution_count,
            interrupts=interrupts,
            total_nodes=state.total_nodes,
            completed_nodes=len(state.completed_nodes),
            failed_nodes=len(state.failed_nodes),
            interrupted_nodes=len(state.interrupted_nodes),
            execution_order=state.execution_order,
            edges=state.edges,
            entry_points=state.entry_points,
        )

    def serialize_state(self) -> dict[str, Any]:
        """The graph's state in Strands' ``Graph.serialize_state`` shape (plus Tether's own, under
        ``tether_state``, which Strands ignores)."""
        return graph_payload(self._driver.current(), self.id)

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore a Strands (or Tether) graph state: one with ``next_nodes_to_execute`` continues
        at the next call (its task is the stored one), one without resets the graph (as Strands).

        Raises:
            SnapshotError: The payload is malformed or names nodes this graph lacks; nothing changed.
        """
        self._driver.restore(graph_run(payload, self._graph))


def _executor(executor: Any, node_id: str) -> Any:
    """What a Tether graph node runs for a Strands node executor (an Agent, or a facade
    graph/swarm as its Tether graph)."""
    if isinstance(executor, Agent):
        return executor
    inner = getattr(executor, "_graph", None)
    if isinstance(inner, TetherGraph):
        return inner
    if isinstance(executor, MultiAgentBase):
        raise ConfigurationError(
            f"node {node_id!r}: a {type(executor).__name__} cannot be a graph node on Tether (a Graph or an Agent can)"
        )
    raise ConfigurationError(f"node {node_id!r}: a graph node must be an Agent or a Graph, got {type(executor).__name__}")


__all__ = ["EdgeCondition", "Graph", "GraphBuilder", "GraphEdge", "GraphNode", "GraphResult", "GraphState"]
