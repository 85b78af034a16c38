"""Graphs of agents: ``GraphBuilder`` and ``Graph`` (Strands-compatible names), durable as one run.

A graph's nodes are agents, nested graphs or callables; its edges may carry a condition (a
function of the :class:`~tether.multiagent.state.GraphState`). The entry points run first, on
the task. Then:

* When a node's execution completes, each of its outgoing edges whose condition is true (or
  that has none) becomes *satisfied* for its target. The conditions are called once each, on
  the state with that completion recorded, before any target starts.
* A node starts when **all** its incoming edges are satisfied. Starting it consumes them: for
  the node to run again (a cycle), every incoming edge must be satisfied again by a later
  completion of its source. An edge whose condition was false stays unsatisfied, so a node
  joining two mutually exclusive branches waits forever: give it one incoming edge per branch
  by splitting it, or make it an entry of its own.
* Nodes that are ready at the same time run concurrently (asyncio tasks). A node that becomes
  ready while its previous execution is still running starts again once it finishes.
* Cycles are allowed; a graph with a cycle must set ``set_max_node_executions(n)``. When the
  limit would be exceeded the graph stops with status ``failed``.

A node's input is the task (entry points) or the task followed by the answers of the sources
whose edges started it. The graph run's whole state is JSON (:mod:`.state`): ``take_snapshot``
/ ``load_snapshot`` move it, and with a store (``build(store=...)``) ``graph(task,
run_id=...)`` is a durable run (:mod:`.durable_graph`) whose node executions are nested runs.
The scheduling decisions are pure functions over that JSON (:mod:`.schedule`), shared with the
Temporal ``GraphWorkflow``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

from ..agent import Agent
from ..answers import answers_from, as_blocks, route_answers
from ..budget import Budget, spend_of
from ..durable.store import RunStore
from ..errors import ConfigurationError
from . import executions, schedule
from .base import ANSWER_AT, MultiAgentBase, RunEvent, check_task
from .durable_graph import GraphRecorder
from .nodes import AgentNode, AgentTemplate, CallableNode, NestedGraphNode, NodeKind, NodeOutput, NodeRun
from .results import GraphResult
from .schedule import GraphSpec, SpecEdge
from .state import SNAPSHOT_TYPE, SNAPSHOT_VERSION, STATE_KEY, GraphRunState, GraphState

Condition = Callable[[GraphState], bool]
"""An edge condition: called with the graph state when the edge's source completes."""
GraphEvent = RunEvent
"""A graph stream event: ``node_start``, ``node_event`` (an event of a node's agent, with
``node_id``), ``node_result`` and finally ``result`` (the :class:`GraphResult`)."""
_Queue = asyncio.Queue[tuple[str, str, Any, BaseException | None]]
"""Node outcomes (``done``) and forwarded node events (``event``): ``(what, node_id, value, error)``."""
_check_task = check_task  # the name temporal/client.py imports from here


NodeInputFormat = Callable[[Any, list[tuple[str, NodeOutput | None]]], Any]
"""``node_input(task, [(source id, source result), ...])``: the input of a node started by the
nodes listed (in edge order). Its value must be JSON (text or content blocks): it is stored."""


@dataclass(frozen=True)
class GraphNode:
    """A node as added to a builder: its id and what executes it.

    Attributes:
        node_id: The node's id.
        executor: The Agent, Graph or callable that executes it.
    """

    node_id: str
    executor: Any


@dataclass(frozen=True)
class GraphEdge:
    """An edge ``source -> target``, taken when ``condition`` (if any) is true.

    Attributes:
        source: The source node's id.
        target: The target node's id.
        condition: A function of the :class:`GraphState`, or None (always taken).
    """

    source: str
    target: str
    condition: Condition | None = None


class GraphBuilder:
    """Builds a :class:`Graph`: ``add_node``, ``add_edge``, ``set_entry_point``,
    ``set_max_node_executions``, then ``build``."""

    def __init__(self) -> None:
        self._nodes: dict[str, GraphNode] = {}
        self._edges: list[GraphEdge] = []
        self._entry: list[str] = []
        self._max: int | None = None
        self._budget: Budget | None = None

    def add_node(self, executor: Agent | Graph | Callable[[Any], Any], node_id: str | None = None) -> GraphNode:
        """Add a node.

        Args:
            executor: An :class:`~tether.Agent` (each execution runs a fresh copy of its
                configuration as it is now), a :class:`Graph` (a nested graph) or a callable
                taking the node's input and returning a string (sync or async).
            node_id: The node's id (default: the agent's name, or the callable's ``__name__``).

        Raises:
            ConfigurationError: No usable id, a duplicate id, or an executor of another kind.
        """
        kind = node_kind(executor)
        if node_id is None:
            node_id = kind.default_id()
            if not node_id or node_id == "<lambda>":
                raise ConfigurationError(f"add_node: pass node_id for this {kind.kind} node (it has no usable name)")
        if not isinstance(node_id, str) or not node_id:
            raise ConfigurationError(f"add_node: node_id must be a non-empty string, got {node_id!r}")
        if node_id in self._nodes:
            raise ConfigurationError(f"add_node: a node {node_id!r} already exists")
        node = GraphNode(node_id, executor)
        self._nodes[node_id] = node
        return node

    def add_edge(self, from_node: str | GraphNode, to_node: str | GraphNode, condition: Condition | None = None) -> GraphEdge:
        """Add an edge ``from_node -> to_node`` (node ids or the nodes ``add_node`` returned).

        Args:
            from_node: The source node.
            to_node: The target node.
            condition: A function of the :class:`GraphState` (called when the source
                completes); the edge is taken only when it returns true. None: always.

        Raises:
            ConfigurationError: A node id that was not added, or a condition that is not callable.
        """
        source = from_node.node_id if isinstance(from_node, GraphNode) else from_node
        target = to_node.node_id if isinstance(to_node, GraphNode) else to_node
        for end, name in ((source, "from_node"), (target, "to_node")):
            if end not in self._nodes:
                raise ConfigurationError(f"add_edge {source!r} -> {target!r}: {name} {end!r} is not a node (add_node it first)")
        if condition is not None and not callable(condition):
            raise ConfigurationError(f"add_edge {source!r} -> {target!r}: condition must be callable")
        edge = GraphEdge(source, target, condition)
        self._edges.append(edge)
        return edge

    def set_entry_point(self, node_id: str) -> GraphBuilder:
        """Make ``node_id`` an entry point (may be called for several nodes).

        Without any, the nodes with no incoming edge are the entry points.
        """
        if node_id not in self._nodes:
            raise ConfigurationError(f"set_entry_point: {node_id!r} is not a node (add_node it first)")
        if node_id not in self._entry:
            self._entry.append(node_id)
        return self

    def set_max_node_executions(self, max_executions: int) -> GraphBuilder:
        """Limit the total node executions of one graph run (required for a graph with a cycle)."""
        if isinstance(max_executions, bool) or not isinstance(max_executions, int) or max_executions < 1:
            raise ConfigurationError(f"set_max_node_executions: must be a positive int, got {max_executions!r}")
        self._max = max_executions
        return self

    def set_budget(self, budget: Budget | None) -> GraphBuilder:
        """Bound what one durable graph run may spend, its nodes' runs included: each node
        execution receives what is left (see :attr:`Graph.budget`)."""
        if budget is not None and not isinstance(budget, Budget):
            raise ConfigurationError(f"set_budget: must be a tether.Budget or None, got {type(budget).__name__}")
        self._budget = budget
        return self

    def build(self, store: RunStore | None = None) -> Graph:
        """The graph.

        Args:
            store: Where durable graph runs (``graph(task, run_id=...)``) and their node runs are
                kept (default: the first agent node's store, else the default SQLite store).

        Raises:
            ConfigurationError: No nodes, no entry point, or a cycle without
                ``set_max_node_executions``.
        """
        if not self._nodes:
            raise ConfigurationError("build: the graph has no nodes")
        entry = list(self._entry)
        if not entry:
            targets = {e.target for e in self._edges}
            entry = [n for n in self._nodes if n not in targets]
            if not entry:
                raise ConfigurationError("build: no entry point: every node has an incoming edge; call set_entry_point(node_id)")
        cycle = _find_cycle(list(self._nodes), self._edges)
        if cycle is not None and self._max is None:
            raise ConfigurationError(f"build: the graph has a cycle ({' -> '.join(cycle)}) but no limit; call set_max_node_executions(n)")
        return Graph(dict(self._nodes), list(self._edges), entry, self._max, store, budget=self._budget)


def _find_cycle(nodes: list[str], edges: list[GraphEdge]) -> list[str] | None:
    """A cycle of the graph as a node path, or None."""
    out: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        out[e.source].append(e.target)
    color = dict.fromkeys(nodes, 0)
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        color[n] = 1
        path.append(n)
        for m in out[n]:
            if color[m] == 1:
                return [*path[path.index(m) :], m]
            if color[m] == 0:
                found = visit(m)
                if found:
                    return found
        path.pop()
        color[n] = 2
        return None

    for n in nodes:
        if color[n] == 0:
            found = visit(n)
            if found:
                return found
    return None


class Graph(MultiAgentBase[GraphResult]):
    """A built graph; run it with ``graph(task)``, ``invoke_async``, ``stream_async`` or ``resume``
    (see :class:`~tether.multiagent.base.MultiAgentBase`).

    One Graph object may run several graph runs at once: a run's state lives in the run, and
    agent nodes execute fresh copies of their agents. ``take_snapshot`` reads the state of the
    run started (or loaded) last.
    """

    kind = "graph"
    label = "graph"
    state_key = STATE_KEY
    snapshot_type = SNAPSHOT_TYPE
    snapshot_version = SNAPSHOT_VERSION
    order_key = "execution_order"
    spec: GraphSpec

    def __init__(
        self,
        nodes: dict[str, GraphNode],
        edges: list[GraphEdge],
        entry_points: list[str],
        max_node_executions: int | None,
        store: RunStore | None,
        *,
        templates: dict[str, AgentTemplate] | None = None,
        node_input: NodeInputFormat | None = None,
        join: str = "all",
        budget: Budget | None = None,
    ) -> None:
        """A graph; use :meth:`GraphBuilder.build`, which validates what this takes as given.

        Args:
            nodes: The nodes by id.
            edges: The edges.
            entry_points: The nodes that run first, on the task.
            max_node_executions: The limit of node executions per run (None: none).
            store: Where durable runs are kept (None: see :meth:`GraphBuilder.build`).
            templates: The agent configurations of agent nodes (default: taken from the agents
                now); a nested graph run in another store shares its graph's.
            node_input: Builds the input of a node started by other nodes from the task and
                the ``(source id, source result)`` pairs (default:
                :func:`~tether.multiagent.schedule.compose_input` of their texts); a facade
                gives its framework's wording here. Its value is stored as the node's input.
            join: ``"all"`` (a node with several incoming edges waits for one from each
                source) or ``"all_but_self"`` (the same, but its own self-loop edge starts it
                alone; see :class:`~tether.multiagent.schedule.GraphSpec`).
            budget: What one durable graph run may spend (see :attr:`budget`).
        """
        if join not in ("all", "all_but_self"):
            raise ConfigurationError(f"Graph: join must be 'all' or 'all_but_self', got {join!r}")
        self.nodes = nodes
        self.node_input = node_input
        self.edges = edges
        self.entry_points = entry_points
        self.max_node_executions = max_node_executions
        self.store = store
        self.budget = budget
        """What one durable graph run may spend, nested runs included (None: no bound). Each node
        execution receives what is left of it (no more than its agent's own budget); a node
        stopped by it waits like an interrupted node, and ``resume`` goes on after the budget
        is raised (set this attribute, or build the graph again). Executions that run at once
        share what is left: each starting one gets an even share of what the run has left less
        what the still-running ones were given."""
        self._node_ids = list(nodes)
        self._outgoing: dict[str, list[GraphEdge]] = {n: [] for n in nodes}
        for e in edges:
            self._outgoing[e.source].append(e)
        given = templates or {}
        self._kinds = {n: node_kind(node.executor, given.get(n)) for n, node in nodes.items()}
        self._templates = {n: kind.template for n, kind in self._kinds.items() if kind.template is not None}
        self.spec = GraphSpec(
            tuple(nodes),
            {n: kind.kind for n, kind in self._kinds.items()},
            tuple(SpecEdge(e.source, e.target, e.condition is not None) for e in edges),
            tuple(entry_points),
            max_node_executions,
            join,
        )
        """What the scheduler (:mod:`.schedule`) reads of this graph, as JSON-able data."""
        self._current: GraphRunState | None = None

    def _new(self, task: Any) -> GraphRunState:
        return GraphRunState.new(task, self._node_ids)

    def _restore(self, data: Any, order: Any, where: str) -> GraphRunState:
        return GraphRunState.restore(data, order, self._node_ids, f"graph {where}")

    def _result(self, run: GraphRunState, run_id: str | None) -> GraphResult:
        return graph_result(run, run_id)

    async def _drive(
        self, run: GraphRunState, recorder: GraphRecorder | None, answers: list[dict[str, Any]] | None, forward: bool
    ) -> AsyncGenerator[GraphEvent, None]:
        """Execute ``run`` to its end: restart its in-flight nodes (or its entry points), the
        interrupted ones with their ``answers``."""
        data = run.data
        routed = self._route(run, answers or [])
        begun = schedule.start(self.spec, data)
        if begun is None:
            # Stopped by a limit with nothing in flight to retry: the outcome stands.
            yield {"type": "result", "result": self._result(run, None if recorder is None else recorder.run_id)}
            return
        starts = begun
        queue: _Queue = asyncio.Queue()
        tasks: dict[str, asyncio.Task[None]] = {}
        shares: dict[str, Budget] = {}  # what each running node's budget reserves (see _spawn)
        failure: BaseException | None = None
        if recorder is not None:
            await recorder.sync(run)
        try:
            self._spawn(run, starts, recorder, queue, tasks, forward, routed, shares)
            for node_id in starts:
                yield {"type": "node_start", "node_id": node_id, "execution": data["running"][node_id]["n"]}
            while tasks:
                kind, node_id, value, error = await queue.get()
                if kind == "event":
                    yield {"type": "node_event", "node_id": node_id, "event": value}
                    continue
                tasks.pop(node_id)
                shares.pop(node_id, None)  # its spend is the graph run's now (rolled up when recorded)
                starts = []
                if error is not None:
                    if recorder is not None:
                        recorder.completed(run, node_id, int(data["running"][node_id]["n"]))
                    schedule.node_failed(data, node_id, error)
                    failure = failure or error
                else:
                    self._complete(run, node_id, value, recorder, starts)
                if recorder is not None:
                    await recorder.sync(run)
                if error is None:
                    yield {"type": "node_result", "node_id": node_id, "result": run.node_result(node_id)}
                self._spawn(run, starts, recorder, queue, tasks, forward, {}, shares)
                for started in starts:
                    yield {"type": "node_start", "node_id": started, "execution": data["running"][started]["n"]}
        finally:
            for task in tasks.values():
                task.cancel()
            for task in tasks.values():
                with contextlib.suppress(BaseException):
                    await task
        schedule.finish(data)
        if recorder is not None:
            await recorder.finish(run)
        if failure is not None:
            raise failure
        yield {"type": "result", "result": self._result(run, None if recorder is None else recorder.run_id)}

    def _route(self, run: GraphRunState, answers: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """The interrupt responses of each interrupted node, every node's share checked before
        any node resumes (:func:`~tether.answers.route_answers`; InterruptError otherwise)."""
        waiting = {
            node_id: [i.to_dict() for i in self._kinds[node_id].interrupts(run.node_result(node_id).result)]
            for node_id, entry in run.data["nodes"].items()
            if entry["status"] == "interrupted"
        }
        routed = route_answers(answers_from(answers, ANSWER_AT), waiting, "node of this graph", ANSWER_AT)
        return {node_id: as_blocks(share) for node_id, share in routed.items()}

    def _complete(self, run: GraphRunState, node_id: str, value: NodeOutput, recorder: GraphRecorder | None, starts: list[str]) -> None:
        """Record a completed execution and start what it makes ready (:mod:`.schedule`); the
        edge conditions see the state with this execution recorded."""
        run.set_result(node_id, value)
        interrupted = self._kinds[node_id].interrupted(value)
        n = schedule.record(run.data, run.order, node_id, interrupted=interrupted)
        if recorder is not None:
            recorder.completed(run, node_id, n)
        if interrupted:
            return
        view = GraphState(run)
        outcomes = [edge.condition is None or bool(edge.condition(view)) for edge in self._outgoing[node_id]]
        schedule.follow(self.spec, run.data, node_id, outcomes, lambda target: self._input(run, target), starts)

    def _input(self, run: GraphRunState, node_id: str) -> Any:
        """The input of ``node_id``: the task, then the answers of the sources that started it."""
        sources = schedule.input_sources(self.spec, run.data, node_id)
        if self.node_input is not None:
            return self.node_input(run.data["task"], [(source, run.node_result(source).result) for source in sources])
        return schedule.compose_input(run.data["task"], [(source, run.node_result(source).text) for source in sources])

    def _spawn(
        self,
        run: GraphRunState,
        starts: list[str],
        recorder: GraphRecorder | None,
        queue: _Queue,
        tasks: dict[str, asyncio.Task[None]],
        forward: bool,
        routed: dict[str, list[dict[str, Any]]],
        shares: dict[str, Budget],
    ) -> None:
        share = self._share(starts, recorder, shares)
        for node_id in starts:
            running = run.data["running"][node_id]
            previous = run.node_result(node_id).result if run.data["nodes"][node_id]["status"] == "interrupted" else None
            nested = recorder is not None and self.spec.kinds[node_id] != "callable"
            child = recorder.child(run, node_id, running["n"]) if nested and recorder is not None else None
            budget = None
            if share is not None:
                # Its share of what the graph run has left, plus what it already counted of this execution.
                rolled = executions.entry_of(run.data, node_id, running["n"]).get("usage") or {}
                budget = share.widened(spend_of(rolled))
                if nested:
                    shares[node_id] = share
            node = NodeRun(
                node_id,
                running["n"],
                running["input"],
                routed.get(node_id),
                run.data.setdefault("paused", {}),
                previous,
                child,
                store=None if recorder is None else recorder.store,
                parent_run_id=None if recorder is None else recorder.run_id,
                emit=_forward(queue, node_id) if forward else None,
                budget=budget,
            )
            tasks[node_id] = asyncio.create_task(_execute(self._kinds[node_id], node, queue))

    def _share(self, starts: list[str], recorder: GraphRecorder | None, shares: dict[str, Budget]) -> Budget | None:
        """What each node execution starting now may spend (None: no graph budget, or the run is
        not durable): what the graph run has left, less what the nodes still running were given
        (their spend rolls up only when they finish), split evenly among the starting executions
        that run agents or graphs. So executions running at once never receive more, in total,
        than what is left."""
        if self.budget is None or recorder is None:
            return None
        free = self.budget.left(spend_of(recorder.session.run.metrics))
        for held in shares.values():
            free = free.less(held)
        ways = sum(1 for node_id in starts if self.spec.kinds[node_id] != "callable")
        return free.split(max(1, ways))

    def node_executor(self, node_id: str, store: RunStore | None = None) -> Agent | Graph | Callable[[Any], Any]:
        """What one execution of node ``node_id`` runs: a fresh agent (the node agent's
        configuration as added, keeping runs in ``store``), the nested graph, or the callable.

        Raises:
            ConfigurationError: The graph has no node ``node_id``.
        """
        kind = self._kinds.get(node_id)
        if kind is None:
            raise ConfigurationError(f"the graph has no node {node_id!r} (nodes: {', '.join(self._node_ids)})")
        return kind.executor(store)  # type: ignore[no-any-return]

    def child(self, step: str, where: str | None = None) -> object:
        """What node ``step`` runs (:meth:`node_executor`): an agent, a graph or a callable."""
        return self.node_executor(step)

    def _with_store(self, store: RunStore) -> Graph:
        """This graph (the same nodes, agent configurations as added) keeping runs in ``store``."""
        return Graph(
            self.nodes,
            self.edges,
            self.entry_points,
            self.max_node_executions,
            store,
            templates=self._templates,
            node_input=self.node_input,
            join=self.spec.join,
            budget=self.budget,
        )


def node_kind(executor: Any, template: AgentTemplate | None = None) -> NodeKind:
    """The kind of a node that ``executor`` executes (the one place a node's executor type is
    looked at); ``template``: an agent node's configuration, if taken already.

    Raises:
        ConfigurationError: Not an Agent, a Graph or a callable.
    """
    if isinstance(executor, Agent):
        return AgentNode(template or AgentTemplate(executor))
    if isinstance(executor, Graph):
        return NestedGraphNode(executor)
    if callable(executor):
        return CallableNode(executor)
    raise ConfigurationError(f"a graph node must be an Agent, a Graph or a callable, got {type(executor).__name__}")


def _forward(queue: _Queue, node_id: str) -> Callable[[Any], None]:
    """Put the events of ``node_id``'s agent on ``queue``."""
    return lambda event: queue.put_nowait(("event", node_id, event, None))


async def _execute(kind: NodeKind, node: NodeRun, queue: _Queue) -> None:
    """Run one node execution; report its outcome on ``queue``."""
    try:
        result = await kind.execute(node)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        queue.put_nowait(("done", node.node_id, None, exc))
    else:
        queue.put_nowait(("done", node.node_id, result, None))


def graph_result(run: GraphRunState, run_id: str | None) -> GraphResult:
    """The :class:`GraphResult` of graph run state ``run`` (also how a Temporal graph run's
    result is read back from its state)."""
    return run.outcome(GraphResult, run_id)


__all__ = ["Condition", "Graph", "GraphBuilder", "GraphEdge", "GraphEvent", "GraphNode", "GraphResult", "node_kind"]
