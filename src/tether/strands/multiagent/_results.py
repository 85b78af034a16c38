"""Tether's multi-agent outcomes seen as Strands' results: a Tether node result (an
:class:`~tether.AgentResult`, a nested graph's result or a callable's text) becomes a Strands
:class:`~tether.strands.multiagent.base.NodeResult` with its usage in Strands' keys.

One direction only (Tether -> Strands shapes); reading Strands' JSON back is
:meth:`NodeResult.from_dict` and :mod:`._payload`.
"""

from __future__ import annotations

from typing import Any

from ...metrics import Metrics
from ...multiagent.results import GraphResult as TetherGraphResult
from ...multiagent.results import NodeResult as TetherNodeResult
from ...result import AgentResult
from ..agent.agent_result import AgentResult as StrandsAgentResult
from .base import MultiAgentResult, NodeResult, Status, add_usage, zero_usage

_EMPTY_METRICS: dict[str, Any] = {
    "cycle_count": 0,
    "tool_call_count": 0,
    "model_call_count": 0,
    "model_latency_ms": 0.0,
    "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    "tools": {},
}


def text_result(text: str) -> AgentResult:
    """A callable node's text as an agent result (Strands' nodes are agents or orchestrators)."""
    return AgentResult("end_turn", {"role": "assistant", "content": [{"text": text}]}, Metrics(dict(_EMPTY_METRICS)))  # type: ignore[arg-type]


def usage_of(result: AgentResult) -> tuple[dict[str, int], int]:
    """An agent result's tokens in Strands' keys, and its model latency in whole milliseconds."""
    usage = result.metrics.usage
    return (
        {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"], "totalTokens": usage["total_tokens"]},
        round(result.metrics.model_latency_ms),
    )


def node_result(result: Any, status: str, executions: int, error: str | None = None) -> NodeResult:
    """A Strands node result of a Tether node's latest ``result`` (``None`` with ``error``: it failed)."""
    if result is None:
        return NodeResult(Exception(error or "node failed"), status=Status.FAILED, execution_count=executions)
    if isinstance(result, str):
        result = text_result(result)
    if isinstance(result, TetherGraphResult):
        nested = multi_agent_result(result)
        return NodeResult(
            nested,
            status=Status(status),
            accumulated_usage=dict(nested.accumulated_usage),
            accumulated_metrics=dict(nested.accumulated_metrics),
            execution_count=executions,
            interrupts=list(nested.interrupts),
        )
    usage, latency = usage_of(result)
    return NodeResult(
        result if isinstance(result, StrandsAgentResult) else StrandsAgentResult.of(result),
        status=Status(status),
        accumulated_usage=usage,
        accumulated_metrics={"latencyMs": latency},
        execution_count=executions,
        interrupts=list(result.interrupts),
    )


def node_results(results: dict[str, TetherNodeResult], error: str | None) -> dict[str, NodeResult]:
    """Strands' ``results`` of a Tether run's node results: the nodes that produced a result or failed."""
    out: dict[str, NodeResult] = {}
    for node_id, r in results.items():
        if r.status == "failed":
            out[node_id] = node_result(None, "failed", r.executions, error)
        elif r.result is not None:
            status = r.status if r.status in ("completed", "interrupted") else "completed"
            out[node_id] = node_result(r.result, status, r.executions)
    return out


def totals(results: dict[str, NodeResult]) -> tuple[dict[str, int], dict[str, Any]]:
    """The accumulated usage and metrics of node results."""
    usage = zero_usage()
    latency = 0
    for r in results.values():
        add_usage(usage, r.accumulated_usage)
        latency += int(r.accumulated_metrics.get("latencyMs", 0))
    return usage, {"latencyMs": latency}


def multi_agent_result(result: TetherGraphResult) -> MultiAgentResult:
    """A nested Tether graph's result as a Strands :class:`MultiAgentResult`."""
    results = node_results(result.results, result.error)
    usage, metrics = totals(results)
    return MultiAgentResult(
        status=Status(result.status),
        results=results,
        accumulated_usage=usage,
        accumulated_metrics=metrics,
        execution_count=len(result.execution_order),
        interrupts=list(result.interrupts),
    )


__all__ = ["multi_agent_result", "node_result", "node_results", "text_result", "totals", "usage_of"]
