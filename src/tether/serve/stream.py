"""One event source for a served run: its committed events replayed from the store, then live ones.

:func:`run_events` is what every encoding reads (the SSE endpoint; an AG-UI endpoint would read
it too). It yields the committed events after a cursor (:class:`~tether.serve.events.Cursor`),
derived from the run's stored steps (:class:`EventLog`), then waits: for a notice from the task
executing the run in this process (a new step, a live text delta, the end), or, for a run
executed by another server process on the same store, for the next poll of the store. It ends
when the run is at rest (finished, failed, interrupted, stopped or paused) with no owner.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from ..durable.store import RunStore
from ..errors import RequestError, RunNotFoundError
from ..types import Message
from .events import RESTING, Cursor, ServeEvent, StepEvents
from .runs import Notice, RunManager


class EventLog:
    """The committed events of one run, read from its store step by step (each step once)."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.steps_read = 0
        self.derive = StepEvents()
        self.messages: dict[int, Message] = {}

    @property
    def status(self) -> str | None:
        """The status of the last step read (None before any)."""
        return self.derive.status

    def read(self) -> list[ServeEvent]:
        """The committed events of the steps committed since the last call (blocking: run it on a thread)."""
        steps = [step for step in self.store.history(self.run_id) if step.step > self.steps_read]
        if not steps:
            return []
        if any(seq not in self.messages for seq in range(self.derive.seq, steps[-1].seq)):
            self._load(steps[-1].step, int(steps[-1].head.get("start_seq", 0)))
        out: list[ServeEvent] = []
        for step in steps:
            missing = [seq for seq in range(self.derive.seq, step.seq) if seq not in self.messages]
            if missing:
                self._load(step.step, int(step.head.get("start_seq", 0)))  # trimmed since: read the window of that step
            out.extend(self.derive.events(step, self.messages))
            self.steps_read = step.step
        return out

    def _load(self, step: int, start: int) -> None:
        stored = self.store.load_at(self.run_id, step)
        for offset, message in enumerate(stored.messages):
            self.messages.setdefault(start + offset, message)


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
    log = EventLog(manager.store, run_id)
    pending: deque[Notice] = deque()
    with manager.listen(run_id) as queue:
        idle = 0.0
        seen = 0  # the run's generation when the store was last read
        while True:
            try:
                fresh = await asyncio.to_thread(log.read)
                seen = manager.generation(run_id)
            except RunNotFoundError:
                if manager.executing(run_id):
                    fresh = []  # its first step is being written
                elif log.steps_read:
                    yield {"type": "end", "data": {"status": "deleted"}}
                    return
                else:
                    raise RequestError(f"no run {run_id!r}", status=404) from None
            for event in fresh:
                if after.admits(event["id"]):
                    yield event
            if fresh:
                idle = 0.0
            if log.status in RESTING and not manager.executing(run_id) and queue.empty() and not pending:
                if not await asyncio.to_thread(manager.store.owner_alive, run_id):
                    yield {"type": "end", "data": {"status": log.status}}
                    return
            if not pending:
                notice = await _next(queue, min(poll_interval, keepalive))
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


__all__ = ["EventLog", "run_events"]
