"""``GET /metrics``: the server's figures in the Prometheus text format (version 0.0.4).

- ``tether_runs{status="..."}`` (gauge): the store's top-level runs by status (a run executing in a
  live process is ``running``; one whose owner died, ``stalled``), read when scraped;
- ``tether_steps_total`` (counter): the steps the runs executing in this process committed (a
  model reply, a cycle's tool results: each a message stored);
- ``tether_step_seconds`` (histogram): the time from one committed step of a run to its next, in
  this process (a model call, or a cycle of tool calls, plus its store write);
- ``tether_takeovers_total``, ``tether_handovers_total``, ``tether_runs_failed_total`` (counters):
  runs this process took over from a dead or stopped server, handed over at shutdown, saw fail.

Counters are this process's since it started (Prometheus sums them over a fleet); the run gauge
is the store's, the same from every process. The endpoint needs the token like the API.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from ..durable.store import RunStore

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""The upper bounds (seconds) of the step latency histogram."""
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """This process's counters and the step latency histogram."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.buckets = [0] * (len(BUCKETS) + 1)
        self.latency_sum = 0.0

    def count(self, name: str) -> None:
        """Add one to counter ``name`` (``steps``, ``takeovers``, ``handovers``, ``runs_failed``)."""
        self.counts[name] += 1

    def step(self, seconds: float) -> None:
        """A step committed ``seconds`` after the run's previous one."""
        self.counts["steps"] += 1
        self.buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.latency_sum += seconds

    def render(self, statuses: Counter[str]) -> str:
        """The text exposition, with ``statuses`` the store's runs by status."""
        lines = ["# HELP tether_runs Top-level runs in the store by status.", "# TYPE tether_runs gauge"]
        lines += [f'tether_runs{{status="{status}"}} {statuses[status]}' for status in sorted(statuses)]
        for name, help_text in (
            ("steps", "Steps committed by the runs executing in this process."),
            ("takeovers", "Runs this process took over from a dead or stopped server."),
            ("handovers", "Runs this process handed over at shutdown."),
            ("runs_failed", "Runs whose turn failed in this process."),
        ):
            lines += [
                f"# HELP tether_{name}_total {help_text}",
                f"# TYPE tether_{name}_total counter",
                f"tether_{name}_total {self.counts[name]}",
            ]
        lines += ["# HELP tether_step_seconds Time from a run's committed step to its next.", "# TYPE tether_step_seconds histogram"]
        total = 0
        for bound, count in zip((*BUCKETS, None), self.buckets, strict=True):
            total += count
            lines.append(f'tether_step_seconds_bucket{{le="{"+Inf" if bound is None else bound}"}} {total}')
        lines += [f"tether_step_seconds_sum {self.latency_sum:.6f}", f"tether_step_seconds_count {total}"]
        return "\n".join(lines) + "\n"


def metrics_routes(store: RunStore, metrics: Metrics, executing: Callable[[str], bool]) -> list[BaseRoute]:
    """``GET /metrics`` over ``store`` and this process's ``metrics``."""

    async def scrape(request: Request) -> Response:
        def statuses() -> Counter[str]:
            runs = [run for run in store.list_runs() if run.parent_run_id is None]
            return Counter("running" if executing(run.run_id) else run.status for run in runs)  # list_runs: stalled when ownerless

        counted: Any = await asyncio.to_thread(statuses)
        return PlainTextResponse(metrics.render(counted), media_type=CONTENT_TYPE)

    return [Route("/metrics", scrape, methods=["GET"])]


__all__ = ["BUCKETS", "Metrics", "metrics_routes"]
