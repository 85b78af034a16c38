"""The committed events of a run, read from its store incrementally and shared by its streams.

An :class:`EventLog` follows one run: each read asks the store only for the steps after the last
one it read (``store.history(run_id, after=tail)``, a :class:`~tether.durable.history.StepTail`
keeping that step's stored head, so not even the keyframe before them is read again) and for
the message rows those steps added
(``store.messages(run_id, start, stop)``), and derives their events (:class:`StepEvents`). So a
read costs what the new steps cost, not the run's length, and a stream of a run of n steps does
O(n) work in all, not O(n²).

Every stream of a run in one server process reads the same log (:class:`EventLogs`, kept while
the run has a stream): a notice that the run committed a step leads to one store read however
many streams wait for it (those that ask while a read is under way take its result), and each
stream keeps its own position in the log's events. The log is dropped when the run's last
stream ends.

A run id deleted and created again is another run (another incarnation): a log that finds steps
of another incarnation than the one it read stops (:attr:`EventLog.replaced`) rather than mix
the two runs' events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

from ..durable.history import StepTail
from ..durable.incarnation import INCARNATION
from ..durable.store import RunStore
from ..errors import RunNotFoundError
from ..types import Message
from .events import ServeEvent, StepEvents


class EventLog:
    """The committed events of one run read so far (see the module docstring).

    Attributes:
        events: Every committed event read so far, in order (streams index into it).
        steps_read: The number of the last step read (0: none yet).
        missing: The last read found no such run (not created yet, or deleted).
        replaced: The run id now names another incarnation than the one read: no more reads.
        generation: The run's generation (:meth:`~tether.serve.runs.RunManager.generation`)
            when the last read ended: a live delta sent before it may belong to a message the
            log holds already, so a stream drops it (deltas are best effort).
    """

    def __init__(self, store: RunStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.events: list[ServeEvent] = []
        self.steps_read = 0
        self.missing = False
        self.replaced = False
        self.generation = 0
        self.derive = StepEvents()
        self.tail = StepTail()
        self._incarnation: object = _UNSET
        self._lock = asyncio.Lock()
        self._reads = 0

    @property
    def status(self) -> str | None:
        """The status of the last step read (None before any)."""
        return self.derive.status

    async def refresh(self, generation: Callable[[], int]) -> None:
        """Read the steps committed since the last read (on a thread), once for every stream
        that asks while a read is waited for: a caller that finds a read begun after it asked
        takes that read's result. ``generation`` gives the run's generation (read as the read ends)."""
        asked = self._reads
        async with self._lock:
            if self._reads > asked or self.replaced:
                return  # a read that began after this call asked has ended: it covers this call
            self._reads += 1
            try:
                self.events.extend(await asyncio.to_thread(self.read))
                self.missing = False
            except RunNotFoundError:
                self.missing = True
            self.generation = generation()

    def read(self) -> list[ServeEvent]:
        """The committed events of the steps committed since the last call (blocking I/O): the
        steps and their messages in one read transaction where the store has them
        (``snapshot``: PostgreSQL, where each is a round trip or more)."""
        snapshot = getattr(self.store, "snapshot", None)
        with contextlib.nullcontext() if snapshot is None else snapshot(self.run_id):
            return self._read()

    def _read(self) -> list[ServeEvent]:
        steps = self.store.history(self.run_id, after=self.tail)
        if not steps:
            return []
        for index, step in enumerate(steps):
            incarnation = step.head.get(INCARNATION)
            if self._incarnation is _UNSET:
                self._incarnation = incarnation
            elif incarnation != self._incarnation:
                self.replaced = True
                steps = steps[:index]
                break
        windows: list[tuple[int, int]] = []  # each step's new messages: seq in [start, stop)
        seq = self.derive.seq
        for step in steps:
            windows.append((max(seq, int(step.head.get("start_seq", 0))), step.seq))
            seq = max(seq, step.seq)
        wanted = [(start, stop) for start, stop in windows if stop > start]
        messages: dict[int, Message] = {}
        if wanted:
            low, high = min(start for start, _ in wanted), max(stop for _, stop in wanted)
            messages = dict(zip(range(low, high), self.store.messages(self.run_id, low, high), strict=True))
        out: list[ServeEvent] = []
        for step, (start, stop) in zip(steps, windows, strict=True):
            # Only the messages the step's live conversation holds: one a conversation manager
            # dropped at that very step is not an event of it (a pure function of the step).
            window = {seq: messages[seq] for seq in range(start, stop)}
            out.extend(self.derive.events(step, window))
            self.steps_read = step.step
        return out


_UNSET = object()


class EventLogs:
    """The shared :class:`EventLog` of each run that has a stream in this server process."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._logs: dict[str, tuple[EventLog, int]] = {}

    @contextlib.contextmanager
    def open(self, run_id: str) -> Iterator[EventLog]:
        """The run's log while the block runs (made for the first stream, dropped after the last)."""
        log, users = self._logs.get(run_id) or (None, 0)
        if log is None or log.replaced:
            log, users = EventLog(self.store, run_id), 0
        self._logs[run_id] = (log, users + 1)
        try:
            yield log
        finally:
            current = self._logs.get(run_id)
            if current is not None and current[0] is log:
                if current[1] <= 1:
                    del self._logs[run_id]
                else:
                    self._logs[run_id] = (log, current[1] - 1)

    def __len__(self) -> int:
        return len(self._logs)


__all__ = ["EventLog", "EventLogs"]
