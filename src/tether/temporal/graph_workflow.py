"""`GraphWorkflow`: a :class:`~tether.multiagent.Graph` run on Temporal, each agent node a child workflow.

The workflow holds the graph run's state, the same JSON a local graph holds
(``take_snapshot()`` shape), and drives it with the pure scheduler of
:mod:`tether.multiagent.schedule`, so it starts the same nodes on the same inputs, applies the
execution limit and queued re-runs, and stops exactly as a local graph does. Edge conditions
are user code: when a completed node has conditional edges, their outcomes come from the
``tether.graph_conditions`` activity (the graph rebuilt from the worker's registry, the
condition called on the :class:`~tether.multiagent.GraphState` of the run's JSON).

Node executions that are ready together run concurrently:

* an agent node is an ``AgentWorkflow`` (``tether.agent``) child of agent ``"<graph>/<node>"``
  whose workflow id is the run id a local durable graph gives that execution,
  ``child_run_id(graph_run_id, f"{node}:{n}")``. It runs ``nested``: it returns when it stops
  on interrupts; the graph's status becomes ``interrupted`` once nothing else is in flight,
  and it waits for an ``answer_interrupts`` update (the body an ``AgentWorkflow`` takes, so
  :meth:`TetherClient.answer_interrupts` and ``wait_for_interrupts`` work on graph runs),
  routes each answer to the node that asked it and starts that node's child workflow id again
  with its carried state and the answers: no finished node, and no finished step of the
  interrupted node, runs again;
* a nested graph node is a ``GraphWorkflow`` child of graph ``"<graph>/<node>"`` (same id
  rule); its own interrupts are answered on its own workflow id;
* a callable node runs in the ``tether.graph_callable`` activity.

Node results stay compact in the workflow (one blob reference when large); the client expands
them (:meth:`TetherClient.graph_result`, :meth:`TetherClient.graph_snapshot`).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, TypedDict

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from ..answers import answers_from, route_answers
    from ..multiagent import schedule
    from ..multiagent.schedule import GraphSpec
    from ..multiagent.state import SNAPSHOT_TYPE, SNAPSHOT_VERSION, GraphRunState
    from .activity_io import CallableInput, GraphPrompt, NestedInput, NodeOutcomeInput, NodeOutput
    from .base_workflow import MultiAgentWorkflow, SnapshotShape, child_outcome
    from .shapes import WORKFLOW_NAME, AgentRunResult, Answers, CompactRecord, MultiAgentSnapshot

GRAPH_WORKFLOW_NAME = "tether.graph"
DEFAULT_NODES_PER_EXECUTION = 100
"""Node executions per workflow execution before the graph run continues as new (option ``nodes_per_execution``)."""
_CALLABLE_TIMEOUT = timedelta(minutes=10)
_CALLABLE_RETRY = RetryPolicy(maximum_attempts=3)


class NodeOutcome(TypedDict, total=False):
    """How a node execution ended, queued for the run loop: ``kind`` ``result`` (with the
    ``result`` as the graph state holds it, ``interrupted``, and an interrupted agent node's
    child ``carried`` state and ``pending`` interrupts), ``waiting`` (an interrupted node nothing
    answered) or ``error`` (its ``error`` text and the ``exception`` that failed it)."""

    kind: str
    result: Any
    interrupted: bool
    carried: Any
    pending: list[CompactRecord]
    error: str
    exception: BaseException


@workflow.defn(name=GRAPH_WORKFLOW_NAME)
class GraphWorkflow(MultiAgentWorkflow[GraphSpec]):
    """One run of a registered graph, durable across workers, restarts and time: what it adds to
    :class:`~tether.temporal.base_workflow.MultiAgentWorkflow` is the graph scheduler's loop over
    concurrent node executions (agent nodes and nested graphs as child workflows, callable nodes
    as activities) and the routing of answers to the interrupted nodes that asked them."""

    WHAT = "graph run"
    SHAPE = SnapshotShape("graph", SNAPSHOT_TYPE, SNAPSHOT_VERSION, "execution_order")

    def __init__(self) -> None:
        super().__init__()
        self._active: set[str] = set()
        self._finished: list[tuple[str, NodeOutcome]] = []
        self._sources: dict[str, list[list[Any]]] = {}
        self._failure: str | None = None
        self._failure_cause: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- run ------------------------------------------------------------------------------

    @workflow.run
    async def run(self, params: dict[str, Any]) -> MultiAgentSnapshot:
        # ``params``: graph, config, run_id, task (JSON, compact) or snapshot (compact), options, trace.
        spec, data, _ = await self._load(params, GraphSpec.from_dict, schedule.check_spec_state, _new_state)
        starts = None if data["status"] == "completed" else schedule.start(spec, data)
        if starts is None:
            return await self._done()  # finished, or stopped earlier with nothing to retry: the outcome stands
        routed: dict[str, Answers] = {}
        while True:
            await self._launch(starts, routed)
            starts, routed = [], {}
            while self._active:
                await workflow.wait_condition(lambda: bool(self._finished))
                node_id, outcome = self._finished.pop(0)
                await self._record(node_id, outcome, starts)
                await self._launch(starts, {})
                starts = []
            if data["status"] != "interrupted" or not data["running"]:
                break
            routed = await self._wait_for_answers()
            starts = schedule.start(spec, data) or []
        schedule.finish(data)
        if self._failure is not None:
            self._status = "done"
            raise ApplicationError(
                f"graph run {params['run_id']!r}: {self._failure}", type="GraphNodeFailed", non_retryable=True
            ) from self._failure_cause
        return await self._done()

    async def _launch(self, starts: list[str], routed: dict[str, Answers]) -> None:
        """Start the executions of ``starts`` (recorded in ``running`` by the scheduler) concurrently.

        Their inputs are resolved first (and kept in ``running``); then, with nothing in flight,
        the run may continue as new carrying its snapshot, whose executions in flight start there.
        """
        spec, data, _ = self._state()
        prompts: dict[str, GraphPrompt] = {}
        for node_id in starts:
            if data["nodes"][node_id]["status"] == "interrupted":
                continue
            running = data["running"][node_id]
            sources = self._sources.pop(node_id, None)
            prompts[node_id] = await self._local(
                "tether.graph_prompt",
                {"node": node_id, "task": data["task"] if sources is not None else running["input"], "sources": sources},
            )
            running["input"] = prompts[node_id]["input"]
        if (
            prompts
            and not self._active
            and len(prompts) == len(starts)
            and self._continue_as_new_due(self._option("nodes_per_execution", DEFAULT_NODES_PER_EXECUTION))
        ):
            await workflow.wait_condition(workflow.all_handlers_finished)
            workflow.continue_as_new({**self._params, "task": None, "snapshot": self.snapshot()})
        for node_id in starts:
            running = data["running"][node_id]
            n = int(running["n"])
            self._active.add(node_id)
            if node_id not in prompts:  # an interrupted agent node
                answers = routed.get(node_id)
                if not answers:  # nothing answered: it still waits (as locally, it completes again as it stopped)
                    self._finished.append((node_id, {"kind": "waiting"}))
                else:
                    self._spawn(node_id, self._agent(node_id, n, running, answers))
                continue
            prompt = prompts[node_id]
            kind = spec.kinds[node_id]
            if kind == "agent":
                work = self._agent(node_id, n, running, None, prompt["message"])
            elif kind == "graph":
                work = self._nested(node_id, n, prompt["input"])
            else:
                work = self._callable(node_id, prompt["input"])
            self._done_here += 1
            self._spawn(node_id, work)

    def _spawn(self, node_id: str, work: Any) -> None:
        task = asyncio.create_task(self._guard(node_id, work))
        self._tasks.add(task)  # a reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _guard(self, node_id: str, work: Any) -> None:
        """Await one execution; queue its outcome (a failed child or activity fails the node)."""
        try:
            outcome: NodeOutcome = await work
        except (ChildWorkflowError, ActivityError, ApplicationError) as exc:
            cause = exc.cause if isinstance(exc, (ChildWorkflowError, ActivityError)) and exc.cause is not None else exc
            outcome = {"kind": "error", "error": str(cause), "exception": exc}
        self._finished.append((node_id, outcome))

    def _child(self, node_id: str, n: int) -> dict[str, Any]:
        return self._child_params(f"{node_id}:{n}", {}, nested=False)

    async def _agent(self, node_id: str, n: int, running: dict[str, Any], answers: Answers | None, message: Any = None) -> NodeOutcome:
        """Run (or, with ``answers``, continue) an agent node execution as a nested child workflow."""
        child = {**self._child(node_id, n), "agent": f"{self._params['graph']}/{node_id}", "nested": True}
        asked = f"the interrupted execution {n} of node {node_id!r}"
        self._prompt_child(child, answers, running.get("carried"), message, interrupted=asked, child_run="node run")
        out: AgentRunResult = await workflow.execute_child_workflow(WORKFLOW_NAME, child, id=child["run_id"])
        node: NodeOutput = await self._local("tether.graph_node", NodeOutcomeInput(node=node_id, out=child_outcome(out)))
        interrupted = out["stop_reason"] == "interrupt"
        return {
            "kind": "result",
            "result": node["result"],
            "interrupted": interrupted,
            "carried": out["run"] if interrupted else None,
            "pending": out.get("interrupts") or [],
        }

    async def _nested(self, node_id: str, n: int, task: Any) -> NodeOutcome:
        """Run a nested graph node execution as a child graph workflow."""
        child = {**self._child(node_id, n), "graph": f"{self._params['graph']}/{node_id}", "task": task, "snapshot": None}
        snapshot: MultiAgentSnapshot = await workflow.execute_child_workflow(GRAPH_WORKFLOW_NAME, child, id=child["run_id"])
        nested: NestedInput = {"node": node_id, "snapshot": snapshot, "run_id": child["run_id"]}
        node: NodeOutput = await self._local("tether.graph_nested", nested)
        return {"kind": "result", "result": node["result"], "interrupted": snapshot["state"]["status"] == "interrupted"}

    async def _callable(self, node_id: str, prompt: Any) -> NodeOutcome:
        """Run a callable node execution in an activity."""
        params: CallableInput = {
            "graph": self._params["graph"],
            "config": self._params.get("config") or {},
            "node": node_id,
            "input": prompt,
        }
        node: NodeOutput = await workflow.execute_activity(
            "tether.graph_callable",
            params,
            start_to_close_timeout=_CALLABLE_TIMEOUT,
            retry_policy=_CALLABLE_RETRY,
        )
        return {"kind": "result", "result": node["result"], "interrupted": False}

    async def _record(self, node_id: str, outcome: NodeOutcome, starts: list[str]) -> None:
        """Record a finished execution and start (into ``starts``) what it makes ready."""
        spec, data, order = self._state()
        self._active.discard(node_id)
        if outcome["kind"] == "error":
            schedule.node_failed(data, node_id, outcome["error"])
            if self._failure is None:
                self._failure, self._failure_cause = f"node {node_id!r} failed: {outcome['error']}", outcome["exception"]
            return
        if outcome["kind"] == "waiting":
            kept = data["running"][node_id]
            schedule.record(data, order, node_id, interrupted=True)
            data["running"][node_id].update(carried=kept.get("carried"), pending=kept.get("pending") or [])
            return
        data["nodes"][node_id]["result"] = outcome["result"]
        interrupted = bool(outcome["interrupted"])
        schedule.record(data, order, node_id, interrupted=interrupted)
        if interrupted:
            data["running"][node_id].update(carried=outcome.get("carried"), pending=outcome.get("pending") or [])
            return
        edges = spec.outgoing(node_id)
        if spec.conditional(node_id):
            outcomes: list[bool] = await self._local(
                "tether.graph_conditions",
                {
                    "graph": self._params["graph"],
                    "config": self._params.get("config") or {},
                    "node": node_id,
                    "state": data,
                    "order": order,
                },
            )
        else:
            outcomes = [True] * len(edges)
        captured: dict[str, list[list[Any]]] = {}

        def input_of(target: str) -> None:
            # The answers that start ``target``, captured now (before its edges are consumed);
            # the ``tether.graph_prompt`` activity composes its input from them.
            captured[target] = [[s, data["nodes"][s]["result"]] for s in schedule.input_sources(spec, data, target)]

        before = len(starts)
        schedule.follow(spec, data, node_id, outcomes, input_of, starts)
        for target in starts[before:]:
            self._sources[target] = captured[target]

    # -- interrupts and queries (the handlers are RunWorkflow's) -----------------------------

    async def _wait_for_answers(self) -> dict[str, Answers]:
        return await self._take_answers(self._route)

    def _check_answers(self, responses: Answers) -> None:
        self._route(responses)

    def _route(self, responses: Answers) -> dict[str, Answers]:
        """The answers of each interrupted node, every node's share checked
        (:func:`~tether.answers.route_answers`); InterruptError for one no node waits on."""
        return route_answers(answers_from(responses), self._pending_by_node(), "node of this graph")

    def _pending_by_node(self) -> dict[str, list[CompactRecord]]:
        data = self._data or {}
        return {
            node_id: list(running.get("pending") or [])
            for node_id, running in (data.get("running") or {}).items()
            if data["nodes"][node_id]["status"] == "interrupted"
        }

    def _pending_interrupts(self) -> list[CompactRecord]:
        """The interrupted nodes' pending interrupts (compact)."""
        return [item for items in self._pending_by_node().values() for item in items]


def _new_state(spec: GraphSpec, task: Any) -> dict[str, Any]:
    return GraphRunState.new(task, list(spec.nodes)).data


__all__ = ["GRAPH_WORKFLOW_NAME", "GraphWorkflow"]
