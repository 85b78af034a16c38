"""A durable graph run: an ordinary durable run in the store, holding the graph state.

The graph run is stored like an agent's run, so every store, ``tether runs`` and lease works
unchanged (no schema change): its head's ``state["tether.graph"]`` is the graph state (node
statuses, latest results, satisfied edges, in-flight executions with their inputs, and the
execution log: which node executed, in which order, as which nested run; see
:mod:`.executions`). A graph run has no conversation: it writes no message rows. Its metrics
are the sum of its node runs' (each rolled up once, with the log entry that records it). The
graph run holds its lease while it runs; each node execution is a nested run of its own
(``child_run_id(run_id, "node:N")``, ``parent_run_id`` = the graph run).

Graph runs stored before the execution log logged each completion as a message row; they are
read (:func:`~tether.multiagent.executions.from_legacy_rows`) and, once resumed, continue with
the log in the head and no further rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, cast

from ..durable.ids import child_run_id
from ..durable.session import DurableSession, run_state_of
from ..durable.store import Lease, RunStore, validate_run_id
from ..errors import PromptError, RunNotFoundError, StateError
from ..loop.state import RunState, new_metrics
from ..types import MetricsData
from . import executions
from .state import STATE_KEY, GraphRunState


class GraphRecorder:
    """Writes one graph run's state at node boundaries."""

    def __init__(self, store: RunStore, run_id: str, session: DurableSession) -> None:
        self.store = store
        self.run_id = run_id
        self.session = session

    def child(self, run: GraphRunState, node_id: str, n: int) -> str:
        """The nested run of ``node_id``'s execution ``n``, named in its log entry (written with
        the next :meth:`sync`)."""
        child = child_run_id(self.run_id, f"{node_id}:{n}")
        executions.entry_of(run.data, node_id, n)["run_id"] = child
        return child

    def completed(self, run: GraphRunState, node_id: str, n: int) -> None:
        """Account the end of execution ``n`` of ``node_id`` (completed, interrupted or failed):
        what its nested run used since it was last accounted is added to this run's metrics,
        written with the next :meth:`sync` together with the log entry that remembers it."""
        entry = executions.entry_of(run.data, node_id, n)
        child = entry.get("run_id")
        head = None if not isinstance(child, str) else self.store.head(child)
        if head is None:
            return  # a callable node: no nested run
        figures = new_metrics()
        stored = head.get("metrics")
        if isinstance(stored, dict):
            figures.update(cast(MetricsData, stored))
        executions.roll_up(self.session.run.metrics, entry, figures)

    async def sync(self, run: GraphRunState) -> None:
        """Write the graph state and metrics (the head)."""
        run.flush()
        await self.session.sync_async()

    async def finish(self, run: GraphRunState) -> None:
        """Write the run's end as a step (status finished, failed or interrupted, and why)."""
        run.flush()
        data = run.data
        status = {"completed": "finished", "failed": "failed", "interrupted": "interrupted"}.get(data["status"], "paused")
        reason = stop_reason_of(data)
        self.session.run.cursor.stop_reason = reason
        await self.session.sync_async("turn_end", status=status, stop_reason=reason)


def stop_reason_of(data: dict[str, Any]) -> str:
    """Why a graph or swarm run stopped: ``completed``, ``interrupt`` (nodes wait on answers),
    ``paused`` or, for a failed run, its error."""
    status = data["status"]
    if status == "failed":
        return str(data.get("error") or "failed")
    return {"completed": "completed", "interrupted": "interrupt"}.get(status, "paused")


@contextlib.contextmanager
def open_run(
    store: RunStore,
    run_id: str,
    task: Any,
    parent_run_id: str | None,
    *,
    resume: bool,
    new: Callable[[Any], GraphRunState],
    restore: Callable[[Any, list[str], str], GraphRunState],
    key: str = STATE_KEY,
) -> Iterator[tuple[GraphRunState, GraphRecorder]]:
    """Lease and load (or create) graph run ``run_id``; yields its state and recorder.

    ``new(task)`` makes the state of a new run; ``restore(data, order, where)`` validates a
    stored one; ``key`` is where the run's ``state`` holds it (graphs and swarms differ).

    Raises:
        RunNotFoundError: ``resume`` of a run the store does not have.
        PromptError: A new run without a task, or a task for a run that exists.
        StateError: The run exists but is not a graph run of this graph's nodes.
    """
    validate_run_id(run_id)
    with store.lease(run_id) as lease:
        stored = store.load(run_id)
        if stored is None:
            if resume:
                raise RunNotFoundError(f"graph run {run_id!r} is not in the store")
            if task is None:
                raise PromptError(f"graph run {run_id!r} does not exist: pass a task to start it")
            yield _create(store, run_id, new(task), key, parent_run_id, lease)
            return
        if task is not None:
            raise PromptError(f"graph run {run_id!r} already exists; continue it with graph.resume({run_id!r}) (no task)")
        state = (stored.head.get("state") or {}).get(key)
        if state is None:
            raise StateError(f"run {run_id!r} is not a {key} run (its state has no {key!r})")
        rs = run_state_of(stored)
        if isinstance(state, dict) and "log" not in state:
            # Stored before the execution log: its executions are message rows, read once here;
            # the live conversation is emptied, so the next write leaves them behind.
            legacy = executions.from_legacy_rows(rs.messages, state, run_id, lambda node, n: child_run_id(run_id, f"{node}:{n}"))
            state = dict(state, log=legacy)
            rs.messages = []
        log = state.get("log") if isinstance(state, dict) else None
        run = restore(state, executions.order_of(log) if isinstance(log, list) else [], f"run {run_id!r}")
        rs.state = {key: run.data}
        session = DurableSession(store, run_id, rs, stored=stored, lease=lease)
        if run.data["status"] != "completed":
            session.sync("resumed", status="running")
        yield run, GraphRecorder(store, run_id, session)


def _create(
    store: RunStore, run_id: str, run: GraphRunState, key: str, parent_run_id: str | None, lease: Lease
) -> tuple[GraphRunState, GraphRecorder]:
    rs = RunState(messages=[], state={key: run.data}, run_id=run_id)
    session = DurableSession(store, run_id, rs, lease=lease)
    session.nest_in(parent_run_id)
    session.sync("turn_start", status="running")
    return run, GraphRecorder(store, run_id, session)


__all__ = ["GraphRecorder", "open_run", "stop_reason_of"]
