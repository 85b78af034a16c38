"""A Strands Graph with the provider (``GraphBuilder.set_session_manager``): research -> check -> write.

Usage: ``graph.py STORE [--plain]``. Each node's model logs its call to ``$TRIP_LOG`` and pauses at
``model:<node>`` (see ``_program_kit``). Killed inside a node and started again, the graph resumes from
that node: the nodes completed before the kill do not run again.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from _program_kit import ScriptModel, manager_or_none, pause
from strands import Agent
from strands.multiagent import GraphBuilder


class NodeModel(ScriptModel):
    """One node's model: logs and pauses under the node's name, then answers its one line."""

    def __init__(self, name: str, answer: str) -> None:
        super().__init__([{"text": answer}])
        self.name = name

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        with open(os.environ["TRIP_LOG"], "a") as log:
            log.write(json.dumps({"key": self.name, "tool": "model"}) + "\n")
        pause(f"model:{self.name}")
        async for event in super().stream([], *args, **kwargs):
            yield event


def node(name: str, answer: str) -> Agent:
    return Agent(name=name, model=NodeModel(name, answer), system_prompt=f"You are the {name}.", callback_handler=None)


builder = GraphBuilder()
builder.add_node(node("research", "CLAIM: the moon is 384400 km away."), "research")
builder.add_node(node("check", "Verified."), "check")
builder.add_node(node("write", "The moon is about 384,400 km from Earth."), "write")
builder.add_edge("research", "check")
builder.add_edge("check", "write")
builder.set_entry_point("research")
builder.set_max_node_executions(10)
manager = manager_or_none("graph-1", sys.argv[1])
if manager is not None:
    builder.set_session_manager(manager)
result = builder.build()("How far is the moon?")
print(json.dumps({"status": result.status.value, "order": [n.node_id for n in result.execution_order]}))
for node_id, node_result in sorted(result.results.items()):
    print(json.dumps({"node": node_id, "status": node_result.status.value, "text": str(node_result.result).strip()}))
