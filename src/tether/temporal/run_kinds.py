"""The kinds of run :class:`~tether.temporal.TetherClient` starts and reads: agent, graph, swarm.

A kind says what differs between them on the client's side: the workflow that runs it, how its
workflow's result becomes the result a local call returns, and how its ``snapshot`` query's
answer becomes the snapshot a local object takes; a graph or swarm kind also says how a task and
a local snapshot start its workflow (an agent's invocation starts on a prompt instead, see
:meth:`TetherClient.start`). The client has one method per operation (``start_run``,
``run_result``, ``run_snapshot``) taking the kind's name: adding a run kind to Temporal means
adding one :class:`RunKind` to :data:`KINDS` (and its workflow and activities to the worker).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from .._json import json_copy
from ..metrics import Metrics
from ..multiagent.graph import _check_task, graph_result
from ..multiagent.state import GraphRunState
from ..multiagent.swarm import swarm_result
from ..result import AgentResult
from ..snapshot import Snapshot
from .blobs import BlobStore
from .claimcheck import expand_message
from .graph_wire import graph_to_local, graph_to_temporal
from .payloads import check_compact, expand_state
from .policy import PayloadPolicy
from .shapes import WORKFLOW_NAME, AgentRunResult, Config, MultiAgentSnapshot, WorkflowOptions
from .swarm_wire import swarm_to_local, swarm_to_temporal
from .wire import snapshot_of


@dataclass(frozen=True)
class RunKind:
    """One kind of run: its name and its workflow; subclasses read its results and snapshots."""

    name: str
    workflow: str

    def result(self, payloads: PayloadPolicy, raw: Any, run_id: str) -> Any:
        """The result a local call returns, of the workflow's result ``raw``."""
        raise NotImplementedError

    def snapshot(self, payloads: PayloadPolicy, live: Any, app_data: dict[str, Any] | None) -> Any:
        """The local snapshot of the ``snapshot`` query's answer ``live``."""
        raise NotImplementedError


@dataclass(frozen=True)
class AgentKind(RunKind):
    """An agent's invocation (``tether.agent``): an :class:`~tether.AgentResult`, a :class:`~tether.Snapshot`."""

    def result(self, payloads: PayloadPolicy, raw: AgentRunResult, run_id: str) -> AgentResult:
        blobs = payloads.blobs
        message = raw.get("message")
        legacy: Any = raw  # "state": a result of workers before the state moved into "run"
        state = legacy["state"] if "state" in legacy else expand_state(blobs, raw["run"].get("state"))
        return AgentResult(
            raw["stop_reason"],
            None if message is None else expand_message(blobs, message),
            Metrics(raw["metrics"], raw.get("invocation")),
            state or {},
        )

    def snapshot(self, payloads: PayloadPolicy, live: Any, app_data: dict[str, Any] | None) -> Snapshot:
        return snapshot_of(payloads.blobs, live["run"], app_data)


@dataclass(frozen=True)
class MultiAgentKind(RunKind):
    """A graph (``tether.graph``) or swarm (``tether.swarm``) run: its result and snapshot are a
    local graph's or swarm's; it starts on a task or on a local-shape snapshot."""

    order_key: str
    """The snapshot's key of the order of executions (``execution_order``, ``node_history``)."""
    offload_task: bool
    """The task travels as a blob reference when large (a graph's), else inline (a swarm's)."""
    to_temporal: Callable[[PayloadPolicy, Any], MultiAgentSnapshot]
    to_local: Callable[[BlobStore, MultiAgentSnapshot], MultiAgentSnapshot]
    read_result: Callable[[GraphRunState, str], Any]

    def params(
        self,
        payloads: PayloadPolicy,
        name: str,
        task: Any,
        snapshot: dict[str, Any] | None,
        *,
        config: Config,
        run_id: str,
        options: WorkflowOptions,
    ) -> dict[str, Any]:
        """The workflow's parameters: the name, config and run id, the task (checked and made
        compact) or the snapshot (in the Temporal shape), and the options."""
        checked = None if task is None else json_copy(_check_task(task), "task")
        params = {
            self.name: name,
            "config": config,
            "run_id": run_id,
            "task": None if checked is None else self._compact(payloads, checked),
        }
        params["snapshot"] = None if snapshot is None else self.to_temporal(payloads, snapshot)
        params["options"] = options
        return params

    def _compact(self, payloads: PayloadPolicy, task: Any) -> Any:
        if self.offload_task:
            return payloads.offload(task, "task")
        check_compact(task, "task")
        return task

    def result(self, payloads: PayloadPolicy, raw: Any, run_id: str) -> Any:
        local = self.snapshot(payloads, raw, None)
        return self.read_result(GraphRunState(local["state"], list(cast("list[str]", local.get(self.order_key)))), run_id)

    def snapshot(self, payloads: PayloadPolicy, live: Any, app_data: dict[str, Any] | None) -> MultiAgentSnapshot:
        return self.to_local(payloads.blobs, live)


KINDS: dict[str, RunKind] = {
    "agent": AgentKind("agent", WORKFLOW_NAME),
    "graph": MultiAgentKind("graph", "tether.graph", "execution_order", True, graph_to_temporal, graph_to_local, graph_result),
    "swarm": MultiAgentKind("swarm", "tether.swarm", "node_history", False, swarm_to_temporal, swarm_to_local, swarm_result),
}
"""The run kinds by name."""


__all__ = ["KINDS", "AgentKind", "MultiAgentKind", "RunKind"]
