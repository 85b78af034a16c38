"""The kinds of run :class:`~tether.temporal.TetherClient` starts and reads: agent, graph, swarm.

A kind says what differs between them on the client's side: the workflow that runs it, the
parameters that start it on a task or a snapshot (graphs and swarms; an agent run starts on a
prompt, see :meth:`TetherClient.start`), how its workflow's result becomes the result a local
call returns, and how its ``snapshot`` query's answer becomes the snapshot a local object takes.
The client has one method per operation (``start_run``, ``run_result``, ``run_snapshot``) that
takes the kind's name; adding a run kind means adding one :class:`RunKind` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._json import json_copy
from ..result import AgentResult
from ..snapshot import Snapshot
from .claimcheck import expand_message
from .payloads import check_compact, expand_state
from .policy import PayloadPolicy
from .shapes import WORKFLOW_NAME
from .wire import snapshot_of


@dataclass(frozen=True)
class RunKind:
    """One kind of run: its name and its workflow; subclasses read its results and snapshots."""

    name: str
    workflow: str

    def result(self, payloads: PayloadPolicy, raw: dict[str, Any], run_id: str) -> Any:
        """The result a local call returns, of the workflow's result ``raw``."""
        raise NotImplementedError

    def snapshot(self, payloads: PayloadPolicy, live: dict[str, Any], app_data: dict[str, Any] | None) -> Any:
        """The local snapshot of the ``snapshot`` query's answer ``live``."""
        raise NotImplementedError


@dataclass(frozen=True)
class AgentKind(RunKind):
    """An agent's invocation (``tether.agent``): an :class:`~tether.AgentResult`, a :class:`~tether.Snapshot`."""

    def result(self, payloads: PayloadPolicy, raw: dict[str, Any], run_id: str) -> AgentResult:
        from ..metrics import Metrics

        blobs = payloads.blobs
        message = raw.get("message")
        state = raw["state"] if "state" in raw else expand_state(blobs, raw["run"].get("state"))  # "state": older workers
        return AgentResult(
            raw["stop_reason"],
            None if message is None else expand_message(blobs, message),
            Metrics(raw["metrics"], raw.get("invocation")),
            state or {},
        )

    def snapshot(self, payloads: PayloadPolicy, live: dict[str, Any], app_data: dict[str, Any] | None) -> Snapshot:
        return snapshot_of(payloads.blobs, live["run"], app_data)


@dataclass(frozen=True)
class MultiAgentKind(RunKind):
    """A graph (``tether.graph``) or swarm (``tether.swarm``) run: its result and snapshot are a
    local graph's or swarm's; it starts on a task or on a local-shape snapshot."""

    order_key: str
    """The snapshot's key of the order of executions (``execution_order``, ``node_history``)."""

    def params(
        self, payloads: PayloadPolicy, name: str, task: Any, snapshot: dict[str, Any] | None, **common: Any
    ) -> dict[str, Any]:
        """The workflow's parameters: the name, ``common`` (``config``, ``run_id``), the task
        (checked and made compact) or the snapshot (in the Temporal shape), then ``options``."""
        from ..multiagent.graph import _check_task

        options = common.pop("options")
        checked = None if task is None else json_copy(_check_task(task), "task")
        params = {self.name: name, **common, "task": None if checked is None else self._compact_task(payloads, checked)}
        params["snapshot"] = None if snapshot is None else self._to_temporal(payloads, snapshot)
        params["options"] = options
        return params

    def result(self, payloads: PayloadPolicy, raw: dict[str, Any], run_id: str) -> Any:
        from ..multiagent.state import GraphRunState

        local = self.snapshot(payloads, raw, None)
        return self._result(GraphRunState(local["state"], list(local[self.order_key])), run_id)

    def _compact_task(self, payloads: PayloadPolicy, task: Any) -> Any:
        raise NotImplementedError

    def _to_temporal(self, payloads: PayloadPolicy, snapshot: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _result(self, run: Any, run_id: str) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class GraphKind(MultiAgentKind):
    """A graph run: its task travels as a blob reference when large."""

    def _compact_task(self, payloads: PayloadPolicy, task: Any) -> Any:
        return payloads.offload(task, "task")

    def _to_temporal(self, payloads: PayloadPolicy, snapshot: dict[str, Any]) -> dict[str, Any]:
        from .graph_wire import graph_to_temporal

        return graph_to_temporal(payloads, snapshot)

    def snapshot(self, payloads: PayloadPolicy, live: dict[str, Any], app_data: dict[str, Any] | None) -> dict[str, Any]:
        from .graph_wire import graph_to_local

        return graph_to_local(payloads.blobs, live)

    def _result(self, run: Any, run_id: str) -> Any:
        from ..multiagent.graph import graph_result

        return graph_result(run, run_id)


@dataclass(frozen=True)
class SwarmKind(MultiAgentKind):
    """A swarm run: its task travels inline (it must be small enough)."""

    def _compact_task(self, payloads: PayloadPolicy, task: Any) -> Any:
        check_compact(task, "task")
        return task

    def _to_temporal(self, payloads: PayloadPolicy, snapshot: dict[str, Any]) -> dict[str, Any]:
        from .swarm_wire import swarm_to_temporal

        return swarm_to_temporal(payloads, snapshot)

    def snapshot(self, payloads: PayloadPolicy, live: dict[str, Any], app_data: dict[str, Any] | None) -> dict[str, Any]:
        from .swarm_wire import swarm_to_local

        return swarm_to_local(payloads.blobs, live)

    def _result(self, run: Any, run_id: str) -> Any:
        from ..multiagent.swarm import swarm_result

        return swarm_result(run, run_id)


KINDS: dict[str, RunKind] = {
    "agent": AgentKind("agent", WORKFLOW_NAME),
    "graph": GraphKind("graph", "tether.graph", "execution_order"),
    "swarm": SwarmKind("swarm", "tether.swarm", "node_history"),
}
"""The run kinds by name."""


__all__ = ["KINDS", "AgentKind", "GraphKind", "MultiAgentKind", "RunKind", "SwarmKind"]
