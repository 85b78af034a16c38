"""Multi-agent runs: agents as tools, graphs and swarms, durable as one run of nested runs.

A nested run is an ordinary durable run whose head names its parent (``parent_run_id``) and
whose id derives from the parent's (:func:`child_run_id`), so a resumed parent finds the child
it started and resumes it from its own last step instead of redoing it.
"""

from __future__ import annotations

from ..agent_tool import AgentTool
from ..durable.ids import child_run_id
from .base import MultiAgentBase
from .graph import Graph, GraphBuilder, GraphEdge, GraphNode
from .results import GraphResult, NodeResult, SwarmResult
from .state import GraphState
from .swarm import Swarm

__all__ = [
    "AgentTool",
    "Graph",
    "GraphBuilder",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
    "MultiAgentBase",
    "NodeResult",
    "Swarm",
    "SwarmResult",
    "child_run_id",
]
