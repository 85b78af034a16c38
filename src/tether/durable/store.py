"""The `RunStore` protocol: the few operations a durable run needs from storage.

A run is stored as append-only rows plus one small, constant-size *head* that is replaced at
every step: messages are rows (numbered by ``seq``), tool results of the open cycle are rows,
and the head holds the cursor, metrics, model state, agent state and the ``start_seq`` of the
live conversation (a conversation manager's trimming moves ``start_seq``; it never rewrites
rows). Every row is JSON text; nothing is pickled, so loading cannot run code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import LeaseLostError, RowTooLargeError, RunNotFoundError, StoreError
from ..types import Message, ToolResult
from .history import RunSummary, Step, StepTail
from .ids import RUN_ID_PATTERN as RUN_ID_PATTERN
from .ids import validate_run_id as validate_run_id
from .incarnation import check_incarnation
from .packing import HeadPacker

SCHEMA_VERSION = 3
"""Version of the stored layout: v2 added lease epochs and the revision column for fencing; v3
packed heads (:mod:`tether.durable.packing`: large values as blob rows, step heads as deltas)
and the blobs table. Stores and rows of versions 1 and 2 are read as they are."""


@dataclass
class StoredRun:
    """A run as loaded from a store: the head and the live rows.

    Attributes:
        run_id: The run's id.
        head: The head row: cursor, metrics, state, status and timeline.
        messages: The live window of the conversation, in order.
        results: The tool results recorded in the open cycle, by ``toolUseId``.
    """

    run_id: str
    head: dict[str, Any]
    messages: list[Message]
    results: dict[str, ToolResult] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Lease:
    """One acquisition of a run's lease: the run and the epoch this acquisition was given.

    Every acquisition increments the run's epoch in the store, so an owner that lost its lease
    (and did not notice) holds a stale epoch: its next fenced write raises
    :class:`~tether.errors.LeaseLostError` instead of overwriting the new owner's work.
    """

    run_id: str
    epoch: int


def head_revision(head: dict[str, Any]) -> int | None:
    """The ``rev`` a head being written carries (None: an unversioned head, written without the
    revision check; durable sessions always set one)."""
    rev = head.get("rev")
    if rev is None:
        return None
    if not isinstance(rev, int) or isinstance(rev, bool) or rev < 1:
        raise StoreError(f"head rev must be a positive integer, got {rev!r}")
    return rev


def check_fence(
    run_id: str,
    head_rev: int | None,
    stored_rev: int | None,
    exists: bool,
    lease: Lease | None,
    epoch: int | None,
    *,
    incarnation: str | None = None,
    stored_incarnation: str | None = None,
) -> None:
    """The compare-and-swap every store makes inside its write transaction: the lease's epoch,
    then the run's incarnation, then its revision.

    Args:
        run_id: The run written.
        head_rev: The revision of the head being written (the previous one plus one; None:
            no revision check).
        stored_rev: The revision the store holds now (None: unknown, a row from schema v1).
        exists: Whether the run has a head already.
        lease: The writer's lease (None: an unfenced write, e.g. a tool of its own).
        epoch: The run's current lease epoch in the store (None: never leased).
        incarnation: The incarnation the written head records (None: a legacy run's).
        stored_incarnation: The incarnation of the stored run (None: a legacy run); a write to an
            existing run of another incarnation raises :class:`~tether.errors.RunReplacedError`
            (see :mod:`tether.durable.incarnation`).
    """
    if lease is not None and lease.epoch != (epoch or 0):
        raise LeaseLostError(
            f"run {run_id!r}: this writer's lease (epoch {lease.epoch}) was lost, the run is now at epoch {epoch}; "
            "another owner took the run over (or it was unlocked), so nothing was written"
        )
    if exists:
        check_incarnation(run_id, incarnation, stored_incarnation)
    if head_rev is None:
        return
    expected = head_rev - 1
    if not exists:
        if expected != 0:
            raise LeaseLostError(f"run {run_id!r} no longer exists in the store (expected revision {expected}); nothing was written")
        return
    if stored_rev is not None and stored_rev != expected:
        raise LeaseLostError(
            f"run {run_id!r} was changed by another writer (stored revision {stored_rev}, this writer expected {expected}); "
            "nothing was written"
        )


@dataclass(frozen=True, slots=True)
class EncodedWrite:
    """The rows of one atomic step: ``(seq, text)`` messages, ``(cycle, toolUseId, text)`` results,
    ``(id, text)`` blobs (content-addressed: a store keeps the row it has under that id).

    ``head_delta`` (for a store that keeps heads as deltas, see :mod:`tether.durable.packing`):
    the patch turning the head the store holds as the base of revision ``head_base`` into this
    write's head; a store may write it instead of ``head`` (the whole head, always present)."""

    messages: list[tuple[int, str]]
    results: list[tuple[int, str, str]]
    head: str
    step: str | bytes | None
    blobs: list[tuple[str, str]] = field(default_factory=list)
    head_delta: str | None = None
    head_base: int | None = None

    @property
    def size(self) -> int:
        """Bytes of row text this write stores (for ``bytes_written``)."""
        return (
            sum(len(text) for _, text in self.messages)
            + sum(len(text) for _, _, text in self.results)
            + len(self.head if self.head_delta is None else self.head_delta)
            + len(self.step or "")
            + sum(len(text) for _, text in self.blobs)
        )


@dataclass(frozen=True, slots=True)
class PreparedWrite:
    """One store write, encoded and checked, ready for :meth:`RunStore.commit`.

    Encoding is pure CPU and reads the caller's live objects, so it happens on the caller's
    thread; the commit is the I/O alone and may run on another thread. ``incarnation`` is the
    one the head records (the store keeps it in clear for the compare-and-swap).
    """

    rows: EncodedWrite
    rev: int | None
    step: int | None
    incarnation: str | None = None


def check_row_sizes(run_id: str, messages: list[tuple[int, str]], results: list[tuple[int, str, str]], limit: int | None) -> None:
    """Refuse a write with a message or result row over ``limit`` characters of JSON text.

    Raises :class:`~tether.errors.RowTooLargeError` naming the row; the durable session
    rewords it to name the tool whose output it is.
    """
    if limit is None:
        return
    for seq, text in messages:
        if len(text) > limit:
            raise RowTooLargeError(
                f"run {run_id!r}: message seq {seq} is {len(text)} bytes, over max_row_bytes={limit}",
                table="messages",
                key=str(seq),
                size=len(text),
                limit=limit,
            )
    for _, tool_use_id, text in results:
        if len(text) > limit:
            raise RowTooLargeError(
                f"run {run_id!r}: the result of tool call {tool_use_id!r} is {len(text)} bytes, over max_row_bytes={limit}",
                table="results",
                key=tool_use_id,
                size=len(text),
                limit=limit,
            )


def with_liveness(runs: list[RunSummary], alive: Callable[[str], bool]) -> list[RunSummary]:
    """``runs`` sorted by creation, a ``running`` run whose lease no live owner holds shown as ``stalled``."""
    seen = [dataclasses.replace(run, status="stalled") if run.status == "running" and not alive(run.run_id) else run for run in runs]
    return sorted(seen, key=lambda run: (run.created_at or "", run.run_id))


def run_tree(runs: Iterable[RunSummary], run_id: str) -> list[str]:
    """``run_id`` and every run nested in it at any depth, parents before their children.

    A nested run (an agent tool's call, a graph node's execution, a swarm member's turn) names
    its parent in its head's ``parent_run_id``; ``runs`` are the store's summaries
    (``list_runs()``). A run whose head cannot be read (listed ``corrupt``) names no parent, so
    it is not found as a child: delete it by its id.
    """
    children: dict[str, list[str]] = {}
    for run in runs:
        if run.parent_run_id is not None:
            children.setdefault(run.parent_run_id, []).append(run.run_id)
    tree, seen = [run_id], {run_id}
    for parent in tree:  # grows while it is walked: breadth first
        for child in sorted(children.get(parent, ())):
            if child not in seen:  # a damaged store could hold a cycle
                seen.add(child)
                tree.append(child)
    return tree


class TreeDeletion:
    """``delete_run`` as every store does it: the run and its whole tree of nested runs.

    Every run of the tree is leased first (so a tree with a live owner anywhere is refused with
    :class:`~tether.errors.RunLockedError` and nothing is deleted); the tree is listed again
    once the leases are held, until it no longer grows (a nested run created meanwhile is
    taken too); then the store deletes every row of every leased run in one transaction
    (:meth:`_delete_leased`, the store's own SQL). A store sets :meth:`list_runs`,
    :meth:`lease`, :meth:`_delete_leased` and :meth:`_not_found`.
    """

    def delete_run(self, run_id: str) -> list[str]:
        """Delete run ``run_id`` and every run nested in it; returns their ids, the run first.

        Raises:
            RunNotFoundError: The store has no run ``run_id``.
            RunLockedError: A live process owns the run or one nested in it.
        """
        validate_run_id(run_id)
        with ExitStack() as held:
            leases: dict[str, Lease] = {}
            while True:
                runs = self.list_runs()
                if not leases and all(run.run_id != run_id for run in runs):
                    raise self._not_found(run_id)
                tree = run_tree(runs, run_id)
                new = [ident for ident in tree if ident not in leases]
                if not new:
                    break
                for ident in new:
                    leases[ident] = held.enter_context(self.lease(ident))
            self._delete_leased(run_id, [leases[ident] for ident in tree])
        return tree

    def list_runs(self) -> list[RunSummary]:
        raise NotImplementedError

    def lease(self, run_id: str) -> AbstractContextManager[Lease]:
        raise NotImplementedError

    def _delete_leased(self, run_id: str, leases: list[Lease]) -> None:
        """Delete every row of the leased runs (``run_id`` first) in one transaction, checking
        each lease's fence; RunNotFoundError (from :meth:`_not_found`) when ``run_id`` is gone.
        The runs' lease epochs are kept: an owner fenced off stays fenced off."""
        raise NotImplementedError

    def _not_found(self, run_id: str) -> RunNotFoundError:
        """The error for deleting a run the store does not have (naming the store)."""
        raise NotImplementedError


STORED_TABLES = ("head", "messages", "results", "steps", "blobs")
"""The kinds of rows a run is stored as (what :class:`RunSize` breaks its bytes down by)."""


@dataclass(frozen=True, slots=True)
class RunSize:
    """How much of a store one run takes: rows and bytes of row data by kind of row.

    ``tables`` maps each of :data:`STORED_TABLES` to ``(rows, bytes)``; the bytes are those of
    the stored row data (as written: sealed rows with their envelope, compressed step rows
    compressed), without the database's own page and index overhead.

    Attributes:
        run_id: The run.
        tables: ``(rows, bytes)`` by kind of row.
    """

    run_id: str
    tables: dict[str, tuple[int, int]]

    @property
    def total(self) -> int:
        """Bytes of row data of the run, all kinds together."""
        return sum(size for _, size in self.tables.values())


def largest_first(per_run: dict[str, dict[str, tuple[int, int]]]) -> list[RunSize]:
    """:class:`RunSize` of each run from ``{run_id: {table: (rows, bytes)}}`` (missing kinds are
    ``(0, 0)``), the largest run first."""
    sizes = [RunSize(run_id, {table: tables.get(table, (0, 0)) for table in STORED_TABLES}) for run_id, tables in per_run.items()]
    return sorted(sizes, key=lambda size: (-size.total, size.run_id))


@runtime_checkable
class RunStore(Protocol):
    """Storage for durable runs (SQLite, PostgreSQL, memory).

    ``write`` is one atomic step: it appends ``messages`` (numbered from ``head["next_seq"] -
    len(messages)``), appends ``results`` of cycle ``head["cursor"]["cycle_index"]`` and
    replaces the head. ``lease`` is held while an invocation runs; a second concurrent lease on
    the same run raises :class:`~tether.errors.RunLockedError`.

    Time travel (:mod:`tether.durable.history`): ``write(..., step=row)`` also appends the
    step row ``row`` (a dict with an int ``"step"`` number, unique per run, and a ``"head"``
    copy) in the same transaction. ``history`` returns the steps in order, ``load_at``
    rebuilds the run at one step (its head copy, the message rows with seq in
    ``[head.start_seq, head.next_seq)``, the results of its cycle named in ``step.results``),
    and ``list_runs`` summarizes every head. Step rows, like message rows, are never rewritten.

    A new backend subclasses :class:`~tether.durable.rowstore.RowStore` in one module: the
    algorithm (load, history, a past step, list, size, the write's compare-and-swap of
    :func:`check_fence`, tree deletion) is written there once around the row codec
    (:mod:`tether.durable.codec`), and the backend supplies its dialect: its transactions, where
    each kind of row is read and written, and its lease.
    Every driver error must surface as a :class:`~tether.errors.StoreError`.
    """

    bytes_written: int
    """Bytes of row text written so far (for benchmarks and size reports)."""

    def load(self, run_id: str) -> StoredRun | None:
        """The run, or None when the store has no run with that id."""
        ...

    def head(self, run_id: str) -> dict[str, Any] | None:
        """Only the run's head (cheap), or None when it does not exist."""
        ...

    def write(
        self,
        run_id: str,
        head: dict[str, Any],
        messages: list[Message],
        results: dict[str, ToolResult],
        step: dict[str, Any] | None = None,
        *,
        lease: Lease | None = None,
    ) -> None:
        """Append rows (and the step row, if any) and replace the head, atomically:
        ``commit(run_id, prepare(...), lease=lease)``.

        The write is a compare-and-swap (see :func:`check_fence`): the stored head's revision
        must be ``head["rev"] - 1`` (a new run: none stored and ``rev`` 1), its incarnation the
        one ``head`` records and, with ``lease``, the run's epoch must still be the lease's.
        Otherwise nothing is written and :class:`~tether.errors.LeaseLostError` (for another
        incarnation its subclass :class:`~tether.errors.RunReplacedError`) is raised.

        Written once, here: a store subclassing :class:`~tether.durable.rowstore.RowStore` (which
        subclasses this protocol) inherits it, and a wrapper such as
        :class:`~tether.testing.faults.FaultStore` borrows it, so every write goes through
        ``commit``.
        """
        self.commit(run_id, self.prepare(run_id, head, messages, results, step), lease=lease)

    def prepare(
        self,
        run_id: str,
        head: dict[str, Any],
        messages: list[Message],
        results: dict[str, ToolResult],
        step: dict[str, Any] | None,
        packer: HeadPacker | None = None,
    ) -> PreparedWrite:
        """Encode a write (pure CPU, no I/O; usually :func:`prepare_write` with the store's cipher).

        ``packer`` (a durable session's) stores the head packed: large values as blobs, the step
        row's head as a delta (see :mod:`tether.durable.packing`)."""
        ...

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write (the I/O alone: safe to call from another thread).

        With ``wait=False`` the store commits only if it can do so without blocking (no network
        round trip, no waiting for a lock, no fsync) and returns False otherwise, having written
        nothing: an event-loop caller then commits on a thread. With ``wait=True`` it always
        commits (or raises) and returns True.
        """
        ...

    def history(self, run_id: str, *, after: int | StepTail = 0) -> list[Step]:
        """The run's steps after step ``after`` (all of them by default), in order; raises
        RunNotFoundError when the run does not exist. A reader that follows a run (an event
        stream) passes a :class:`~tether.durable.history.StepTail`, which remembers the last
        step read: each read then fetches only the steps after it, whatever the run's length."""
        ...

    def messages(self, run_id: str, start: int, stop: int) -> list[Message]:
        """The stored messages with seq in ``[start, stop)``, in order (rows a conversation
        manager trimmed from the live conversation included: message rows are never rewritten);
        RunNotFoundError when the run does not exist, StoreError when a row is missing."""
        ...

    def load_at(self, run_id: str, step: int) -> StoredRun:
        """The run as it was at ``step``; RunNotFoundError / StoreError when absent."""
        ...

    def list_runs(self) -> list[RunSummary]:
        """A summary of every run in the store, ordered by creation time then run id.

        A run whose head says ``running`` but whose lease no live process holds is ``stalled``
        (resumable now); a run whose head cannot be read is listed as ``corrupt``.
        """
        ...

    def delete_run(self, run_id: str) -> list[str]:
        """Delete the run and its whole tree of nested runs (:func:`run_tree`: agent-tool calls,
        graph node executions, swarm member turns, at any depth): their heads and every row of
        them, blobs included (they belong to the run, so no other run loses one), in one
        transaction; returns the deleted ids, the run first (see :class:`TreeDeletion`). Takes
        every run's lease first, so a tree with a live owner anywhere is refused
        (:class:`~tether.errors.RunLockedError`; ``break_lease`` first to delete it anyway) and
        stale owners are fenced off; RunNotFoundError when the store does not have the run. The
        lease epochs are kept, so an owner fenced off before stays fenced off if an id is used
        again, and a new run of the id is a new incarnation (:mod:`tether.durable.incarnation`)."""
        ...

    def size(self, run_id: str) -> RunSize:
        """The rows and bytes the run takes, by kind of row; RunNotFoundError when it does not exist."""
        ...

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run in the store, the largest first."""
        ...

    def lease(self, run_id: str) -> AbstractContextManager[Lease]:
        """Exclusive ownership of the run while the context is open; each acquisition bumps
        the run's epoch. A second live owner gets :class:`~tether.errors.RunLockedError`."""
        ...

    def break_lease(self, run_id: str) -> int:
        """Fence off the run's current owner (``tether unlock``): bump the epoch, so its next
        write fails with LeaseLostError, and free the lease for a new owner. Returns the new
        epoch; RunNotFoundError for a run the store does not have."""
        ...

    def owner_alive(self, run_id: str) -> bool:
        """True when a live process holds the run's lease (what tells ``running`` from ``stalled``)."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...
