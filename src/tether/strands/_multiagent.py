"""Graphs and swarms with the provider: Strands' multi-agent ``SessionManager`` hooks, and per-tool
durability inside their nodes.

One line makes a Strands graph or swarm durable, as Strands' own session managers do::

    swarm = Swarm([triage, billing], session_manager=TetherSessionManager("ticket-7"))
    graph = builder.set_session_manager(TetherSessionManager("report-3")).build()

**The orchestration.** The graph's or swarm's state (Strands' ``serialize_state``: completed nodes,
their results, the next nodes, the shared context, the handoff) is the Tether run
``strands.<session_id>.multiagent-<id>``, written after every node and invocation. Started again with
the same session id, Strands' ``deserialize_state`` resumes an execution that was cut off from its
next nodes: the finished nodes do not run again.

**Inside a node.** Strands refuses a node agent that has a session manager of its own (its state is
the graph's), and re-runs a cut-off node from its start. So each agent node (an ``Agent``, not a
nested graph) also gets a run of its own, ``strands.<session_id>.multiagent-<id>--<node_id>``,
written by the manager's agent write path (messages, tool start markers and results, through
:class:`~tether.strands.executor.TetherToolExecutor`) without becoming the agent's session manager.
When the re-run node is invoked with the prompt of its cut-off turn, that turn is finished as a
single agent's is: its recorded tool results are returned without running the tools, an in-doubt
call runs again with the same idempotency key, a recorded model response is not asked again. A
swarm node's recorded handoffs are applied to the swarm again (the handoff tool only changes the
swarm's state in memory, which the crash lost).

**What a resumed execution gives back.** The nodes it finished before the crash do not run again:
each one's agent holds the conversation and state its turn left, restored from its run, as in the
uninterrupted program; a resumed graph's result reports its nodes' count, edges and entry points
(Strands' ``serialize_state`` does not store them and its restore leaves them empty).

**Invocation numbers.** Each invocation of a graph or swarm gets a number, stored (open) before its
first node runs and closed when it completes, fails or stops for interrupts; each node turn records
it. A node turn that ended in the invocation a crash left open is handed back too when the node runs
again with the same prompt: the crash came after the node's own write and before the orchestrator's.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol, cast

from strands import Agent
from strands.hooks import (
    AfterInvocationEvent,
    BeforeInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)
from strands.middleware import ExecuteToolStage, InvokeModelStage
from strands.multiagent.graph import Graph, GraphState
from strands.types.exceptions import SessionException

from .._json import json_copy
from ._binding import AgentBinding
from ._mcp import key_mcp_calls
from ._run import StrandsRun, prompt_key, tool_uses
from .executor import TetherToolExecutor

if TYPE_CHECKING:
    from strands.multiagent.base import MultiAgentBase

    from ..durable.store import RunStore

MULTI_STATUS = {"completed": "finished", "failed": "failed", "interrupted": "interrupted", "pending": "finished"}
"""Tether's run status for a graph's or swarm's Strands status."""
HANDOFF_TOOL = "handoff_to_agent"
"""The tool a swarm gives its nodes to hand off (see ``Swarm._create_handoff_tool``)."""


def multi_key(source: MultiAgentBase) -> str:
    """The agent id of a graph's or swarm's run in its session."""
    return f"multiagent-{source.id}"


def node_key(source: MultiAgentBase, node_id: str) -> str:
    """The agent id of the run of node ``node_id`` of ``source``."""
    return f"{multi_key(source)}--{node_id}"


class AgentWriter(Protocol):
    """The agent write path of :class:`~tether.strands.session_manager.TetherSessionManager` that a
    node's run goes through (the manager's own hooks, called for an agent it is not the session
    manager of)."""

    session_id: str
    store: RunStore
    non_idempotent: frozenset[str]
    reconcile: Any

    def binding(self, agent: Any) -> AgentBinding | None: ...
    def append_message(self, message: Any, agent: Any, **kwargs: Any) -> None: ...
    def _record_fields(self, binding: AgentBinding) -> None: ...
    def _restore(self, binding: AgentBinding) -> None: ...
    def _before_invocation(self, event: BeforeInvocationEvent) -> None: ...
    def _after_invocation(self, event: AfterInvocationEvent) -> None: ...
    def _before_tool_call(self, event: BeforeToolCallEvent) -> None: ...
    def _replay(self, context: Any, next_fn: Any) -> Any: ...


class NodeBinding(AgentBinding):
    """An agent node's run: bound to its node, restored lazily (a node's agent is reset before it runs)."""

    source: MultiAgentBase
    node_id: str
    pending: bool
    """The stored node turn is to be finished (cut off, or ended in an invocation a crash left open)
    and this process has not invoked the node yet."""


class MultiAgentRuns:
    """The graphs and swarms of one :class:`~tether.strands.session_manager.TetherSessionManager`,
    and their agent nodes (see the module docstring)."""

    def __init__(self, manager: AgentWriter) -> None:
        self.manager = manager
        self.sources: dict[str, tuple[MultiAgentBase, StrandsRun]] = {}
        self.nodes: dict[int, NodeBinding] = {}
        self.resuming: dict[str, bool] = {}
        """Per graph or swarm: whether its current (or last) invocation resumes a cut-off execution."""

    def initialize(self, source: MultiAgentBase) -> None:
        """Bind ``source`` and its agent nodes to their runs; a stored state is handed to Strands'
        ``deserialize_state`` (which resumes an execution cut off mid-way from its next nodes)."""
        key = multi_key(source)
        if key in self.sources:
            raise SessionException(f"multi-agent {source.id!r} is already initialized in session {self.manager.session_id!r}")
        run = StrandsRun(self.manager.store, self.manager.session_id, key, kind="multi_agent")
        bound: list[NodeBinding] = []
        try:
            state = run.strands.get("multi_agent")
            open_invocation = run.strands.get("invocation") if run.strands.get("invocation_open") else None
            for node_id, node in dict(getattr(source, "nodes", None) or {}).items():
                agent = getattr(node, "executor", None)
                if isinstance(agent, Agent):
                    bound.append(self._bind_node(source, str(node_id), agent, open_invocation))
            if run.stored is not None and isinstance(state, dict):
                source.deserialize_state(copy.deepcopy(state))
                if getattr(source, "_resume_from_session", False):
                    _structure_again(source)
                    self._finished_nodes_again(state, run.strands.get("invocation"), bound)
            else:
                self.write(source, run)
        except BaseException:
            for binding in bound:
                self.nodes.pop(id(binding.agent), None)
                binding.run.close()
            run.close()
            raise
        self.sources[key] = (source, run)
        self.resuming[key] = False
        hooks = getattr(source, "hooks", None)  # Graph's and Swarm's registry (the one the manager's hooks are in)
        if hooks is not None:
            hooks.add_callback(BeforeMultiAgentInvocationEvent, self._before_invocation_of_source)

    def sync(self, source: MultiAgentBase) -> None:
        """Store the graph's or swarm's state (Strands' ``serialize_state``) after each node and invocation."""
        bound = self.sources.get(multi_key(source))
        if bound is not None and bound[0] is source:
            self.write(source, bound[1])

    def write(self, source: MultiAgentBase, run: StrandsRun) -> None:
        state = cast("dict[str, Any]", json_copy(source.serialize_state()))
        run.strands["multi_agent"] = state
        if state.get("status") in ("completed", "failed", "interrupted"):
            run.strands["invocation_open"] = False
        run.session.timeline.status = MULTI_STATUS.get(str(state.get("status") or ""), "running")
        run.write([])

    def resumed(self, source: Any) -> bool | None:
        """Whether ``source``'s current (or last) invocation resumes an execution cut off by a crash;
        None if ``source`` is not one of this manager's graphs or swarms."""
        bound = self.sources.get(multi_key(source)) if hasattr(source, "serialize_state") else None
        return self.resuming[multi_key(source)] if bound is not None and bound[0] is source else None

    def _before_invocation_of_source(self, event: BeforeMultiAgentInvocationEvent) -> None:
        """Note whether the invocation resumes one a crash cut off; a new one gets the next invocation
        number, stored before any node runs (each node turn records it)."""
        key = multi_key(event.source)
        run = self.sources[key][1]
        cut_off = bool(run.strands.get("invocation_open"))
        # still open: a crash cut it off (if before the orchestrator stored a node, Strands starts it
        # over); it is the same invocation, whose ended node turns are handed back
        self.resuming[key] = cut_off or bool(getattr(event.source, "_resume_from_session", False))
        if not cut_off:
            run.strands["invocation"] = int(run.strands.get("invocation") or 0) + 1
        run.strands["invocation_open"] = True
        run.write([])

    def binding(self, agent: Any) -> NodeBinding | None:
        """The binding of node agent ``agent``, if it is one of this manager's graphs' or swarms'."""
        binding = self.nodes.get(id(agent))
        return binding if binding is not None and binding.agent is agent else None

    def close(self) -> None:
        for binding in self.nodes.values():
            binding.run.close()
        for _, run in self.sources.values():
            run.close()
        self.nodes.clear()
        self.sources.clear()
        self.resuming.clear()

    # -- agent nodes -------------------------------------------------------------------------------

    def _bind_node(self, source: MultiAgentBase, node_id: str, agent: Agent, open_invocation: Any) -> NodeBinding:
        """Bind node ``node_id``'s agent to its run. Its stored turn is finished when the node runs
        again if it was cut off, or if it ended in the orchestrator's invocation that a crash left
        open (the orchestrator's state is stored after the node's: a crash between the two writes)."""
        manager = self.manager
        run = StrandsRun(manager.store, manager.session_id, node_key(source, node_id))
        binding = NodeBinding(agent, run)
        binding.source, binding.node_id = source, node_id
        try:
            turn = run.strands.get("turn") or {}
            ended_unrecorded = open_invocation is not None and turn.get("invocation") == open_invocation
            binding.pending = run.stored is not None and (bool(turn.get("open")) or ended_unrecorded)
            usage: dict[str, Any] = dict(run.run.metrics.get("usage") or {})
            binding.usage_base = {key: int(value) for key, value in usage.items()}
            if run.stored is None:
                manager._record_fields(binding)
                run.session.timeline.status = "finished"
                run.write(binding.messages())
        except BaseException:
            run.close()
            raise
        self.nodes[id(agent)] = binding
        if not isinstance(agent.tool_executor, TetherToolExecutor):
            agent.tool_executor = TetherToolExecutor(agent.tool_executor, manager)
            agent.add_middleware(ExecuteToolStage, key_mcp_calls)  # an MCP server reads the call's idempotency key
        agent.add_middleware(InvokeModelStage, manager._replay)
        binding.replay_installed = True  # the manager's restore must not add it a second time
        agent.hooks.add_callback(BeforeInvocationEvent, self._before_invocation)
        agent.hooks.add_callback(MessageAddedEvent, self._message_added)
        agent.hooks.add_callback(AfterInvocationEvent, manager._after_invocation)
        agent.hooks.add_callback(BeforeToolCallEvent, manager._before_tool_call)
        return binding

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        """The node is about to run (its agent reset by the graph or swarm): the first time in this
        process, a cut-off turn started with the same prompt is restored to be finished."""
        binding = self.binding(event.agent)
        if binding is None:
            return
        restored, prompt = False, None
        if binding.pending:
            binding.pending = False
            turn = binding.run.strands.get("turn") or {}
            if prompt_key(list(event.messages or [])) == turn.get("prompt"):
                turn["open"] = True  # an ended turn the orchestrator did not record: its answer is handed back
                self.manager._restore(binding)
                restored, prompt = True, turn.get("prompt")
        self.manager._before_invocation(event)
        current = binding.run.strands.get("turn")
        if isinstance(current, dict):
            current["invocation"] = self._invocation_of(binding.source)  # stored with the turn's first write
        if restored:
            self._usage_again(binding, prompt)
            self._handoffs_again(binding)

    def _finished_nodes_again(self, state: dict[str, Any], invocation: Any, bound: list[NodeBinding]) -> None:
        """A resumed execution does not run again the nodes it finished before the crash: each agent of
        one holds the conversation and state its turn left (as uninterrupted), restored from its run."""
        done = set(state.get("completed_nodes") or state.get("node_history") or []) - set(state.get("next_nodes_to_execute") or [])
        for binding in bound:
            turn = binding.run.strands.get("turn") or {}
            if binding.node_id in done and not turn.get("open") and invocation is not None and turn.get("invocation") == invocation:
                self.manager._restore(binding)

    def _invocation_of(self, source: MultiAgentBase) -> Any:
        bound = self.sources.get(multi_key(source))
        return None if bound is None else bound[1].strands.get("invocation")

    def _message_added(self, event: MessageAddedEvent) -> None:
        if self.binding(event.agent) is not None:
            self.manager.append_message(event.message, event.agent)

    def _usage_again(self, binding: NodeBinding, prompt: Any) -> None:
        """Count the restored turn's recorded model calls in the agent's usage, as the uninterrupted
        node's result counts them (the graph's or swarm's usage is the sum of its nodes')."""
        # the reused response (the held one) counts itself (session_manager._resume / _replay)
        messages: list[Any] = [message for message in binding.agent.messages if message is not binding.reused]
        start = max((i for i in range(len(messages)) if prompt_key(messages[i : i + 1]) == prompt), default=0)
        if binding.metrics_restored:  # the restored metrics count the turn's usage up to its last tool results
            boundaries = [i for i in range(start, len(messages)) if any("toolResult" in block for block in messages[i].get("content", []))]
            start = boundaries[-1] + 1 if boundaries else start
        metrics = binding.agent.event_loop_metrics
        totals: list[Any] = [metrics.accumulated_usage, *(invocation.usage for invocation in metrics.agent_invocations[-1:])]
        for message in messages[start:]:
            usage = (message.get("metadata") or {}).get("usage") if message["role"] == "assistant" else None
            if not usage:
                continue
            for total in totals:
                for key in ("inputTokens", "outputTokens", "totalTokens"):
                    total[key] += int(usage.get(key, 0))
            for key, field in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"), ("totalTokens", "total_tokens")):
                binding.usage_base[field] = binding.usage_base.get(field, 0) - int(usage.get(key, 0))

    def _handoffs_again(self, binding: NodeBinding) -> None:
        """Apply the restored turn's successful handoffs to the swarm again (their only effect was in memory)."""
        handle = getattr(binding.source, "_handle_handoff", None)
        nodes = getattr(binding.source, "nodes", None) or {}
        if handle is None:
            return
        messages = binding.messages()
        results = {
            block["toolResult"]["toolUseId"]: block["toolResult"]
            for message in messages
            for block in message.get("content", [])
            if "toolResult" in block
        }
        results.update(binding.run.run.cursor.results)
        for message in messages:
            for use in tool_uses(message):
                result = results.get(use["toolUseId"])
                target = nodes.get((use.get("input") or {}).get("agent_name"))
                if use["name"] == HANDOFF_TOOL and result is not None and result.get("status") == "success" and target is not None:
                    inputs = use["input"]
                    handle(target, str(inputs.get("message", "")), dict(inputs.get("context") or {}))


def _structure_again(source: MultiAgentBase) -> None:
    """A graph resumed by Strands' ``deserialize_state`` has no structure in its state (its nodes'
    count, edges and entry points, which its result reports): set it as a new invocation does."""
    state = getattr(source, "state", None)
    if isinstance(state, GraphState) and isinstance(source, Graph) and not state.total_nodes:
        state.total_nodes = len(source.nodes)
        state.edges = [(edge.from_node, edge.to_node) for edge in source.edges]
        state.entry_points = list(source.entry_points)


__all__ = ["MULTI_STATUS", "AgentWriter", "MultiAgentRuns", "NodeBinding", "multi_key", "node_key"]
