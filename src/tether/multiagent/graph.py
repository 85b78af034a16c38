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
import copy
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from .._sync import run_sync as _sync
from ..agent import Agent
from ..durable.ids import adopt_child
from ..durable.store import RunStore
from ..errors import ConfigurationError, PromptError, SnapshotError, StateError
from ..interrupts import Interrupt
from ..result import AgentResult
from . import schedule
from .durable_graph import GraphRecorder, open_run
from .nodes import AgentTemplate, kind_of, run_callable
from .schedule import GraphSpec, SpecEdge
from .state import SNAPSHOT_TYPE, SNAPSHOT_VERSION, GraphRunState, GraphState, NodeResult, decode_result, encode_result

Condition = Callable[[GraphState], bool]
"""An edge condition: called with the graph state when the edge's source completes."""
GraphEvent = dict[str, Any]
"""A graph stream event: ``node_start``, ``node_event`` (an event of a node's agent, with
``node_id``), ``node_result`` and finally ``result`` (the :class:`GraphResult`)."""


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


@dataclass
class GraphResult:
    """The outcome of a graph run.

    Attributes:
        status: ``completed``, ``failed`` or ``interrupted`` (a node's agent stopped on an
            interrupt).
        results: The latest result of each node that ran, by node id.
        execution_order: Node ids in the order their executions completed.
        execution_count: How many node executions were started.
        task: The task (JSON).
        run_id: The durable run id, or None.
        error: Why the graph failed, or None.
    """

    status: str
    results: dict[str, NodeResult]
    execution_order: list[str]
    execution_count: int
    task: Any
    run_id: str | None = None
    error: str | None = None

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts the graph waits on: those of its interrupted agent nodes (answer them
        with ``graph.resume(run_id, responses)``, or ``graph(responses)`` for a graph run kept
        in memory; a response names its interrupt's id)."""
        return [
            interrupt
            for r in self.results.values()
            if r.status == "interrupted" and isinstance(r.result, AgentResult)
            for interrupt in r.result.interrupts
        ]

    @property
    def completed_nodes(self) -> int:
        """How many nodes completed (at least once)."""
        return sum(1 for r in self.results.values() if r.status == "completed")

    @property
    def failed_nodes(self) -> int:
        """How many nodes failed."""
        return sum(1 for r in self.results.values() if r.status == "failed")

    def __str__(self) -> str:
        """The answer of the node that completed last (empty if none did)."""
        if not self.execution_order:
            return ""
        return self.results[self.execution_order[-1]].text

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON."""
        return {
            "status": self.status,
            "results": {
                n: {"status": r.status, "executions": r.executions, "result": None if r.result is None else encode_result(r.result)}
                for n, r in self.results.items()
            },
            "execution_order": list(self.execution_order),
            "execution_count": self.execution_count,
            "task": copy.deepcopy(self.task),
            "run_id": self.run_id,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Any) -> GraphResult:
        """The inverse of :meth:`to_dict` (raises SnapshotError on malformed data)."""
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise SnapshotError("a graph result must be an object with results")
        results = {}
        for n, r in data["results"].items():
            raw = r.get("result") if isinstance(r, dict) else None
            value = None if raw is None else decode_result(raw, f"graph result node {n!r}")
            results[n] = NodeResult(n, str(r.get("status")), value, int(r.get("executions") or 0))
        return cls(
            status=str(data.get("status")),
            results=results,
            execution_order=list(data.get("execution_order") or []),
            execution_count=int(data.get("execution_count") or 0),
            task=data.get("task"),
            run_id=data.get("run_id"),
            error=data.get("error"),
        )


class GraphBuilder:
    """Builds a :class:`Graph`: ``add_node``, ``add_edge``, ``set_entry_point``,
    ``set_max_node_executions``, then ``build``."""

    def __init__(self) -> None:
        self._nodes: dict[str, GraphNode] = {}
        self._edges: list[GraphEdge] = []
        self._entry: list[str] = []
        self._max: int | None = None

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
        try:
            kind = kind_of(executor)
        except TypeError as exc:
            raise ConfigurationError(str(exc)) from None
        if node_id is None:
            node_id = executor.name if isinstance(executor, Agent) else getattr(executor, "__name__", None)
            if kind == "graph" or not node_id or node_id == "<lambda>":
                raise ConfigurationError(f"add_node: pass node_id for this {kind} node (it has no usable name)")
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
        return Graph(dict(self._nodes), list(self._edges), entry, self._max, store)


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


class Graph:
    """A built graph; run it with ``graph(task)``, ``invoke_async``, ``stream_async`` or ``resume``.

    One Graph object may run several graph runs at once: a run's state lives in the run, and
    agent nodes execute fresh copies of their agents. ``take_snapshot`` reads the state of the
    run started (or loaded) last.
    """

    def __init__(
        self,
        nodes: dict[str, GraphNode],
        edges: list[GraphEdge],
        entry_points: list[str],
        max_node_executions: int | None,
        store: RunStore | None,
        *,
        templates: dict[str, AgentTemplate] | None = None,
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
        """
        self.nodes = nodes
        self.edges = edges
        self.entry_points = entry_points
        self.max_node_executions = max_node_executions
        self.store = store
        self._node_ids = list(nodes)
        self._outgoing: dict[str, list[GraphEdge]] = {n: [] for n in nodes}
        for e in edges:
            self._outgoing[e.source].append(e)
        self.spec = GraphSpec(
            tuple(nodes),
            {n: kind_of(node.executor) for n, node in nodes.items()},
            tuple(SpecEdge(e.source, e.target, e.condition is not None) for e in edges),
            tuple(entry_points),
            max_node_executions,
        )
        """What the scheduler (:mod:`.schedule`) reads of this graph, as JSON-able data."""
        self._templates = (
            templates
            if templates is not None
            else {n: AgentTemplate(node.executor) for n, node in nodes.items() if isinstance(node.executor, Agent)}
        )
        self._current: GraphRunState | None = None

    # -- running ---------------------------------------------------------------------------

    def __call__(self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None) -> GraphResult:
        """Run the graph on ``task`` synchronously; see :meth:`invoke_async`."""
        return _sync(self.invoke_async(task, run_id=run_id, parent_run_id=parent_run_id))

    async def invoke_async(self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None) -> GraphResult:
        """Run the graph on ``task`` and return its result.

        Args:
            task: A string or content blocks. ``None`` continues the state loaded with
                :meth:`load_snapshot` (or, with ``run_id``, the stored run). A list of
                ``interruptResponse`` blocks answers the interrupts of the graph's interrupted
                nodes (:attr:`GraphResult.interrupts`) and continues the run.
            run_id: Make this a durable graph run in the graph's store; an existing run of that
                id is resumed (``task`` must then be None).
            parent_run_id: With ``run_id``: the run this graph run is nested in.
        """
        result: GraphResult | None = None
        answers = _answers(task)
        if answers is not None:
            task = None
        resume = answers is not None and run_id is not None
        events = self._stream(task, run_id, parent_run_id, resume=resume, forward=False, answers=answers)
        async for event in events:
            if event["type"] == "result":
                result = event["result"]
        assert result is not None
        return result

    def resume(self, run_id: str, responses: list[dict[str, Any]] | None = None) -> GraphResult:
        """Finish durable graph run ``run_id`` (in any process): finished nodes are read from the
        store, unfinished node runs resume from their last step. A finished run returns its result.

        Args:
            run_id: The durable graph run.
            responses: ``interruptResponse`` blocks answering interrupts of the run's
                interrupted nodes (:attr:`GraphResult.interrupts`); each goes to the node that
                raised it, whose run resumes with it.
        """
        return _sync(self.resume_async(run_id, responses))

    async def resume_async(self, run_id: str, responses: list[dict[str, Any]] | None = None) -> GraphResult:
        """Async :meth:`resume`."""
        result: GraphResult | None = None
        answers = None if responses is None else _answers(responses)
        if responses is not None and answers is None:
            raise PromptError("graph.resume: responses must be a list of interruptResponse blocks")
        async for event in self._stream(None, run_id, None, resume=True, forward=False, answers=answers):
            if event["type"] == "result":
                result = event["result"]
        assert result is not None
        return result

    async def stream_async(
        self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None
    ) -> AsyncIterator[GraphEvent]:
        """Run the graph, yielding :data:`GraphEvent` dicts; the parameters are :meth:`invoke_async`'s."""
        answers = _answers(task)
        resume = answers is not None and run_id is not None
        stream = self._stream(None if answers is not None else task, run_id, parent_run_id, resume=resume, answers=answers)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    def _store(self) -> RunStore:
        if self.store is None:
            for template in self._templates.values():
                if template.agent.store is not None:
                    self.store = template.agent.store
                    break
            else:
                from ..durable.runner import default_store

                self.store = default_store()
        return self.store

    async def _stream(
        self,
        task: Any,
        run_id: str | None,
        parent_run_id: str | None,
        *,
        resume: bool,
        forward: bool = True,
        answers: list[dict[str, Any]] | None = None,
    ) -> AsyncGenerator[GraphEvent, None]:
        """The events of a run; ``forward``: also the node agents' own events (``node_event``);
        ``answers``: interrupt responses for the run's interrupted nodes."""
        if run_id is None:
            if parent_run_id is not None:
                raise PromptError("parent_run_id names the parent of a durable graph run: pass run_id too")
            if task is None:
                run = self._current
                if run is None or run.data["status"] in ("completed",):
                    raise PromptError("graph(task): no task, and no unfinished graph state loaded (load_snapshot) to continue")
            else:
                run = GraphRunState.new(_check_task(task), self._node_ids)
            self._current = run
            async for event in self._drive(run, None, forward, answers):
                yield event
            return
        ids = self._node_ids
        opened = open_run(
            self._store(),
            run_id,
            task if task is None else _check_task(task),
            parent_run_id,
            resume=resume,
            new=lambda t: GraphRunState.new(t, ids),
            restore=lambda data, order, where: GraphRunState.restore(data, order, ids, f"graph {where}"),
        )
        with opened as (run, recorder):
            self._current = run
            run.data["spec"] = self.spec.to_dict()  # what the inspector draws (never read back as code)
            if run.data["status"] == "completed":
                yield {"type": "result", "result": self._result(run, recorder.run_id)}
                return
            async for event in self._drive(run, recorder, forward, answers):
                yield event

    async def _drive(
        self, run: GraphRunState, recorder: GraphRecorder | None, forward: bool, answers: list[dict[str, Any]] | None = None
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
        queue: asyncio.Queue[tuple[str, str, Any, BaseException | None]] = asyncio.Queue()
        tasks: dict[str, asyncio.Task[None]] = {}
        failure: BaseException | None = None
        if recorder is not None:
            await recorder.sync(run)
        try:
            self._spawn(run, starts, recorder, queue, tasks, forward, routed)
            for node_id in starts:
                yield {"type": "node_start", "node_id": node_id, "execution": data["running"][node_id]["n"]}
            while tasks:
                kind, node_id, value, error = await queue.get()
                if kind == "event":
                    yield {"type": "node_event", "node_id": node_id, "event": value}
                    continue
                tasks.pop(node_id)
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
                self._spawn(run, starts, recorder, queue, tasks, forward, {})
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
        """The interrupt responses of each interrupted node; PromptError for one no node waits on."""
        owner: dict[str, str] = {}
        for node_id, entry in run.data["nodes"].items():
            result = run.node_result(node_id).result if entry["status"] == "interrupted" else None
            if isinstance(result, AgentResult):
                owner.update({interrupt.id: node_id for interrupt in result.interrupts})
        routed: dict[str, list[dict[str, Any]]] = {}
        for block in answers:
            ident = block["interruptResponse"].get("interruptId")
            if ident not in owner:
                waiting = ", ".join(sorted(owner)) or "none"
                raise PromptError(f"no interrupted node of this graph waits on interrupt {ident!r} (waiting: {waiting})")
            routed.setdefault(owner[ident], []).append(block)
        return routed

    def _complete(
        self, run: GraphRunState, node_id: str, value: AgentResult | GraphResult | str, recorder: GraphRecorder | None, starts: list[str]
    ) -> None:
        """Record a completed execution and start what it makes ready (:mod:`.schedule`); the
        edge conditions see the state with this execution recorded."""
        run.set_result(node_id, value)
        interrupted = isinstance(value, AgentResult) and value.stop_reason == "interrupt"
        interrupted = interrupted or (isinstance(value, GraphResult) and value.status == "interrupted")
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
        return schedule.compose_input(run.data["task"], [(source, run.node_result(source).text) for source in sources])

    def _spawn(
        self,
        run: GraphRunState,
        starts: list[str],
        recorder: GraphRecorder | None,
        queue: asyncio.Queue[tuple[str, str, Any, BaseException | None]],
        tasks: dict[str, asyncio.Task[None]],
        forward: bool,
        routed: dict[str, list[dict[str, Any]]],
    ) -> None:
        for node_id in starts:
            running = run.data["running"][node_id]
            previous = run.node_result(node_id).result if run.data["nodes"][node_id]["status"] == "interrupted" else None
            nested = recorder is not None and self.spec.kinds[node_id] != "callable"
            child = recorder.child(run, node_id, running["n"]) if nested and recorder is not None else None
            node = _NodeRun(
                node_id, running["n"], running["input"], routed.get(node_id), run.data.setdefault("paused", {}), previous, child
            )
            tasks[node_id] = asyncio.create_task(self._execute(node, recorder, queue if forward else None, queue))

    async def _execute(
        self,
        node: _NodeRun,
        recorder: GraphRecorder | None,
        events: asyncio.Queue[tuple[str, str, Any, BaseException | None]] | None,
        queue: asyncio.Queue[tuple[str, str, Any, BaseException | None]],
    ) -> None:
        """Run one node execution; report its outcome on ``queue`` (and its events on ``events``)."""
        try:
            result = await self._execute_node(node, recorder, events)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            queue.put_nowait(("done", node.node_id, None, exc))
        else:
            queue.put_nowait(("done", node.node_id, result, None))

    async def _execute_node(
        self,
        node: _NodeRun,
        recorder: GraphRecorder | None,
        events: asyncio.Queue[tuple[str, str, Any, BaseException | None]] | None,
    ) -> AgentResult | GraphResult | str:
        node_id, prompt = node.node_id, node.prompt
        executor = self.nodes[node_id].executor
        child = node.child
        if isinstance(executor, Agent):
            agent = self._templates[node_id].fresh(None if recorder is None else recorder.store)
            if child is not None and recorder is not None and adopt_child(recorder.store, recorder.run_id, child):
                return await agent.resume_async(child, node.answers)
            paused = node.paused.get(node_id)
            if paused is not None:
                # An in-memory run's node that stopped on an interrupt: its agent as it stopped
                # (kept in the graph state), continued with the answers routed to it.
                if not node.answers and isinstance(node.previous, AgentResult):
                    return node.previous  # nothing answered: it still waits
                agent.load_snapshot(paused)
                prompt = node.answers
            result = await self._invoke_node(agent, prompt, child, recorder, node_id, events)
            if recorder is None and result.stop_reason == "interrupt":
                node.paused[node_id] = agent.take_snapshot(preset="session").to_dict()
            else:
                node.paused.pop(node_id, None)
            return result
        if isinstance(executor, Graph):
            if child is not None and recorder is not None:
                nested = executor._with_store(recorder.store)
                if adopt_child(recorder.store, recorder.run_id, child):
                    return await nested.resume_async(child)
                return await nested.invoke_async(prompt, run_id=child, parent_run_id=recorder.run_id)
            return await executor.invoke_async(prompt)
        return await run_callable(executor, prompt)

    async def _invoke_node(
        self,
        agent: Agent,
        prompt: Any,
        child: str | None,
        recorder: GraphRecorder | None,
        node_id: str,
        events: asyncio.Queue[tuple[str, str, Any, BaseException | None]] | None,
    ) -> AgentResult:
        """Invoke a node's fresh agent (as nested run ``child`` when durable), forwarding its events."""
        parent = None if recorder is None else recorder.run_id
        if events is None:
            return await agent.invoke_async(prompt, run_id=child, parent_run_id=parent)
        result: AgentResult | None = None
        async for event in agent.stream_async(prompt, run_id=child, parent_run_id=parent):
            if event["type"] == "result":
                result = event["result"]
            else:
                events.put_nowait(("event", node_id, event, None))
        assert result is not None
        return result

    def node_executor(self, node_id: str, store: RunStore | None = None) -> Agent | Graph | Callable[[Any], Any]:
        """What one execution of node ``node_id`` runs: a fresh agent (the node agent's
        configuration as added, keeping runs in ``store``), the nested graph, or the callable.

        Raises:
            ConfigurationError: The graph has no node ``node_id``.
        """
        node = self.nodes.get(node_id)
        if node is None:
            raise ConfigurationError(f"the graph has no node {node_id!r} (nodes: {', '.join(self._node_ids)})")
        if isinstance(node.executor, Agent):
            return self._templates[node_id].fresh(store)
        return node.executor  # type: ignore[no-any-return]

    def _with_store(self, store: RunStore) -> Graph:
        """This graph (the same nodes, agent configurations as added) keeping runs in ``store``."""
        return Graph(self.nodes, self.edges, self.entry_points, self.max_node_executions, store, templates=self._templates)

    def _result(self, run: GraphRunState, run_id: str | None) -> GraphResult:
        return graph_result(run, run_id)

    # -- snapshots ----------------------------------------------------------------------------

    def take_snapshot(self) -> dict[str, Any]:
        """The state of the run started or loaded last, as JSON (``load_snapshot`` takes it back).

        Raises:
            StateError: The graph has not run and nothing was loaded.
        """
        run = self._current
        if run is None:
            raise StateError("take_snapshot: this graph has no state yet (run it or load_snapshot first)")
        return {"type": SNAPSHOT_TYPE, "version": SNAPSHOT_VERSION, "state": copy.deepcopy(run.flush()), "execution_order": list(run.order)}

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        """Make ``snapshot`` (from :meth:`take_snapshot`, possibly of another Graph object of the
        same shape, in another process) this graph's state; ``graph()`` then continues it:
        completed executions are kept, executions that were in flight run again.

        Raises:
            SnapshotError: Not a graph snapshot, or one naming nodes this graph does not have.
        """
        if not isinstance(snapshot, dict) or snapshot.get("type") != SNAPSHOT_TYPE:
            raise SnapshotError(f"load_snapshot: not a graph snapshot (type must be {SNAPSHOT_TYPE!r})")
        if snapshot.get("version") != SNAPSHOT_VERSION:
            raise SnapshotError(f"load_snapshot: unsupported graph snapshot version {snapshot.get('version')!r}")
        self._current = GraphRunState.restore(snapshot.get("state"), snapshot.get("execution_order"), self._node_ids, "graph snapshot")


@dataclass(frozen=True)
class _NodeRun:
    """One node execution to run: its input, the interrupt answers routed to it, and the run's
    ``paused`` map (node id → the snapshot of an in-memory node agent stopped on an interrupt)
    and, for an interrupted node, its last result."""

    node_id: str
    n: int
    prompt: Any
    answers: list[dict[str, Any]] | None
    paused: dict[str, Any]
    previous: Any = None
    child: str | None = None
    """The nested run executing it (durable agent and graph nodes)."""


def graph_result(run: GraphRunState, run_id: str | None) -> GraphResult:
    """The :class:`GraphResult` of graph run state ``run`` (also how a Temporal graph run's
    result is read back from its state)."""
    data = run.data
    results = {n: run.node_result(n) for n, e in data["nodes"].items() if e["executions"] or e["result"] is not None}
    return GraphResult(data["status"], results, list(run.order), data["executions"], copy.deepcopy(data["task"]), run_id, data["error"])


def _answers(task: Any) -> list[dict[str, Any]] | None:
    """``task`` if it is a non-empty list of ``interruptResponse`` blocks (answers), else None."""
    if isinstance(task, list) and task and all(isinstance(b, dict) and isinstance(b.get("interruptResponse"), dict) for b in task):
        return copy.deepcopy(task)
    return None


def _check_task(task: Any) -> Any:
    if isinstance(task, str):
        return task
    if isinstance(task, list) and all(isinstance(b, dict) for b in task):
        return copy.deepcopy(task)
    raise PromptError(f"a graph task must be a string or a list of content blocks, got {type(task).__name__}")


__all__ = ["Condition", "Graph", "GraphBuilder", "GraphEdge", "GraphEvent", "GraphNode", "GraphResult"]
