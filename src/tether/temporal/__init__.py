"""Tether agents as durable Temporal workflows (the ``temporal`` extra: ``pip install tether[temporal]``).

- :class:`AgentRegistry`: agent, graph and swarm factories by name; workers rebuild them from
  name + JSON config (nested names such as ``"lead/researcher"`` reach agent tools, graph nodes
  and swarm members).
- :func:`create_worker` / :class:`TetherPlugin`: a worker serving the agent, graph and swarm
  workflows and their activities.
- :class:`TetherClient`: start/execute runs (agents, graphs, swarms), answer interrupts, read
  snapshots, promote local runs, fork an agent run at a step (:class:`ForkStep`).
- :class:`BlobStore`: the content-addressed store that keeps conversation content out of history.

Importing this package imports ``temporalio``; ``import tether`` never does.
"""

from .activities import TetherActivities
from .blobs import BlobStore, ref_of
from .client import TetherClient
from .fork import ForkStep
from .graph_activities import GraphActivities
from .graph_workflow import GRAPH_WORKFLOW_NAME, GraphWorkflow
from .registry import AgentFactory, AgentRegistry, GraphFactory, SwarmFactory
from .swarm_activities import SwarmActivities
from .swarm_workflow import SWARM_WORKFLOW_NAME, SwarmWorkflow
from .wire import carried_from_run, run_from_checkpoint, run_from_snapshot, snapshot_of
from .worker import TetherPlugin, create_worker
from .workflow import WORKFLOW_NAME, AgentWorkflow

__all__ = [
    "GRAPH_WORKFLOW_NAME",
    "SWARM_WORKFLOW_NAME",
    "WORKFLOW_NAME",
    "AgentFactory",
    "AgentRegistry",
    "AgentWorkflow",
    "BlobStore",
    "ForkStep",
    "GraphActivities",
    "GraphFactory",
    "GraphWorkflow",
    "SwarmActivities",
    "SwarmFactory",
    "SwarmWorkflow",
    "TetherActivities",
    "TetherClient",
    "TetherPlugin",
    "carried_from_run",
    "create_worker",
    "ref_of",
    "run_from_checkpoint",
    "run_from_snapshot",
    "snapshot_of",
]
