"""One event source for a served run: its committed events replayed from the store, then live ones.

:func:`run_events` is what every encoding reads (the SSE endpoint; an AG-UI endpoint would read
it too). It yields the committed events after a cursor (:class:`~tether.serve.events.Cursor`),
derived from the run's stored steps by the run's shared, incremental
:class:`~tether.serve.eventlog.EventLog` (for a run executing in this process, from the steps it
hands over in memory once they are committed: the same events, without reading them back), then
waits: for a notice from the task
executing the run in this process (a new step, a live text delta, the end), or, for a run
executed by another server process on the same store, for the next poll of the store. It ends
when the run is at rest (finished, failed, interrupted, stopped or paused) with no owner, or, with
no ``end`` event, when the server shuts down and the run does not execute here (any more: it was
handed over, :mod:`tether.serve.drain`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from ..errors import RequestError
from .events import RESTING, Cursor, ServeEvent
from .runs import Notice, RunManager


async def run_events(
    manager: RunManager, run_id: str, after: Cursor, *, poll_interval: float = 1.0, keepalive: float = 15.0
) -> AsyncIterator[ServeEvent | None]:
    """The events of ``run_id`` after ``after``: committed ones from the store, live deltas, and
    ``None`` as a keepalive tick when nothing happened for ``keepalive`` seconds; ends with an
    ``end`` event (no id) once the run is at rest.

    Args:
        manager: The server's runs (the store, and the notices of the runs executing here).
        run_id: The run.
        after: Where to start: the committed events after this cursor are replayed.
        poll_interval: Seconds between two reads of the store when no notice comes (a run
            executed by another server process).
        keepalive: Seconds of silence after which a ``None`` tick is yielded.

    Raises:
        RequestError: The run does not exist (raised before the first event).
    """
    pending: deque[Notice] = deque()
    with manager.listen(run_id) as queue, manager.logs.open(run_id) as log:
        idle = 0.0
        position = 0  # the log's events this stream has passed on
        quiet = False  # no notice came for poll_interval: the store is read even for a run executing here
        while True:
            await log.refresh(lambda: manager.generation(run_id), manager.executions.get(run_id), poll=quiet)
            if log.replaced and position == len(log.events):
                yield {"type": "end", "data": {"status": "deleted"}}
                return
            if log.missing and not manager.executing(run_id):  # executing: its first step is being written
                if log.steps_read:
                    yield {"type": "end", "data": {"status": "deleted"}}
                    return
                raise RequestError(f"no run {run_id!r}", status=404)
            fresh = log.events[position:]
            position = len(log.events)
            for event in fresh:
                if after.admits(event["id"]):
                    yield event
            if fresh:
                idle = 0.0
            seen = log.generation
            if manager.drain.draining and not manager.executing(run_id) and queue.empty():
                return  # the server shuts down: the client reconnects (no ``end``: the run goes on elsewhere)
            if log.status in RESTING and not manager.executing(run_id) and queue.empty() and not pending:
                if not await asyncio.to_thread(manager.store.owner_alive, run_id):
                    yield {"type": "end", "data": {"status": log.status}}
                    return
            if not pending:
                notice = await _next(queue, min(poll_interval, keepalive))
                quiet = notice is None
                if notice is None:
                    idle += min(poll_interval, keepalive)
                    if idle >= keepalive:
                        idle = 0.0
                        yield None
                    continue
                pending.append(notice)
            while (more := _now(queue)) is not None:
                pending.append(more)
            while pending and pending[0][0] == "delta":
                _, delta, generation = pending.popleft()
                if delta is not None and generation >= seen:  # older: its message may be read already
                    yield delta  # type: ignore[misc]
                idle = 0.0
            while pending and pending[0][0] != "delta":
                pending.popleft()  # one read of the store serves every notice of new steps


async def _next(queue: asyncio.Queue[Any], timeout: float) -> Any:
    try:
        return await asyncio.wait_for(queue.get(), timeout)
    except TimeoutError:
        return None


def _now(queue: asyncio.Queue[Any]) -> Any:
    try:
        return queue.get_nowait()
    except asyncio.QueueEmpty:
        return None


__all__ = ["run_events"]
