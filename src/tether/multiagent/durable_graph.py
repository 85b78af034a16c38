"""A durable graph run: an ordinary durable run in the store, holding the graph state.

The graph run is stored like an agent's run, so every store, ``tether runs`` and lease works
unchanged (no schema change): its head's ``state["tether.graph"]`` is the graph state (node
statuses, latest results, satisfied edges, in-flight executions with their inputs) and its
message rows are the execution log, one small row per completed node execution, appended, so
a write at a node boundary costs the same however many nodes ran before. The graph run holds
its lease while it runs; each node execution is a nested run of its own
(``child_run_id(run_id, "node:N")``, ``parent_run_id`` = the graph run).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from ..durable.session import DurableSession, run_state_of
from ..durable.store import Lease, RunStore, validate_run_id
from ..errors import PromptError, RunNotFoundError, StateError
from ..loop.state import RunState
from ..types import Message
from .state import STATE_KEY, GraphRunState

_LOG_KEY = "graph_node"


class GraphRecorder:
    """Writes one graph run's state at node boundaries."""

    def __init__(self, store: RunStore, run_id: str, session: DurableSession) -> None:
        self.store = store
        self.run_id = run_id
        self.session = session

    def completed(self, node_id: str, n: int) -> None:  # a swarm logs member turns the same way
        """Log a completed execution (written with the next :meth:`sync`)."""
        text = json.dumps({_LOG_KEY: node_id, "execution": n})
        self.session.run.messages.append({"role": "user", "content": [{"text": text}]})

    async def sync(self, run: GraphRunState) -> None:
        """Write the graph state (the head) and the new log rows."""
        run.flush()
        await self.session.sync_async()

    async def finish(self, run: GraphRunState) -> None:
        """Write the run's end as a step (status finished, failed or interrupted)."""
        run.flush()
        status = {"completed": "finished", "failed": "failed", "interrupted": "interrupted"}.get(run.data["status"], "paused")
        await self.session.sync_async("turn_end", status=status)


def _order_of(messages: list[Message], run_id: str) -> list[str]:
    order = []
    for index, message in enumerate(messages):
        try:
            entry = json.loads(message["content"][0]["text"])
            order.append(str(entry[_LOG_KEY]))
        except (KeyError, IndexError, TypeError, ValueError):
            raise StateError(f"graph run {run_id!r}: execution log row {index} is not a graph log entry") from None
    return order


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
        run = restore(state, _order_of(rs.messages, run_id), f"run {run_id!r}")
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


__all__ = ["GraphRecorder", "open_run"]
