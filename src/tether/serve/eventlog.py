"""The committed events of a run, read from its store incrementally and shared by its streams.

An :class:`EventLog` follows one run: each read asks the store only for the steps after the last
one it read (``store.history(run_id, after=tail)``, a :class:`~tether.durable.history.StepTail`
keeping that step's stored head, so not even the keyframe before them is read again) and for
the message rows those steps added
(``store.messages(run_id, start, stop)``), and derives their events (:class:`StepEvents`). So a
read costs what the new steps cost, not the run's length, and a stream of a run of n steps does
O(n) work in all, not O(n²).

A run executing in this server process hands each write it commits to the run's log in memory
(:meth:`EventLog.offer`, through :mod:`tether.durable.commits`), and the log derives the events
of those steps without reading them back: once a store read began while that very execution
ran, every later step reaches the log in memory, so a notice of new steps costs no read as long
as the steps offered follow each other from the last one read (a gap, a step committed before
the log's first read but offered after it, or no execution here any more: the store is read, as
for a run executed by another server process). The events are the same either way: the offered
copies are what the store returns, and a step is offered only once its write is committed.

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

from ..durable.history import Step, StepTail
from ..durable.incarnation import INCARNATION
from ..durable.store import RunStore
from ..errors import RunNotFoundError
from ..types import Message
from .events import ServeEvent, StepEvents

HEAD_KEYS = ("state", "interrupt_state", "start_seq", INCARNATION)
"""The keys of a step's head its events are derived from (:class:`~tether.serve.events.StepEvents`
and the log's own checks): a step offered in memory need hold no other."""


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
        self.store_reads = 0
        """How many times the store was read (the other refreshes took steps offered in memory)."""
        self._offered: dict[int, Step] = {}  # committed steps offered in memory, by number
        self._messages: dict[int, Message] = {}  # the messages they (and writes without a step) appended, by seq
        self._fed_by: object | None = None  # the execution whose commits all reach the log since a store read began

    @property
    def status(self) -> str | None:
        """The status of the last step read (None before any)."""
        return self.derive.status

    def offer(self, step: Step | None, messages: dict[int, Message]) -> None:
        """A write of the run committed by its execution in this process: its step (None: a write
        without one) and the messages it appended (taken by :meth:`refresh` when they follow
        what the log holds; dropped when it holds them already)."""
        low = self.derive.seq
        self._messages.update((seq, message) for seq, message in messages.items() if seq >= low)
        if step is not None and step.step > self.steps_read:
            self._offered[step.step] = step

    async def refresh(self, generation: Callable[[], int], execution: object | None = None, *, poll: bool = False) -> None:
        """Take the steps committed since the last refresh: from memory when ``execution`` (the
        run's execution in this process, None: none) has offered them all and ``poll`` is not
        set, else read from the store (on a thread), once for every stream that asks while a
        read is waited for: a caller that finds a read begun after it asked takes that read's
        result. ``generation`` gives the run's generation (read as the refresh ends)."""
        asked = self._reads
        async with self._lock:
            if self._reads > asked or self.replaced:
                return  # a read that began after this call asked has ended: it covers this call
            self._reads += 1
            if poll or execution is None or execution is not self._fed_by or not self._take_offered():
                self._fed_by = execution  # every step it commits from now on is offered
                self.store_reads += 1
                try:
                    self.events.extend(await asyncio.to_thread(self.read))
                    self.missing = False
                except RunNotFoundError:
                    self.missing = True
                self._take_offered()
            self.generation = generation()

    def _take_offered(self) -> bool:
        """Derive the events of the offered steps that follow the last one read; True when none
        is left over (no gap: nothing committed is missing from memory)."""
        for number in [n for n in self._offered if n <= self.steps_read]:
            del self._offered[number]
        while (step := self._offered.get(self.steps_read + 1)) is not None and not self.replaced:
            start = max(self.derive.seq, int(step.head.get("start_seq", 0)))
            if any(seq not in self._messages for seq in range(start, step.seq)):
                break
            del self._offered[step.step]
            if not self._same_incarnation([step]):
                break
            self.events.extend(self.derive.events(step, {seq: self._messages[seq] for seq in range(start, step.seq)}))
            self.steps_read = step.step
            self.missing = False
        for seq in [seq for seq in self._messages if seq < self.derive.seq]:
            del self._messages[seq]
        return not self._offered and not self.replaced

    def read(self) -> list[ServeEvent]:
        """The committed events of the steps committed since the last call (blocking I/O): the
        steps and their messages in one read transaction where the store has them
        (``snapshot``: PostgreSQL, where each is a round trip or more)."""
        snapshot = getattr(self.store, "snapshot", None)
        with contextlib.nullcontext() if snapshot is None else snapshot(self.run_id):
            return self._read()

    def _read(self) -> list[ServeEvent]:
        # the tail moves with store reads only: the steps taken from memory since come again
        steps = [step for step in self.store.history(self.run_id, after=self.tail) if step.step > self.steps_read]
        if not steps:
            return []
        steps = steps[: self._same_incarnation(steps)]
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

    def _same_incarnation(self, steps: list[Step]) -> int:
        """How many of ``steps`` belong to the incarnation the log follows (the first one's, for
        a log that read none); at one of another, :attr:`replaced` is set."""
        for index, step in enumerate(steps):
            incarnation = step.head.get(INCARNATION)
            if self._incarnation is _UNSET:
                self._incarnation = incarnation
            elif incarnation != self._incarnation:
                self.replaced = True
                return index
        return len(steps)


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

    def offer(self, run_id: str, step: Step | None, messages: dict[int, Message]) -> bool:
        """Hand a committed write of ``run_id`` to its log (:meth:`EventLog.offer`); False when
        the run has no stream here."""
        found = self._logs.get(run_id)
        if found is None:
            return False
        found[0].offer(step, messages)
        return True

    def __len__(self) -> int:
        return len(self._logs)


__all__ = ["EventLog", "EventLogs"]
