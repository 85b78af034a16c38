"""Strands' wording of what a graph node and a swarm member are told, and the members' agents
after their turns, for the facade's graphs and swarms.

Tether's graphs and swarms word a node's input and a member's prompt their own way
(:func:`tether.multiagent.schedule.compose_input`, :func:`tether.multiagent.swarm_turns.turn_input`);
a Strands program sees (and its model is sent) Strands' texts, so the facade passes these
formatters to Tether's core (``Graph(node_input=...)``, ``Swarm(turn_input=...,
handoff_tool=...)``). The texts follow strands 1.62's ``Graph._build_node_input``,
``Swarm._build_node_input`` and ``Swarm._create_handoff_tool``. What they return is JSON (it is
stored as the node's input), so a durable run resumes with the input it started with.
"""

from __future__ import annotations

import copy
from typing import Any

from ...agent import Agent as TetherAgent
from ...durable.store import RunStore
from ...multiagent.nodes import AgentTemplate
from ...multiagent.results import GraphResult as TetherGraphResult
from ...multiagent.state import GraphRunState
from ...multiagent.swarm import handoff_targets, record_handoff
from ...multiagent.swarm_turns import HANDOFF_KEY
from ...result import AgentResult as TetherAgentResult
from ..agent.agent import Agent as FacadeAgent
from ..agent.agent_result import AgentResult
from ..tools.context import ToolContext
from ..tools.decorator import tool
from ._node_agent import node_agent
from ._results import text_result


def agent_results(result: Any) -> list[AgentResult]:
    """The agent results of a node's result, flattened through nested graphs (Strands'
    ``NodeResult.get_agent_results``); a callable node's text counts as one."""
    if isinstance(result, TetherAgentResult):
        return [AgentResult.of(result)]
    if isinstance(result, TetherGraphResult):
        return [r for node in result.results.values() for r in agent_results(node.result)]
    if isinstance(result, str):
        return [AgentResult.of(text_result(result))]
    return []


def graph_node_input(task: Any, sources: list[tuple[str, Any]]) -> Any:
    """Strands' input of a graph node started by ``sources`` (``(node id, result)`` pairs)."""
    if not sources:
        return copy.deepcopy(task)
    blocks: list[dict[str, Any]] = []
    if isinstance(task, str):
        blocks.append({"text": f"Original Task: {task}"})
    else:
        blocks.append({"text": "Original Task:"})
        blocks.extend(copy.deepcopy(task))
    blocks.append({"text": "\nInputs from previous nodes:"})
    for source, result in sources:
        blocks.append({"text": f"\nFrom {source}:"})
        for agent_result in agent_results(result):
            blocks.append({"text": f"  - {getattr(agent_result, 'agent_name', 'Agent')}: {agent_result}"})
    return blocks


def shared_context(run: GraphRunState, entry: str) -> dict[str, dict[str, Any]]:
    """The swarm's shared context keyed by member, as Strands keys it: each member's latest
    handoff context, in the order members first worked on the task.

    Tether keeps one merged object (``data["context"]``); when the members' results do not
    account for it (a state loaded from a Strands snapshot), it is all under the member that
    handed off last (``entry`` before any handoff), as :func:`._payload.swarm_payload` writes it.
    """
    data = run.data
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(run.order):
        result = run.node_result(name).result
        state = result.state if isinstance(result, TetherAgentResult) else None
        handoff = state.get(HANDOFF_KEY) if isinstance(state, dict) else None
        if isinstance(handoff, dict) and handoff.get("context"):
            out[name] = copy.deepcopy(dict(handoff["context"]))
    merged = {key: value for values in out.values() for key, value in values.items()}
    if merged != data["context"]:
        return {data.get("previous") or entry: copy.deepcopy(data["context"])} if data["context"] else {}
    return out


def swarm_turn_input(names: list[str], descriptions: dict[str, str], entry: str) -> Any:
    """Strands' prompt of a swarm member's turn, for a swarm of members ``names``."""

    def turn_input(run: GraphRunState, member: str) -> Any:
        data = run.data
        text = ""
        if data.get("message"):
            text += f"Handoff Message: {data['message']}\n\n"
        task = data["task"]
        if isinstance(task, str):
            text += f"User Request: {task}\n\n"
        elif isinstance(task, list):
            text += "User Request: Multi-modal task\n\n"
        if run.order:
            text += f"Previous agents who worked on this: {' → '.join(run.order)}\n\n"
        context = shared_context(run, entry)
        if context:
            text += "Shared knowledge from previous agents:\n"
            for name, values in context.items():
                text += f"• {name}: {values}\n"
            text += "\n"
        others = [n for n in names if n != member]
        if others:
            text += "Other agents available for collaboration:\n"
            for name in others:
                text += f"Agent name: {name}."
                if descriptions.get(name):
                    text += f" Agent description: {descriptions[name]}"
                text += "\n"
            text += "\n"
        text += (
            "You have access to swarm coordination tools if you need help from other agents. "
            "If you don't hand off to another agent, the swarm will consider the task complete."
        )
        blocks: list[dict[str, Any]] = [{"text": f"Context:\n{text}\n\n"}]
        if not isinstance(task, str):
            blocks.extend(copy.deepcopy(task))
        return blocks

    return turn_input


@tool(context=True)
def handoff_to_agent(agent_name: str, message: str, tool_context: ToolContext, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """Transfer control to another agent in the swarm for specialized help.

    Args:
        agent_name: Name of the agent to hand off to
        message: Message explaining what needs to be done and why you're handing off
        context: Additional context to share with the next agent

    Returns:
        Confirmation of handoff initiation
    """
    if agent_name not in handoff_targets(tool_context):
        return {"status": "error", "content": [{"text": f"Error: Agent '{agent_name}' not found in swarm"}]}
    try:
        record_handoff(tool_context, agent_name, message, context)
    except Exception as exc:
        return {"status": "error", "content": [{"text": f"Error in handoff: {exc}"}]}
    return {"status": "success", "content": [{"text": f"Handing off to {agent_name}: {message}"}]}


class MemberTemplate(AgentTemplate):
    """Tether's node/member template run the Strands way: it remembers the agent of the latest
    execution, so the facade can leave the user's agent holding that conversation afterwards,
    as Strands (which runs the user's agent itself) does.

    Args:
        agent: The user's agent.
        carry: Each execution in memory continues the agent's conversation (a Strands graph
            node without ``reset_on_revisit``); False: each starts from the agent as added (a
            swarm member's turn, Strands' reset). A durable execution (``store`` given) always
            starts from the agent as added, so a resumed run decides as the first one did.
    """

    def __init__(self, agent: TetherAgent, *, carry: bool = False) -> None:
        super().__init__(agent)
        self.carry = carry
        self.latest: TetherAgent | None = None

    def fresh(self, store: RunStore | None, extra_tools: list[Any] | None = None, state: dict[str, Any] | None = None) -> TetherAgent:
        names = self.agent.tool_registry.names
        extra = [t for t in extra_tools or [] if getattr(t, "tool_name", None) not in names]  # a member has the handoff tool already
        frozen = self.messages
        if self.carry and store is None:
            self.sync_back()
            self.messages = copy.deepcopy(self.agent.messages)
        try:
            agent = super().fresh(store, extra, state)
        finally:
            self.messages = frozen
        if isinstance(self.agent, FacadeAgent):
            agent = node_agent(self.agent, agent)  # reports through the user's callback handler
        self.latest = agent
        return agent

    def sync_back(self) -> None:
        """Give the user's agent the latest execution's conversation (Tether's executions run on
        copies; the copies' runs are what durability replays, so this is a view only)."""
        if self.latest is not None:
            self.agent.messages = copy.deepcopy(self.latest.messages)


__all__ = ["MemberTemplate", "agent_results", "graph_node_input", "handoff_to_agent", "shared_context", "swarm_turn_input"]
