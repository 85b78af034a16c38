"""Strands' ``strands.multiagent.base`` on Tether: ``Status``, ``NodeResult``, ``MultiAgentResult``
and ``MultiAgentBase``, with Strands' fields, defaults and JSON shapes.

The runs are Tether's (:mod:`tether.multiagent`): :class:`~tether.strands.multiagent.Graph`
and :class:`~tether.strands.multiagent.Swarm` wrap a Tether graph or swarm and present its
results in these types. ``to_dict``/``from_dict`` write and read what Strands writes and reads
(a node result's ``result`` is ``{"type": "agent_result"|"multiagent_result"|"exception", ...}``).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..._sync import run_sync
from ...errors import ResultError
from ...interrupts import Interrupt
from ...result import AgentResult
from ...snapshot import Snapshot
from . import _snapshot


class Status(Enum):
    """Execution status of a graph, a swarm and their nodes (Strands' values)."""

    PENDING = "pending"
    DISPATCHED = "dispatched"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


def zero_usage() -> dict[str, int]:
    """Strands' empty ``Usage``."""
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def parse_usage(data: Any) -> dict[str, int]:
    """A ``Usage`` dict read from JSON (missing figures are 0; cache counters kept when present)."""
    data = data if isinstance(data, dict) else {}
    usage = {k: int(data.get(k) or 0) for k in ("inputTokens", "outputTokens", "totalTokens")}
    for k in ("cacheReadInputTokens", "cacheWriteInputTokens"):
        if k in data:
            usage[k] = int(data[k] or 0)
    return usage


def add_usage(target: dict[str, int], source: dict[str, int]) -> None:
    """Add ``source``'s figures into ``target`` (as Strands accumulates node usage)."""
    for k, v in source.items():
        target[k] = target.get(k, 0) + v


def interrupt_dict(interrupt: Interrupt) -> dict[str, Any]:
    """An interrupt in Strands' shape (``id``, ``name``, ``reason``, ``response``)."""
    return {"id": interrupt.id, "name": interrupt.name, "reason": interrupt.reason, "response": None}


def interrupt_from(data: Any, where: str) -> Interrupt:
    """An interrupt read from Strands' (or Tether's) record."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(data.get("name"), str):
        raise ResultError(f"{where}: an interrupt must be an object with string id and name, got {data!r:.80}")
    return Interrupt(data["id"], data["name"], data.get("reason"), str(data.get("source") or "tool"), data.get("tool_use_id"))


@dataclass
class NodeResult:
    """The result of one node: an agent's :class:`~tether.AgentResult`, a nested
    :class:`MultiAgentResult`, or the exception that failed it.

    Attributes:
        result: What the node's latest execution produced.
        execution_time: Milliseconds (Tether does not time nodes: 0).
        status: The node's :class:`Status`.
        accumulated_usage: Tokens of this node (``inputTokens``, ``outputTokens``, ``totalTokens``).
        accumulated_metrics: ``{"latencyMs": ...}``.
        execution_count: How many executions it counts.
        interrupts: The interrupts it waits on.
    """

    result: AgentResult | MultiAgentResult | Exception
    execution_time: int = 0
    status: Status = Status.PENDING
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, Any] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        return str(self.result)

    def get_agent_results(self) -> list[AgentResult]:
        """Every :class:`~tether.AgentResult` of this node (a nested result's, flattened)."""
        if isinstance(self.result, Exception):
            return []
        if isinstance(self.result, AgentResult):
            return [self.result]
        found: list[AgentResult] = []
        for nested in self.result.results.values():
            found.extend(nested.get_agent_results())
        return found

    def to_dict(self) -> dict[str, Any]:
        """The node result as JSON, in Strands' shape."""
        result: dict[str, Any]
        if isinstance(self.result, Exception):
            result = {"type": "exception", "message": str(self.result)}
        else:
            result = self.result.to_dict()
        return {
            "result": result,
            "execution_time": self.execution_time,
            "status": self.status.value,
            "accumulated_usage": dict(self.accumulated_usage),
            "accumulated_metrics": dict(self.accumulated_metrics),
            "execution_count": self.execution_count,
            "interrupts": [interrupt_dict(i) for i in self.interrupts],
        }

    @classmethod
    def from_dict(cls, data: Any) -> NodeResult:
        """Read :meth:`to_dict`'s JSON (Strands' or Tether's).

        Raises:
            ResultError: Not a node result (also a ``TypeError``, which Strands raises).
        """
        if not isinstance(data, dict) or "result" not in data:
            raise ResultError("NodeResult.from_dict: missing 'result'")
        raw = data["result"]
        kind = raw.get("type") if isinstance(raw, dict) else None
        result: AgentResult | MultiAgentResult | Exception
        if kind == "agent_result":
            result = AgentResult.from_dict(raw)
        elif kind == "exception":
            result = Exception(str(raw.get("message", "node failed")))
        elif kind == "multiagent_result":
            result = MultiAgentResult.from_dict(raw)
        else:
            raise ResultError(f"NodeResult.from_dict: unsupported result payload: {raw!r:.80}")
        try:
            status = Status(data.get("status", "pending"))
        except ValueError:
            raise ResultError(f"NodeResult.from_dict: unknown status {data.get('status')!r:.40}") from None
        metrics = data.get("accumulated_metrics")
        return cls(
            result=result,
            execution_time=int(data.get("execution_time") or 0),
            status=status,
            accumulated_usage=parse_usage(data.get("accumulated_usage")),
            accumulated_metrics={"latencyMs": (metrics or {}).get("latencyMs", 0) if isinstance(metrics, dict) else 0},
            execution_count=int(data.get("execution_count") or 0),
            interrupts=[interrupt_from(i, "NodeResult.interrupts") for i in data.get("interrupts") or []],
        )


@dataclass
class MultiAgentResult:
    """The result of a multi-agent run, with accumulated figures (Strands' fields)."""

    status: Status = Status.PENDING
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, Any] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    execution_time: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        """The interrupts if any, else each node's answer prefixed with its id (as Strands)."""
        if self.interrupts:
            return str([interrupt_dict(i) for i in self.interrupts])
        parts = []
        for node_id, node_result in self.results.items():
            text = str(node_result).removesuffix("\n")
            if text:
                parts.append(f"{node_id}: {text}")
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON, in Strands' shape (``type: multiagent_result``)."""
        return {
            "type": "multiagent_result",
            "status": self.status.value,
            "results": {k: v.to_dict() for k, v in self.results.items()},
            "accumulated_usage": dict(self.accumulated_usage),
            "accumulated_metrics": dict(self.accumulated_metrics),
            "execution_count": self.execution_count,
            "execution_time": self.execution_time,
            "interrupts": [interrupt_dict(i) for i in self.interrupts],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MultiAgentResult:
        """Read :meth:`to_dict`'s JSON.

        Raises:
            ResultError: Not a multi-agent result (also a ``TypeError``, which Strands raises).
        """
        if not isinstance(data, dict) or data.get("type") != "multiagent_result":
            got = data.get("type") if isinstance(data, dict) else type(data).__name__
            raise ResultError(f"MultiAgentResult.from_dict: unexpected type {got!r:.40}")
        try:
            status = Status(data.get("status"))
        except ValueError:
            raise ResultError(f"MultiAgentResult.from_dict: unknown status {data.get('status')!r:.40}") from None
        raw = data.get("results") or {}
        if not isinstance(raw, dict):
            raise ResultError("MultiAgentResult.from_dict: results must be an object")
        metrics = data.get("accumulated_metrics")
        return cls(
            status=status,
            results={str(k): NodeResult.from_dict(v) for k, v in raw.items()},
            accumulated_usage=parse_usage(data.get("accumulated_usage")),
            accumulated_metrics={"latencyMs": metrics.get("latencyMs", 0) if isinstance(metrics, dict) else 0},
            execution_count=int(data.get("execution_count") or 0),
            execution_time=int(data.get("execution_time") or 0),
            interrupts=[interrupt_from(i, "MultiAgentResult.interrupts") for i in data.get("interrupts") or []],
        )


class MultiAgentBase(ABC):
    """What a Strands multi-agent runnable offers: ``x(task)``, ``invoke_async``,
    ``stream_async``, ``serialize_state`` / ``deserialize_state`` and, in Strands' ``multiAgent``
    snapshot envelope, ``take_snapshot`` / ``load_snapshot``.

    Attributes:
        id: The orchestrator's id (a snapshot names it; loading checks it).
    """

    id: str

    @abstractmethod
    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> MultiAgentResult:
        """Run on ``task`` and return the result."""

    async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Run, yielding events; this default yields only ``{"result": ...}`` (as Strands')."""
        yield {"result": await self.invoke_async(task, invocation_state, **kwargs)}

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> MultiAgentResult:
        """Run synchronously (keyword arguments join ``invocation_state``, deprecated as in Strands)."""
        state = {} if invocation_state is None else invocation_state
        if kwargs:
            state.update(kwargs)
            warnings.warn("`**kwargs` parameter is deprecating, use `invocation_state` instead.", stacklevel=2)
        return run_sync(self.invoke_async(task, state))

    def serialize_state(self) -> dict[str, Any]:
        """The orchestrator's state as JSON (Strands' shape)."""
        raise NotImplementedError

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore the orchestrator's state from :meth:`serialize_state`'s JSON."""
        raise NotImplementedError

    def take_snapshot(self, *, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The orchestrator's state as a ``multiAgent`` snapshot (``data = {orchestrator_id, state}``)."""
        return _snapshot.take_snapshot(self, app_data=app_data)

    def load_snapshot(self, snapshot: Snapshot | dict[str, Any]) -> None:
        """Restore a ``multiAgent`` snapshot (a :class:`~tether.Snapshot` or its dict) taken of an
        orchestrator with this id; see :func:`tether.strands.multiagent._snapshot.load_snapshot`."""
        _snapshot.load_snapshot(self, snapshot)

    def add_hook(self, callback: Any, event_type: Any = None, **kwargs: Any) -> None:
        """Multi-agent hooks are not supported by Tether's graphs and swarms."""
        raise NotImplementedError(f"{type(self).__name__}.add_hook: multi-agent hooks are not supported on Tether")


__all__ = ["MultiAgentBase", "MultiAgentResult", "NodeResult", "Status"]
