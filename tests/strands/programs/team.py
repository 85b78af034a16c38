"""A Swarm (triage hands off to billing with context) or a Graph (research -> write), whose node
agents call tools, for the crash tests of nodes.

Usage: ``team.py swarm|graph STORE [--plain]``. The swarm gets the provider with Strands' own one
line (``Swarm(..., session_manager=...)``), the graph with ``GraphBuilder.set_session_manager``.
Each node's model pauses at ``model:<node>:<n>`` (its n-th answer), each tool at ``tool:<name>``,
and each node at ``ended:<node>`` once its turn ended (before the orchestrator stores that)
(see ``_program_kit``); each tool logs its call, keyed by its idempotency key.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from _program_kit import ScriptModel, effect, manager_or_none, pause
from strands import Agent, ToolContext, tool
from strands.hooks import AfterInvocationEvent
from strands.multiagent import GraphBuilder, Swarm


class NodeModel(ScriptModel):
    """A node's scripted model, pausing at ``model:<node>:<n>``."""

    def __init__(self, name: str, script: list[dict[str, Any]]) -> None:
        super().__init__(script)
        self.name = name

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        pause(f"model:{self.name}:{sum(1 for m in messages if m['role'] == 'assistant')}")
        async for event in super().stream(messages, *args, **kwargs):
            yield event


def make_tool(name: str, answer: str) -> Any:
    @tool(name=name, context=True)
    def run(item: str, tool_context: ToolContext) -> str:
        """A tool with a side effect.

        Args:
            item: What it works on.
        """
        effect(tool_context, name)
        return f"{answer} {item}"

    return run


def node(name: str, script: list[dict[str, Any]], tools: list[Any], description: str) -> Agent:
    model = NodeModel(name, script)
    made = Agent(name=name, description=description, model=model, tools=tools, system_prompt=f"You are {name}.", callback_handler=None)
    made.hooks.add_callback(AfterInvocationEvent, lambda event: pause(f"ended:{name}"))  # the node's turn ended
    return made


def swarm(store: str) -> Any:
    triage = node(
        "triage",
        [
            {"tools": [("tu-1", "find_order", {"item": "order 7"})]},
            {"tools": [("tu-2", "handoff_to_agent", {"agent_name": "billing", "message": "Refund order 7", "context": {"order": 7}})]},
            {"text": "Handed off to billing."},
        ],
        [make_tool("find_order", "found")],
        "Routes requests.",
    )
    billing = node(
        "billing",
        [
            {"tools": [("tu-1", "refund", {"item": "order 7"})]},
            {"text": "Refunding.", "tools": [("tu-2", "notify", {"item": "customer"})]},
            {"text": "Your refund of 20 EUR is on its way."},
        ],
        [make_tool("refund", "refunded"), make_tool("notify", "notified")],
        "Handles refunds.",
    )
    team = Swarm([triage, billing], entry_point=triage, max_handoffs=5, session_manager=manager_or_none("ticket-1", store))
    return team("I want my money back"), billing


def graph(store: str) -> Any:
    research = node(
        "research",
        [{"tools": [("tu-1", "search", {"item": "moon"})]}, {"text": "CLAIM: the moon is 384400 km away."}],
        [make_tool("search", "searched")],
        "Researches.",
    )
    write = node(
        "write",
        [
            {"tools": [("tu-1", "draft", {"item": "moon"})]},
            {"tools": [("tu-2", "publish", {"item": "moon"})]},
            {"text": "The moon is about 384,400 km from Earth."},
        ],
        [make_tool("draft", "drafted"), make_tool("publish", "published")],
        "Writes.",
    )
    builder = GraphBuilder()
    builder.add_node(research, "research")
    builder.add_node(write, "write")
    builder.add_edge("research", "write")
    builder.set_entry_point("research")
    manager = manager_or_none("report-1", store)
    if manager is not None:
        builder.set_session_manager(manager)
    return builder.build()("How far is the moon?"), write


result, last = {"swarm": swarm, "graph": graph}[sys.argv[1]](sys.argv[2])
history = getattr(result, "node_history", None) or getattr(result, "execution_order", [])
print(json.dumps({"status": result.status.value, "nodes": [n.node_id for n in history], "usage": result.accumulated_usage["totalTokens"]}))
for node_id, node_result in sorted(result.results.items()):
    print(json.dumps({"node": node_id, "status": node_result.status.value, "text": str(node_result.result).strip()}))
for message in last.messages:
    print(json.dumps({k: v for k, v in message.items() if k not in ("tracking_id", "metadata")}, sort_keys=True))
