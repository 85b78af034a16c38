"""Running a Tether graph or swarm for a Strands facade: the task a call passes on (a loaded
state continues, ignoring the new task, as in Strands), and Tether's run events seen as Strands'
multi-agent stream events.

Tether's events -> Strands' (``strands.types._events``):

* ``node_start`` -> ``{"type": "multiagent_node_start", "node_id", "node_type"}``
* ``node_event`` -> ``{"type": "multiagent_node_stream", "node_id", "event"}`` (the agent's
  event as Tether's agent yields it)
* ``node_result`` -> ``{"type": "multiagent_node_stop", "node_id", "node_result"}``, then
  ``{"type": "multiagent_node_interrupt", "node_id", "interrupts"}`` if it stopped on interrupts
* a swarm's ``handoff`` -> the handing member's ``multiagent_node_stop``, then
  ``{"type": "multiagent_handoff", "from_node_ids", "to_node_ids", "message"}``
* ``result`` -> ``{"type": "multiagent_result", "result"}`` (the facade's result)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

from ...errors import ConfigurationError
from ...multiagent.base import MultiAgentBase as TetherBase
from ...multiagent.state import GraphRunState
from ._results import node_result
from .base import MultiAgentResult


def unsupported(label: str, **options: Any) -> None:
    """Refuse the Strands options Tether's graphs and swarms do not implement (rather than
    ignore them silently).

    Raises:
        ConfigurationError: Naming the option.
    """
    for name, value in options.items():
        if value:
            raise ConfigurationError(
                f"{label}({name}=...) is not supported on Tether yet: multi-agent {name} are Strands-only; "
                "use a durable run (tether.multiagent, run_id=...) for persistence"
            )


class Driver:
    """Runs the Tether graph or swarm ``inner`` for a facade and translates its events.

    Args:
        inner: The Tether graph or swarm.
        result: The facade's result of a run state.
        node_type: ``"agent"`` or ``"multiagent"``, by node id.
        catch_failures: A member that raises ends the run as ``FAILED`` with a result (a
            swarm, as Strands'), instead of re-raising (a graph, as Strands').
    """

    def __init__(
        self,
        inner: TetherBase[Any],
        result: Callable[[GraphRunState], MultiAgentResult],
        node_type: Callable[[str], str],
        *,
        catch_failures: bool = False,
    ) -> None:
        self.inner = inner
        self.result = result
        self.node_type = node_type
        self.catch_failures = catch_failures
        self.resume = False
        """A state was loaded with a frontier: the next call continues it."""
        self.reset = False
        """A finished state was loaded: the runnable reads as never run until its next call."""

    def restore(self, run: GraphRunState | None) -> None:
        """Make ``run`` the state the next call continues (None: the next call starts afresh)."""
        if run is not None:
            inner = self.inner
            inner.load_snapshot(
                {"type": inner.snapshot_type, "version": inner.snapshot_version, "state": run.data, inner.order_key: run.order}
            )
        self.resume = run is not None
        self.reset = run is None

    def current(self) -> GraphRunState | None:
        """The state of the run started or loaded last (None: none, or a finished one was loaded)."""
        return None if self.reset else self.inner._current

    async def invoke(self, task: Any) -> MultiAgentResult:
        last: dict[str, Any] | None = None
        async for event in self.stream(task):
            last = event
        assert last is not None and "result" in last
        result: MultiAgentResult = last["result"]
        return result

    async def stream(self, task: Any) -> AsyncIterator[dict[str, Any]]:
        answers = isinstance(task, list) and bool(task) and all(isinstance(b, dict) and "interruptResponse" in b for b in task)
        passed = None if self.resume and not answers else task
        self.resume = self.reset = False
        events = cast(AsyncGenerator[dict[str, Any], None], self.inner.stream_async(passed))
        try:
            async with contextlib.aclosing(events) as stream:
                async for event in stream:
                    for out in self._translate(event):
                        yield out
        except Exception:
            run = self.inner._current
            if not self.catch_failures or run is None or run.data["status"] != "failed":
                raise
            yield {"type": "multiagent_result", "result": self.result(run)}

    def _translate(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        run = self.inner._current
        if kind == "node_start":
            return [{"type": "multiagent_node_start", "node_id": event["node_id"], "node_type": self.node_type(event["node_id"])}]
        if kind == "node_event":
            return [{"type": "multiagent_node_stream", "node_id": event["node_id"], "event": event["event"]}]
        if kind == "node_result":
            return self._stop(run, event["node_id"])
        if kind == "handoff":
            return [
                *self._stop(run, event["from"]),
                {
                    "type": "multiagent_handoff",
                    "from_node_ids": [event["from"]],
                    "to_node_ids": [event["to"]],
                    "message": event.get("message"),
                },
            ]
        if kind == "result":
            assert run is not None
            return [{"type": "multiagent_result", "result": self.result(run)}]
        return []

    @staticmethod
    def _stop(run: GraphRunState | None, node_id: str) -> list[dict[str, Any]]:
        assert run is not None
        latest = run.node_result(node_id)
        stopped = node_result(latest.result, latest.status, latest.executions, run.data.get("error"))
        events: list[dict[str, Any]] = [{"type": "multiagent_node_stop", "node_id": node_id, "node_result": stopped}]
        if stopped.interrupts:
            events.append({"type": "multiagent_node_interrupt", "node_id": node_id, "interrupts": list(stopped.interrupts)})
        return events


__all__ = ["Driver", "unsupported"]
