"""The activities of a graph run on Temporal: describe the graph, node prompts, results, conditions, callables.

The ``GraphWorkflow`` runs agent nodes as child ``AgentWorkflow``s and nested graphs as child
``GraphWorkflow``s; what it cannot compute itself, because it needs the graph object (built
from the registry: edge conditions and callable nodes are user code) or the blob store (large
values), happens here: the graph's structure (:meth:`GraphActivities.describe_graph`), a node's
input and prompt (:meth:`GraphActivities.graph_prompt`), a finished agent node's
:class:`~tether.AgentResult` or nested graph's :class:`~tether.multiagent.GraphResult` read from
its child's compact result (:meth:`GraphActivities.graph_node`,
:meth:`GraphActivities.graph_nested`), the outcomes of a completed node's edge conditions
(:meth:`GraphActivities.graph_conditions`) and a callable node's execution
(:meth:`GraphActivities.graph_callable`). All but the callable are short bookkeeping steps the
workflow runs as local activities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..errors import ConfigurationError, TetherError
from ..multiagent.graph import Graph, graph_result
from ..multiagent.nodes import NodeCallable, run_callable
from ..multiagent.schedule import compose_input
from ..multiagent.state import GraphRunState, GraphState, NodeResult, decode_result, encode_result
from .activity_io import (
    CallableInput,
    ConditionsInput,
    GraphPrompt,
    GraphPromptInput,
    GraphRef,
    NestedInput,
    NodeOutcomeInput,
    NodeOutput,
    SpecData,
)
from .activity_set import ActivitySet
from .blobs import BlobStore
from .errors import to_failure
from .graph_wire import graph_to_local
from .payloads import is_placeholder, restore


class GraphActivities(ActivitySet):
    """The graph activities a worker registers.

    Args:
        registry: The graph factories (and those of the node agents).
        blobs: The payload policy or the blob store, as for :class:`~tether.temporal.TetherActivities`.
    """

    ACTIVITIES = ("describe_graph", "graph_prompt", "graph_node", "graph_nested", "graph_conditions", "graph_callable")

    def _graph(self, params: GraphRef) -> Graph:
        graph: Graph = self._build("graph", params["graph"], params.get("config"))
        return graph

    @activity.defn(name="tether.describe_graph")
    async def describe_graph(self, params: GraphRef) -> SpecData:
        """The graph's structure: node ids and kinds, edges with a ``conditional`` flag, entry
        points, ``max_node_executions`` (:meth:`~tether.multiagent.schedule.GraphSpec.to_dict`)."""
        return self._graph(params).spec.to_dict()

    @activity.defn(name="tether.graph_prompt")
    async def graph_prompt(self, params: GraphPromptInput) -> GraphPrompt:
        """A node execution's input and prompt.

        ``params``: ``task`` (compact) and ``sources`` (``[[source, encoded result (compact)], ...]``,
        the answers that start the node) or None (an entry point: the task itself).

        Returns ``input`` (what the graph state keeps as the execution's input, one blob
        reference when large) and ``message`` (the node agent's compact user message).
        """
        try:
            task = restore(self.payloads.blobs, params["task"])
            sources = params.get("sources")
            if sources is None:
                value: Any = task
                stored = params["task"]
            else:
                answers = [(str(name), str(decode_result(restore(self.payloads.blobs, raw), f"node {name!r}"))) for name, raw in sources]
                value = compose_input(task, answers)
                stored = self.payloads.offload(value, f"the input of node {params.get('node')!r}")
            content = [{"text": value}] if isinstance(value, str) else list(value)
            message = self.payloads.compact_message({"role": "user", "content": content}, "the prompt of a node")
        except TetherError as exc:
            raise to_failure(exc) from None
        return {"input": stored, "message": message}

    @activity.defn(name="tether.graph_node")
    async def graph_node(self, params: NodeOutcomeInput) -> NodeOutput:
        """A finished agent node execution, read from its child workflow's (compact) result
        ``params["out"]``: its :class:`~tether.AgentResult` as a graph state holds it
        (``encode_result``; one blob reference when large)."""
        out = params["out"]
        node = str(params.get("node"))
        try:
            result = self._agent_result(out)
            return {"result": self.payloads.offload(encode_result(result), f"the result of node {node!r}")}
        except TetherError as exc:
            raise to_failure(exc, f"cannot read the result of node {node!r}") from None

    @activity.defn(name="tether.graph_nested")
    async def graph_nested(self, params: NestedInput) -> NodeOutput:
        """A finished nested graph node execution, read from its child ``GraphWorkflow``'s result
        (``params["snapshot"]``, compact): its :class:`~tether.multiagent.GraphResult` as a graph
        state holds it (one blob reference when large)."""
        node = str(params.get("node"))
        try:
            local = graph_to_local(self.payloads.blobs, params["snapshot"])
            result = graph_result(GraphRunState(local["state"], list(local["execution_order"])), params.get("run_id"))
            return {"result": self.payloads.offload(encode_result(result), f"the result of node {node!r}")}
        except TetherError as exc:
            raise to_failure(exc, f"cannot read the result of nested graph node {node!r}") from None

    @activity.defn(name="tether.graph_conditions")
    async def graph_conditions(self, params: ConditionsInput) -> list[bool]:
        """The outcomes of the conditions of the edges leaving ``params["node"]``, one bool per
        edge in the order they were added (true for an edge without a condition), evaluated on
        the :class:`~tether.multiagent.GraphState` of ``params["state"]`` / ``params["order"]``
        (the graph state with the node's completion recorded)."""
        graph = self._graph(params)
        node = str(params["node"])
        data = params["state"]
        try:
            data["task"] = restore(self.payloads.blobs, data["task"])
        except TetherError as exc:
            raise to_failure(exc) from None
        view = GraphState(_OffloadedRun(data, list(params["order"]), blobs=self.payloads.blobs))
        try:
            return [edge.condition is None or bool(edge.condition(view)) for edge in graph.edges if edge.source == node]
        except Exception as exc:
            raise ApplicationError(
                f"the condition of an edge from node {node!r} raised {type(exc).__name__}: {exc}",
                type="GraphConditionError",
                non_retryable=True,
            ) from exc

    @activity.defn(name="tether.graph_callable")
    async def graph_callable(self, params: CallableInput) -> NodeOutput:
        """Execute callable node ``params["node"]`` on its input (``params["input"]``, compact);
        returns its result as a graph state holds it. An exception of the callable fails the
        node (not retried: it is the node's outcome, as locally)."""
        graph = self._graph(params)
        node = str(params["node"])
        try:
            executor = graph.node_executor(node)
            if graph.spec.kinds[node] != "callable":
                raise ConfigurationError(f"node {node!r} of graph {params.get('graph')!r} is not a callable node")
            prompt = restore(self.payloads.blobs, params["input"])
        except TetherError as exc:
            raise to_failure(exc) from None
        try:
            text = await run_callable(cast("NodeCallable", executor), prompt)
        except Exception as exc:
            raise ApplicationError(f"{type(exc).__name__}: {exc}", type="GraphNodeError", non_retryable=True) from exc
        try:
            return {"result": self.payloads.offload(encode_result(text), f"the result of node {node!r}")}
        except TetherError as exc:
            raise to_failure(exc) from None


@dataclass
class _OffloadedRun(GraphRunState):
    """A graph run state whose node results may be blob references, read only when a condition
    asks for that node's result (a condition reading one result costs one read, not one per node)."""

    blobs: BlobStore | None = None

    def node_result(self, node_id: str) -> NodeResult:
        entry = self.data["nodes"][node_id]
        if self.blobs is not None and is_placeholder(entry["result"]):
            entry["result"] = restore(self.blobs, entry["result"])
        return super().node_result(node_id)


__all__ = ["GraphActivities"]
