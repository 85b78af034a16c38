"""Worker helpers: register the agent, swarm and graph workflows and their activities on a task queue.

``create_worker(client, "agents", registry, blobs)`` returns a ready ``temporalio`` worker;
``TetherPlugin(registry, blobs)`` does the same through Temporal's plugin mechanism. The
workflow sandbox passes ``tether`` (and pydantic) through: the loop core is deterministic
and pure, so re-importing it per workflow would only cost time.
"""

from __future__ import annotations

from typing import Any, Unpack

from temporalio.client import Client
from temporalio.plugin import SimplePlugin
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from .activities import TetherActivities
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT
from .compensation_workflow import CompensationWorkflow
from .graph_activities import GraphActivities
from .graph_workflow import GraphWorkflow
from .payloads import DEFAULT_MAX_VALUE_BYTES
from .policy import PayloadLimits, PayloadPolicy
from .registry import AgentRegistry
from .swarm_activities import SwarmActivities
from .swarm_workflow import SwarmWorkflow
from .workflow import AgentWorkflow

WORKFLOWS: list[type] = [AgentWorkflow, SwarmWorkflow, GraphWorkflow, CompensationWorkflow]
"""The workflow classes a Tether worker serves."""


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner with Tether passed through."""
    return SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default.with_passthrough_modules("tether", "pydantic", "pydantic_core"))


def all_activities(registry: AgentRegistry, payloads: PayloadPolicy) -> list[Any]:
    """The agent, swarm and graph activities of a worker serving ``registry`` under ``payloads``."""
    sets = (TetherActivities(registry, payloads), SwarmActivities(registry, payloads), GraphActivities(registry, payloads))
    return [activity for each in sets for activity in each.all()]


def create_worker(
    client: Client,
    task_queue: str,
    registry: AgentRegistry,
    blobs: BlobStore | PayloadPolicy,
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
        blobs: The blob store shared by every worker and client of the runs, or a
            :class:`~tether.temporal.policy.PayloadPolicy` (the store and both limits).
        inline_limit: Values larger than this (bytes of JSON) travel as blob references.
        max_value_bytes: The hard limit of one value of a run; a larger one fails the run with
            ``PayloadTooLargeError`` naming it (None: no limit).
        **worker_options: Passed to ``temporalio.worker.Worker`` (see the README's "Temporal
            operations" for the recommended ones, e.g. ``sticky_queue_schedule_to_start_timeout``).
    """
    payloads = PayloadPolicy.of(blobs, inline_limit, max_value_bytes)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=all_activities(registry, payloads),
        workflow_runner=workflow_runner(),
        **worker_options,
    )


class TetherPlugin(SimplePlugin):
    """A worker plugin adding the agent workflow and activities (``Worker(..., plugins=[...])``)."""

    def __init__(self, registry: AgentRegistry, blobs: BlobStore | PayloadPolicy, **limits: Unpack[PayloadLimits]) -> None:
        """The plugin; its parameters are those of :func:`create_worker`.

        Args:
            registry: The agent, graph and swarm factories (the same on every worker of the queue).
            blobs: The blob store shared by every worker and client of the runs (with the
                ``inline_limit`` and ``max_value_bytes`` keywords), or a ``PayloadPolicy``.
        """
        super().__init__(
            "tether.TetherPlugin",
            activities=all_activities(registry, PayloadPolicy.of(blobs, **limits)),
            workflows=WORKFLOWS,
            workflow_runner=workflow_runner(),
        )


__all__ = ["WORKFLOWS", "TetherPlugin", "all_activities", "create_worker", "workflow_runner"]
