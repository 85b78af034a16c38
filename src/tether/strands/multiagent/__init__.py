"""Strands' ``strands.multiagent`` on Tether (see :mod:`tether.strands`): ``GraphBuilder``,
``Swarm`` and their results, run by Tether's graphs and swarms (:mod:`tether.multiagent`), with
Strands' ``multiAgent`` snapshots both ways."""

from __future__ import annotations

from .base import MultiAgentBase, MultiAgentResult, NodeResult, Status
from .graph import EdgeCondition, Graph, GraphBuilder, GraphEdge, GraphNode, GraphResult, GraphState
from .swarm import Swarm, SwarmNode, SwarmResult

__all__ = [
    "EdgeCondition",
    "Graph",
    "GraphBuilder",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
    "MultiAgentBase",
    "MultiAgentResult",
    "NodeResult",
    "Status",
    "Swarm",
    "SwarmNode",
    "SwarmResult",
]
