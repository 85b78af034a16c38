"""Strands' metrics of a cut-off turn, carried over to the process that finishes it.

Strands' ``EventLoopMetrics`` (what ``result.metrics`` is) live in the process: a turn finished
after a crash would count only the calls of the restarting process, so a program reading
``result.metrics.tool_metrics["lookup"]`` fails for a tool whose results were recorded before the
crash (Strands' checkpoint module lists this among its "V0 known limitations"). So the session
manager stores a :func:`snapshot` of them with the run at each cycle boundary of a turn (the turn's
start, each tool-result message), and the agent restored to finish a cut-off turn starts from it
(:func:`restore`); the cut-off cycle is then counted as in an uninterrupted run: Strands counts the
cycle and the calls it makes, :func:`count_recorded` each recorded result the executor returns
instead of running the tool. The resumed turn's ``result.metrics`` then has the uninterrupted
run's cycle count and tool metrics (names, call, success and error counts; durations are this
process's, a recorded call counts 0 s) and accumulated usage: the recorded model response the
cut-off cycle reuses counts the usage stored in its ``metadata`` (:func:`recorded_usage`; it came
after the last snapshot, so neither the snapshot nor the run's stored usage has it), and the
reused message keeps that metadata, as in the uninterrupted conversation. A tool's metrics keep its last call's name and id,
not its input (the input is in the conversation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from strands.telemetry.metrics import ToolMetrics, Trace

if TYPE_CHECKING:
    from strands import Agent
    from strands.telemetry.metrics import EventLoopMetrics
    from strands.types.tools import ToolResult, ToolUse

_USAGE = ("inputTokens", "outputTokens", "totalTokens")
USAGE_FIELDS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens", "totalTokens": "total_tokens"}
"""Strands' usage keys -> the run metrics' (``RunState.metrics["usage"]``)."""


def snapshot(metrics: EventLoopMetrics) -> dict[str, Any]:
    """What :func:`restore` needs of ``metrics``, as JSON."""
    usage = cast("dict[str, int]", metrics.accumulated_usage)
    return {
        "cycle_count": metrics.cycle_count,
        "tool_metrics": {
            name: {
                "tool": {"toolUseId": str(tool.tool.get("toolUseId", "")), "name": name},
                "call_count": tool.call_count,
                "success_count": tool.success_count,
                "error_count": tool.error_count,
                "total_time": tool.total_time,
            }
            for name, tool in metrics.tool_metrics.items()
        },
        "accumulated_usage": {key: int(usage.get(key, 0)) for key in _USAGE},
        "latency_ms": int(metrics.accumulated_metrics.get("latencyMs", 0)),
    }


def restore(metrics: EventLoopMetrics, stored: dict[str, Any]) -> dict[str, int]:
    """Start ``metrics`` (a restored agent's, unused yet) from a :func:`snapshot`; the usage it adds."""
    metrics.cycle_count = int(stored.get("cycle_count", 0))
    for name, item in (stored.get("tool_metrics") or {}).items():
        tool = cast("ToolUse", {**item["tool"], "input": {}})
        counts = {key: item[key] for key in ("call_count", "success_count", "error_count", "total_time")}
        metrics.tool_metrics[name] = ToolMetrics(tool, **counts)
    usage = {key: int((stored.get("accumulated_usage") or {}).get(key, 0)) for key in _USAGE}
    accumulated = cast("dict[str, int]", metrics.accumulated_usage)
    for key, value in usage.items():
        accumulated[key] = accumulated.get(key, 0) + value
    metrics.accumulated_metrics["latencyMs"] += int(stored.get("latency_ms", 0))
    return usage


def recorded_usage(message: Any) -> tuple[Any, Any]:
    """The usage and metrics stored in a recorded model response's ``metadata`` (zeros when absent)."""
    found = message.get("metadata") if isinstance(message, dict) else None
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    stored: dict[str, Any] = metadata["usage"] if isinstance(metadata.get("usage"), dict) else {}
    timing: dict[str, Any] = metadata["metrics"] if isinstance(metadata.get("metrics"), dict) else {}
    return {key: _count(stored.get(key)) for key in _USAGE}, {"latencyMs": _count(timing.get("latencyMs"))}


def _count(value: Any) -> int:
    """A stored count; 0 for anything but a non-negative number (a message's metadata is the model's)."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 2**63 else 0


def count_recorded(agent: Agent, use: ToolUse, result: ToolResult, cycle_trace: Trace | None) -> None:
    """Count a call the executor answers with its recorded result, as Strands counts a call it runs."""
    trace = Trace(f"Tool: {use['name']}", parent_id=cycle_trace.id if cycle_trace is not None else None, raw_name=use["name"])
    message: Any = {"role": "user", "content": [{"toolResult": result}]}
    agent.event_loop_metrics.add_tool_usage(use, 0.0, trace, result.get("status") == "success", message)


__all__ = ["USAGE_FIELDS", "count_recorded", "recorded_usage", "restore", "snapshot"]
