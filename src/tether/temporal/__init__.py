"""Tether agents as durable Temporal workflows (the ``temporal`` extra: ``pip install tether[temporal]``).

- :class:`AgentRegistry`: agent factories by name; workers rebuild agents from name + JSON config.
- :func:`create_worker` / :class:`TetherPlugin`: a worker serving the agent workflow and activities.
- :class:`TetherClient`: start/execute runs, answer interrupts, read snapshots, promote local runs.
- :class:`BlobStore`: the content-addressed store that keeps conversation content out of history.

Importing this package imports ``temporalio``; ``import tether`` never does.
"""

from .activities import TetherActivities
from .blobs import BlobStore, ref_of
from .client import TetherClient
from .registry import AgentFactory, AgentRegistry
from .wire import carried_from_run, run_from_checkpoint, run_from_snapshot, snapshot_of
from .worker import TetherPlugin, create_worker
from .workflow import WORKFLOW_NAME, AgentWorkflow

__all__ = [
    "WORKFLOW_NAME",
    "AgentFactory",
    "AgentRegistry",
    "AgentWorkflow",
    "BlobStore",
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
