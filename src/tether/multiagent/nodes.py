"""How one graph node executes: its kind (an agent, a nested graph, a callable) as a small protocol.

A graph holds one :class:`NodeKind` per node, chosen once when the graph is built
(:func:`tether.multiagent.graph.node_kind`); running a node, naming it, handing out what it
executes and reading its interrupts are the kind's methods, so nothing dispatches on the type
of a node's executor. A new kind of node is one more class here.

An :class:`~tether.Agent` runs one invocation at a time, and a node's executions must not see
each other's conversations (nor collide when two parallel nodes share an agent object). So each
execution runs a fresh ``Agent`` built from the node agent's configuration as it was when the
node was added: its model, tools, hooks, system prompt, initial messages and state.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ..agent import Agent
from ..agent_tool import configuration_of
from ..budget import Budget
from ..durable.adoption import adopt_child
from ..durable.store import RunStore
from ..interrupts import Interrupt
from ..result import AgentResult
from ..tools.registry import ToolRegistry
from ..tools.source import SourceTool
from .results import GraphResult

NodeCallable = Callable[[Any], str | Awaitable[str]]
"""A callable node: takes the node's input (a string or content blocks), returns a string."""


class AgentTemplate:
    """An agent's configuration, frozen when the node was added; :meth:`fresh` builds a copy."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.messages = copy.deepcopy(agent.messages)
        self.state = copy.deepcopy(agent.run_state.state)
        self.system_prompt = copy.deepcopy(agent.system_prompt_content)

    def fresh(self, store: RunStore | None, extra_tools: list[Any] | None = None, state: dict[str, Any] | None = None) -> Agent:
        """A new Agent with the template's configuration (and ``store`` for durable executions).

        ``extra_tools`` are added to a copy of the agent's tool registry (a swarm's handoff
        tool); ``state`` entries are added to its initial state.
        """
        src = self.agent
        agent = Agent(
            **configuration_of(src),
            system_prompt=self.system_prompt,
            messages=copy.deepcopy(self.messages) if self.messages else None,
            state={**self.state, **(state or {})},
            store=store if store is not None else src.store,
            trace_content=src.trace_content,
        )
        agent.checkpointing = src.checkpointing
        if extra_tools:
            listed = [src.tool_registry.get(name) for name in src.tool_registry.names]
            own = [t for t in listed if t is not None and not isinstance(t, SourceTool)]
            agent.tool_registry = ToolRegistry([*own, *src.tool_registry.sources, *extra_tools])
        else:
            agent.tool_registry = src.tool_registry  # shared tools (sources started once)
        agent.hooks = src.hooks
        return agent


async def run_callable(fn: NodeCallable, prompt: Any) -> str:
    """Call a callable node (sync or async) and check it returned a string."""
    value = fn(prompt)
    if inspect.isawaitable(value):
        value = await value
    if isinstance(value, AgentResult):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"a callable graph node must return a string, got {type(value).__name__}")
    return value


NodeOutput = AgentResult | GraphResult | str
"""What a node execution returns: an agent's result, a nested graph's, or a callable's text."""


@dataclass(frozen=True)
class NodeRun:
    """One node execution to run: its input, the interrupt answers routed to it, the run's
    ``paused`` map (node id -> the snapshot of an in-memory node agent stopped on an interrupt)
    and, for an interrupted node, its last result.

    Attributes:
        child: The nested run executing it (durable agent and graph nodes).
        store: The durable graph run's store (None: a run kept in memory).
        parent_run_id: The durable graph run's id (None: in memory).
        emit: Forwards an event of the node's agent (None: the caller wants no node events).
        budget: What the graph run's budget leaves this execution (None: no graph budget).
    """

    node_id: str
    n: int
    prompt: Any
    answers: list[dict[str, Any]] | None
    paused: dict[str, Any]
    previous: Any = None
    child: str | None = None
    store: RunStore | None = None
    parent_run_id: str | None = None
    emit: Callable[[Any], None] | None = None
    budget: Budget | None = None


class NodeKind(Protocol):
    """What a graph needs of one kind of node."""

    kind: ClassVar[str]
    """``agent``, ``graph`` or ``callable``: the node's kind in the graph's spec (JSON)."""

    @property
    def template(self) -> AgentTemplate | None:
        """The agent configuration of an agent node (None for other kinds)."""
        ...

    def default_id(self) -> str | None:
        """The node id when ``add_node`` is given none (None: the caller must pass one)."""
        ...

    def executor(self, store: RunStore | None) -> Any:
        """What one execution runs (a fresh agent keeping runs in ``store``, the graph, the callable)."""
        ...

    async def execute(self, node: NodeRun) -> NodeOutput:
        """Run one execution to its end (or its interrupt)."""
        ...

    def interrupted(self, result: NodeOutput) -> bool:
        """Whether ``result`` (of this node) stopped on interrupts the run waits on."""
        ...

    def interrupts(self, result: NodeOutput | None) -> list[Interrupt]:
        """The interrupts this node's ``result`` waits on that the graph's answers may be routed to."""
        ...


class AgentNode:
    """An agent node: each execution a fresh agent of the node's configuration (resumed, when
    durable, from the nested run it left; continued, in memory, from its paused snapshot)."""

    kind: ClassVar[str] = "agent"

    def __init__(self, template: AgentTemplate) -> None:
        self.template = template

    def default_id(self) -> str | None:
        return self.template.agent.name

    def executor(self, store: RunStore | None) -> Agent:
        return self.template.fresh(store)

    async def execute(self, node: NodeRun) -> AgentResult:
        agent = self.template.fresh(node.store)
        budget = agent.budget if node.budget is None else node.budget.tightest(agent.budget)
        store, parent = node.store, node.parent_run_id
        if node.child is not None and store is not None and parent is not None and adopt_child(store, parent, node.child):
            return await agent.resume_async(node.child, node.answers, budget=budget)
        prompt = node.prompt
        paused = node.paused.get(node.node_id)
        if paused is not None:
            # An in-memory run's node that stopped on an interrupt: its agent as it stopped
            # (kept in the graph state), continued with the answers routed to it.
            if not node.answers and isinstance(node.previous, AgentResult):
                return node.previous  # nothing answered: it still waits
            agent.load_snapshot(paused)
            prompt = node.answers
        result = await self._invoke(agent, prompt, node, budget)
        if node.store is None and result.stop_reason == "interrupt":
            node.paused[node.node_id] = agent.take_snapshot(preset="session").to_dict()
        else:
            node.paused.pop(node.node_id, None)
        return result

    @staticmethod
    async def _invoke(agent: Agent, prompt: Any, node: NodeRun, budget: Budget | None) -> AgentResult:
        """Invoke the fresh agent (as nested run ``node.child`` when durable), forwarding its events."""
        if node.emit is None:
            return await agent.invoke_async(prompt, run_id=node.child, parent_run_id=node.parent_run_id, budget=budget)
        result: AgentResult | None = None
        async for event in agent.stream_async(prompt, run_id=node.child, parent_run_id=node.parent_run_id, budget=budget):
            if event["type"] == "result":
                result = event["result"]
            else:
                node.emit(event)
        assert result is not None
        return result

    def interrupted(self, result: NodeOutput) -> bool:
        # A node its budget stopped waits like an interrupted one: resumed, its run goes on.
        return isinstance(result, AgentResult) and result.stop_reason in ("interrupt", "budget_exhausted")

    def interrupts(self, result: NodeOutput | None) -> list[Interrupt]:
        return list(result.interrupts) if isinstance(result, AgentResult) else []


class NestedGraph(Protocol):
    """What a graph node needs of the graph it nests."""

    def _with_store(self, store: RunStore) -> NestedGraph: ...

    async def invoke_async(self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None) -> GraphResult: ...

    async def resume_async(self, run_id: str, responses: list[dict[str, Any]] | None = None) -> GraphResult: ...


class _NotAgent:
    """What the kinds other than agents share: no agent configuration, no interrupts routed to
    them (a graph routes interrupt answers to its agent nodes only)."""

    template: AgentTemplate | None = None

    def interrupted(self, result: NodeOutput) -> bool:
        return False

    def interrupts(self, result: NodeOutput | None) -> list[Interrupt]:
        return []


class NestedGraphNode(_NotAgent):
    """A nested graph node: durable, each execution a nested graph run in the parent's store."""

    kind: ClassVar[str] = "graph"

    def __init__(self, graph: NestedGraph) -> None:
        self.graph = graph

    def default_id(self) -> str | None:
        return None  # a graph has no name of its own

    def executor(self, store: RunStore | None) -> NestedGraph:
        return self.graph

    async def execute(self, node: NodeRun) -> GraphResult:
        if node.child is not None and node.store is not None and node.parent_run_id is not None:
            nested = self.graph._with_store(node.store)
            if adopt_child(node.store, node.parent_run_id, node.child):
                return await nested.resume_async(node.child)
            return await nested.invoke_async(node.prompt, run_id=node.child, parent_run_id=node.parent_run_id)
        return await self.graph.invoke_async(node.prompt)

    def interrupted(self, result: NodeOutput) -> bool:
        return isinstance(result, GraphResult) and result.status == "interrupted"


class CallableNode(_NotAgent):
    """A callable node: the function runs in process, on the node's input; never a nested run."""

    kind: ClassVar[str] = "callable"

    def __init__(self, fn: NodeCallable) -> None:
        self.fn = fn

    def default_id(self) -> str | None:
        return getattr(self.fn, "__name__", None)

    def executor(self, store: RunStore | None) -> NodeCallable:
        return self.fn

    async def execute(self, node: NodeRun) -> str:
        return await run_callable(self.fn, node.prompt)


__all__ = [
    "AgentNode",
    "AgentTemplate",
    "CallableNode",
    "NestedGraphNode",
    "NodeCallable",
    "NodeKind",
    "NodeOutput",
    "NodeRun",
    "run_callable",
]
