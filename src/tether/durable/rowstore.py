"""`RowStore`: the one algorithm every store runs around the row codec; a store is its dialect.

Loading a run, reading its head, its history and a past step, listing and sizing runs, the
write (encoded on the caller's thread, then one transaction: the compare-and-swap of
:func:`~tether.durable.store.check_fence`, the head, the appended rows), deleting a tree of runs
(:class:`~tether.durable.store.TreeDeletion`) and breaking a lease are written here once, on
top of :mod:`tether.durable.codec`. A store supplies only primitives: its transactions
(:meth:`~RowStore._reading`, :meth:`~RowStore._writing`), where each kind of row is read from
and written to, and its lease. (DBOS's system database has this shape: one algorithm, the
SQLite and PostgreSQL dialects override primitives.)

A run has a *key* in its store, given to every row primitive with the run id: the SQLite
store's run number (its rows' key range), the PostgreSQL store's run id, the memory store's
holder of the run's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar

from ..errors import LeaseLostError, RunNotFoundError, StoreError
from ..types import Message, ToolResult
from .codec import (
    BlobFetch,
    assemble_run,
    decode_head,
    decode_messages,
    decode_results,
    decode_step_at,
    decode_steps_after,
    prepare_write,
    stored_at,
    summarize_row,
)
from .crypto import RowCipher
from .history import RunSummary, Step, StepTail, missing_step
from .packing import HeadPacker
from .redaction import RedactionPolicy, redaction_policy
from .store import (
    STORED_TABLES,
    Lease,
    PreparedWrite,
    RunSize,
    RunStore,
    StoredRun,
    TreeDeletion,
    check_fence,
    validate_run_id,
    with_liveness,
)

ConnT = TypeVar("ConnT")
"""What a store's transaction gives its primitives (a connection; the memory store's run map)."""
KeyT = TypeVar("KeyT")
"""A run's key in its store (see the module docstring)."""


class WouldBlock(Exception):
    """Raised by :meth:`RowStore._writing` with ``wait=False`` when the store cannot begin the
    write without blocking; :meth:`RowStore.commit` then returns False, nothing written."""


@dataclass(frozen=True, slots=True)
class HeadRow(Generic[KeyT]):
    """A run's head row as stored: its text, the revision and incarnation the store holds in
    clear, and the run's key."""

    text: Any
    rev: int | None
    incarnation: str | None
    key: KeyT


@dataclass(frozen=True, slots=True)
class Fence:
    """What the compare-and-swap of a write reads in its transaction (see :func:`check_fence`)."""

    exists: bool
    rev: int | None
    epoch: int | None
    incarnation: str | None


class StoreOptions(TypedDict, total=False):
    """The keyword options of :class:`RowStore` (see its Args), for a store whose constructor
    only passes them on (``**options: Unpack[StoreOptions]``)."""

    cipher: RowCipher | None
    redact_state_keys: RedactionPolicy | Iterable[str] | None
    max_row_bytes: int | None


class RowStore(TreeDeletion, RunStore, Generic[ConnT, KeyT]):
    """The algorithm of a store (see the module docstring); a store subclasses it and implements
    the primitives below, each a few lines of its own SQL (or dict access).

    Args:
        cipher: Encrypts every row (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys: Agent-state keys kept out of the store (see :mod:`tether.durable.redaction`).
        max_row_bytes: Refuse a message or tool-result row larger than this; None: no limit.
    """

    def __init__(
        self,
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
    ) -> None:
        self.cipher = cipher
        self.redaction = redaction_policy(redact_state_keys)
        self.max_row_bytes = max_row_bytes
        self.bytes_written = 0

    # -- reading --------------------------------------------------------------------------------

    def head(self, run_id: str) -> dict[str, Any] | None:
        """Only the run's head (cheap), or None when it does not exist."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            found = self._decoded_head(conn, run_id)
            return None if found is None else found[0]

    def load(self, run_id: str) -> StoredRun | None:
        """The run (its head, live messages and open cycle's results), or None when it does not exist."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            found = self._decoded_head(conn, run_id)
            if found is None:
                return None
            head, key, blobs = found
            rows = self._message_rows(conn, run_id, key, int(head["start_seq"]), int(head["next_seq"]))
            results = self._result_rows(conn, run_id, key, int(head["cursor"]["cycle_index"]))
            return assemble_run(run_id, head, rows, results, self.cipher, self.redaction, blobs)

    def _decoded_head(self, conn: ConnT, run_id: str) -> tuple[dict[str, Any], KeyT, BlobFetch] | None:
        """The run's decoded head, key and blob reader (None: no such run). The head must be at
        the revision the store holds: an older head written back is refused."""
        row = self._head_row(conn, run_id)
        if row is None:
            return None
        blobs = self._blob_reader(conn, run_id, row.key)
        head = decode_head(run_id, row.text, self.cipher, rev=row.rev, blobs=blobs, incarnation=row.incarnation)
        return head, row.key, blobs

    def history(self, run_id: str, *, after: int | StepTail = 0) -> list[Step]:
        """The run's steps after step ``after`` (all of them by default), in order;
        RunNotFoundError when the run does not exist. ``after`` a step number: the read costs
        the new steps and the keyframe window before them; a :class:`StepTail`: only the new
        steps, and the tail moves to the last of them."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            tail = after if isinstance(after, StepTail) else None
            if tail is not None:
                row = self._head_row(conn, run_id)
                if row is None:
                    raise RunNotFoundError(f"no run {run_id!r} in {self.where}")
                key = row.key
                if row.incarnation != tail.incarnation:  # another run under this id: not through the old one's head
                    tail.head, tail.incarnation = None, row.incarnation
            else:
                key = self._known(conn, run_id)
            read = lambda first, stop: self._step_rows(conn, run_id, key, first, stop)  # noqa: E731
            number = tail.step if tail is not None else int(after)  # type: ignore[arg-type]
            return decode_steps_after(run_id, number, read, self.cipher, self._blob_reader(conn, run_id, key), tail)

    def messages(self, run_id: str, start: int, stop: int) -> list[Message]:
        """The message rows with seq in ``[start, stop)``, in order (message rows are never
        rewritten: a conversation manager's trimming leaves them stored); RunNotFoundError when
        the run does not exist, StoreError when a row of the range is missing."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            key = self._known(conn, run_id)
            rows = self._message_rows(conn, run_id, key, start, stop) if stop > start else []
            if len(rows) != max(0, stop - start):
                raise StoreError(f"run {run_id!r}: {stop - start - len(rows)} message rows in [{start}, {stop}) are missing")
            return decode_messages(run_id, iter(rows), self.cipher, self._blob_reader(conn, run_id, key))

    def load_at(self, run_id: str, step: int) -> StoredRun:
        """The run as it was at ``step``: the step's head, the live messages then, the results
        of its cycle it names; RunNotFoundError / StoreError when absent."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            key = self._known(conn, run_id)
            blobs = self._blob_reader(conn, run_id, key)
            found = None
            if isinstance(step, int) and not isinstance(step, bool):
                read = lambda first, stop: self._step_rows(conn, run_id, key, first, stop)  # noqa: E731
                found = decode_step_at(run_id, step, read, self.cipher, blobs)
            if found is None:
                raise missing_step(run_id, step, self._count_steps(conn, run_id, key))
            head = found.head if self.redaction is None else self.redaction.fill(run_id, found.head)
            start, stop = int(head["start_seq"]), int(head["next_seq"])
            rows = self._message_rows(conn, run_id, key, start, stop)
            if len(rows) != stop - start:
                missing = stop - start - len(rows)
                raise StoreError(f"run {run_id!r}: {missing} message rows of step {step} are missing; the store is damaged")
            cycle = int(head["cursor"]["cycle_index"])
            messages = decode_messages(run_id, iter(rows), self.cipher, blobs)
            results = decode_results(run_id, iter(self._result_rows(conn, run_id, key, cycle)), self.cipher, cycle=cycle, blobs=blobs)
            return stored_at(run_id, found, messages, results)

    def list_runs(self) -> list[RunSummary]:
        """A summary of every run (an unreadable head listed ``corrupt``), by creation time then
        id; a ``running`` run whose lease no live owner holds is ``stalled``."""
        with self._reading(None) as conn:
            rows = self._head_rows(conn)
        runs = [summarize_row(run_id, text, self.cipher, rev=rev) for run_id, text, rev in rows]
        return with_liveness(runs, self._liveness(runs))

    def size(self, run_id: str) -> RunSize:
        """Rows and bytes of the run's row data by kind (see :class:`~tether.durable.store.RunSize`)."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            tables = self._table_sizes(conn, run_id, self._known(conn, run_id))
        return RunSize(run_id, {table: tables.get(table, (0, 0)) for table in STORED_TABLES})

    def _known(self, conn: ConnT, run_id: str) -> KeyT:
        """The key of run ``run_id`` (RunNotFoundError when the store does not have it)."""
        key = self._locate(conn, run_id)
        if key is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.where}")
        return key

    # -- writing --------------------------------------------------------------------------------

    def prepare(
        self,
        run_id: str,
        head: dict[str, Any],
        messages: list[Message],
        results: dict[str, ToolResult],
        step: dict[str, Any] | None,
        packer: HeadPacker | None = None,
    ) -> PreparedWrite:
        """Encode a write with the store's cipher, redaction and row limit (pure CPU, on the caller's thread)."""
        return prepare_write(
            run_id, head, messages, results, step, self.cipher, self.redaction, self.max_row_bytes, packer, head_deltas=self.head_deltas
        )

    inline_commits = True
    """Whether :meth:`commit` with ``wait=False`` can commit at all (a local database's write
    with its lock free); False for a store whose every commit is a round trip, so a durable
    session does not ask it first."""

    head_deltas = False
    """Whether the store keeps a head as a base plus a delta (see
    :meth:`~tether.durable.packing.HeadPacker.head_delta`): its writes then carry the delta."""

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write atomically: the compare-and-swap on epoch, incarnation and
        revision with the new head, then the appended rows (:meth:`_write_rows`). With
        ``wait=False`` a store that cannot commit without blocking declines (False, nothing written)."""
        try:
            with self._committing(run_id, lease=lease, wait=wait) as conn:
                self._write_rows(conn, run_id, prepared, lease)
        except WouldBlock:
            return False
        self.bytes_written += prepared.rows.size
        return True

    def _write_rows(self, conn: ConnT, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """The rows of one write, if the fence holds (else :meth:`_refused`'s error, nothing
        written): the head swapped, then the rows appended. A store may do it all in one
        statement, the fence a condition of the write itself."""
        key = self._swap_head(conn, run_id, prepared, lease)
        self._append(conn, run_id, key, prepared)

    def _swap_head(self, conn: ConnT, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> KeyT:
        """Replace the run's head if the fence holds (:meth:`_check_fence`); returns the run's key.
        A store may do both in one statement."""
        self._check_fence(conn, run_id, prepared, lease)
        return self._put_head(conn, run_id, prepared)

    def _refused(self, conn: ConnT, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> LeaseLostError:
        """Why a compare-and-swap that wrote nothing refused the write: :meth:`_check_fence`
        raises the precise error (lease lost, run replaced, another revision); when the fence
        looks fine again (it moved meanwhile) the error is a plain LeaseLostError."""
        self._check_fence(conn, run_id, prepared, lease)
        return LeaseLostError(f"run {run_id!r} was changed by another writer; nothing was written")

    def _check_fence(self, conn: ConnT, run_id: str, prepared: PreparedWrite, lease: Lease | None) -> None:
        """:func:`check_fence` on what the store holds now (LeaseLostError when it fails)."""
        fence = self._fence(conn, run_id)
        check_fence(
            run_id,
            prepared.rev,
            fence.rev,
            fence.exists,
            lease,
            fence.epoch,
            incarnation=prepared.incarnation,
            stored_incarnation=fence.incarnation,
        )

    def _delete_leased(self, run_id: str, leases: list[Lease]) -> None:
        """Delete the leased runs and all their rows (blobs too) in one transaction, each lease's
        fence checked first (see ``TreeDeletion``); the lease epochs stay: they fence."""
        with self._writing(run_id) as conn:
            if not self._fence(conn, run_id).exists:
                raise self._not_found(run_id)
            for lease in leases:
                fence = self._fence(conn, lease.run_id)
                if fence.exists:  # a nested run gone since the tree was listed has nothing to delete
                    check_fence(lease.run_id, None, None, True, lease, fence.epoch)
            for lease in leases:
                self._delete_rows(conn, lease.run_id)

    def _not_found(self, run_id: str) -> RunNotFoundError:
        return RunNotFoundError(f"no run {run_id!r} in {self.where}; nothing to delete")

    # -- leases ---------------------------------------------------------------------------------

    def lease(self, run_id: str) -> AbstractContextManager[Lease]:
        """Exclusive ownership of the run while the context is open, at a new epoch; a second
        live owner gets :class:`~tether.errors.RunLockedError`."""
        return self._lease(validate_run_id(run_id))

    def break_lease(self, run_id: str) -> int:
        """Fence off the run's owner (its next write raises LeaseLostError) and free the lease;
        returns the new epoch; RunNotFoundError for a run the store does not have."""
        validate_run_id(run_id)
        with self._reading(run_id) as conn:
            found = self._locate(conn, run_id) is not None
        if not found:
            raise RunNotFoundError(f"no run {run_id!r} in {self.where}; nothing to unlock")
        return self._break_lease(run_id)

    def _liveness(self, runs: list[RunSummary]) -> Callable[[str], bool]:
        """Whether a live owner holds a run's lease, for :meth:`list_runs` (a store may ask once for all)."""
        return self.owner_alive

    # -- the dialect: what each store implements ------------------------------------------------

    @property
    def where(self) -> str:
        """The store, as errors name it (a file, a server and database)."""
        raise NotImplementedError

    def _reading(self, run_id: str | None) -> AbstractContextManager[ConnT]:
        """A consistent read of the store (a read transaction); driver errors become StoreError
        naming ``run_id`` (None: listing runs)."""
        raise NotImplementedError

    def _writing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> AbstractContextManager[ConnT]:
        """A write transaction, committed when the context ends and rolled back on an error;
        with ``wait=False``, :class:`WouldBlock` when it cannot begin without blocking."""
        raise NotImplementedError

    def _committing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> AbstractContextManager[ConnT]:
        """Where :meth:`commit` performs :meth:`_write_rows`: a write transaction
        (:meth:`_writing`), unless the store's write is one atomic statement."""
        return self._writing(run_id, lease=lease, wait=wait)

    def _head_row(self, conn: ConnT, run_id: str) -> HeadRow[KeyT] | None:
        """The run's head row, or None when the store does not have the run."""
        raise NotImplementedError

    def _locate(self, conn: ConnT, run_id: str) -> KeyT | None:
        """The run's key, or None when the store does not have the run."""
        raise NotImplementedError

    def _blob_reader(self, conn: ConnT, run_id: str, key: KeyT) -> BlobFetch:
        """The reader of the run's blob rows (for the codec)."""
        raise NotImplementedError

    def _message_rows(self, conn: ConnT, run_id: str, key: KeyT, start: int, stop: int) -> list[tuple[int, Any]]:
        """The ``(seq, text)`` message rows with ``start <= seq < stop``, in order."""
        raise NotImplementedError

    def _result_rows(self, conn: ConnT, run_id: str, key: KeyT, cycle: int) -> list[tuple[str, Any]]:
        """The ``(toolUseId, text)`` result rows of cycle ``cycle``."""
        raise NotImplementedError

    def _step_rows(self, conn: ConnT, run_id: str, key: KeyT, first: int, stop: int | None) -> list[tuple[int, Any]]:
        """The ``(step, text)`` step rows with ``first <= step < stop`` (None: no bound), in order."""
        raise NotImplementedError

    def _count_steps(self, conn: ConnT, run_id: str, key: KeyT) -> int:
        raise NotImplementedError

    def _head_rows(self, conn: ConnT) -> list[tuple[str, Any, int | None]]:
        """``(run_id, head text, rev)`` of every run."""
        raise NotImplementedError

    def _table_sizes(self, conn: ConnT, run_id: str, key: KeyT) -> dict[str, tuple[int, int]]:
        """``(rows, bytes)`` of the run's row data by kind of row (missing kinds: none)."""
        raise NotImplementedError

    def _fence(self, conn: ConnT, run_id: str) -> Fence:
        """What the store holds of the run for the compare-and-swap (locking it for the
        transaction where the database needs that)."""
        raise NotImplementedError

    def _put_head(self, conn: ConnT, run_id: str, prepared: PreparedWrite) -> KeyT:
        """Insert or replace the run's head (the fence was checked); returns the run's key."""
        raise NotImplementedError

    def _append(self, conn: ConnT, run_id: str, key: KeyT, prepared: PreparedWrite) -> None:
        """Append the write's message and step rows, record its results, add its blobs."""
        raise NotImplementedError

    def _delete_rows(self, conn: ConnT, run_id: str) -> None:
        """Delete every row of the run (none when it is gone), its lease epoch kept."""
        raise NotImplementedError

    def _lease(self, run_id: str) -> AbstractContextManager[Lease]:
        raise NotImplementedError

    def _break_lease(self, run_id: str) -> int:
        """Bump the run's epoch and free its lease; returns the new epoch."""
        raise NotImplementedError

    def owner_alive(self, run_id: str) -> bool:
        """True when a live process holds the run's lease."""
        raise NotImplementedError

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first."""
        raise NotImplementedError

    def close(self) -> None:
        """Release resources."""
        raise NotImplementedError
