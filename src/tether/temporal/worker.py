"""Worker helpers: register the agent, swarm and graph workflows and their activities on a task queue.

``create_worker(client, "agents", registry, blobs)`` returns a ready ``temporalio`` worker;
``TetherPlugin(registry, blobs)`` does the same through Temporal's plugin mechanism. The
workflow sandbox passes ``tether`` (and pydantic) through: the loop core is deterministic
and pure, so re-importing it per workflow would only cost time.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client
from temporalio.plugin import SimplePlugin
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from .activities import TetherActivities
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT
from .graph_activities import GraphActivities
from .graph_workflow import GraphWorkflow
from .payloads import DEFAULT_MAX_VALUE_BYTES
from .registry import AgentRegistry
from .swarm_activities import SwarmActivities
from .swarm_workflow import SwarmWorkflow
from .workflow import AgentWorkflow


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner with Tether passed through."""
    return SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("tether", "pydantic", "pydantic_core"))


def create_worker(
    client: Client,
    task_queue: str,
    registry: AgentRegistry,
    blobs: BlobStore,
    *,
    inline_limit: int = DEFAULT_INLINE_LIMIT,
    max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
    **worker_options: Any,
) -> Worker:
    """A worker serving Tether agent runs on ``task_queue``.

    Args:
        client: A connected Temporal client.
        task_queue: The task queue of the agent runs.
        registry: The agent factories (the same on every worker of the queue).
        blobs: The blob store shared by every worker and client of the runs.
        inline_limit: Values larger than this (bytes of JSON) travel as blob references.
        max_value_bytes: The hard limit of one value of a run; a larger one fails the run with
            ``PayloadTooLargeError`` naming it (None: no limit).
        **worker_options: Passed to ``temporalio.worker.Worker`` (see the README's "Temporal
            operations" for the recommended ones, e.g. ``sticky_queue_schedule_to_start_timeout``).
    """
    activities = TetherActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
    swarms = SwarmActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
    graphs = GraphActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentWorkflow, SwarmWorkflow, GraphWorkflow],
        activities=[*activities.all(), *swarms.all(), *graphs.all()],
        workflow_runner=workflow_runner(),
        **worker_options,
    )


class TetherPlugin(SimplePlugin):
    """A worker plugin adding the agent workflow and activities (``Worker(..., plugins=[...])``)."""

    def __init__(
        self,
        registry: AgentRegistry,
        blobs: BlobStore,
        *,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
    ) -> None:
        """The plugin; its parameters are those of :func:`create_worker`.

        Args:
            registry: The agent factories (the same on every worker of the queue).
            blobs: The blob store shared by every worker and client of the runs.
            inline_limit: Values larger than this (bytes of JSON) travel as blob references.
            max_value_bytes: The hard limit of one value of a run (None: no limit).
        """
        activities = TetherActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
        swarms = SwarmActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
        graphs = GraphActivities(registry, blobs, inline_limit=inline_limit, max_value_bytes=max_value_bytes)
        super().__init__(
            "tether.TetherPlugin",
            activities=[*activities.all(), *swarms.all(), *graphs.all()],
            workflows=[AgentWorkflow, SwarmWorkflow, GraphWorkflow],
            workflow_runner=workflow_runner(),
        )


__all__ = ["TetherPlugin", "create_worker", "workflow_runner"]
