"""`MemoryStore`: an in-process RunStore, for tests and short-lived agents.

It holds the same JSON text rows as the SQLite store (so both behave alike, bytes included),
and its lease is an in-process lock set.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import RunLockedError, RunNotFoundError, StoreError
from .codec import (
    assemble_run,
    decode_head,
    decode_messages,
    decode_results,
    decode_step_at,
    decode_steps,
    stored_at,
    summarize_row,
)
from .crypto import RowCipher
from .history import RunSummary, Step, missing_step
from .redaction import RedactionPolicy, redaction_policy
from .rowstore import RowWrites
from .store import (
    SCHEMA_VERSION,
    Lease,
    PreparedWrite,
    RunSize,
    StoredRun,
    TreeDeletion,
    check_fence,
    largest_first,
    validate_run_id,
    with_liveness,
)


class _Rows:
    __slots__ = ("blobs", "head", "incarnation", "messages", "results", "rev", "steps")

    def __init__(self, incarnation: str | None = None) -> None:
        self.head = ""
        self.rev: int | None = None
        self.incarnation = incarnation
        self.messages: list[str] = []
        self.results: dict[tuple[int, str], str] = {}
        self.steps: dict[int, str | bytes] = {}
        self.blobs: dict[str, str] = {}

    def fetch(self, ids: Collection[str]) -> list[tuple[Any, Any]]:
        """The blob rows of ``ids`` this run has (the row codec's ``BlobFetch``)."""
        return [(ident, self.blobs[ident]) for ident in ids if ident in self.blobs]


class MemoryStore(RowWrites, TreeDeletion):
    """Runs kept in this process's memory (lost when it exits); ``cipher``,
    ``redact_state_keys`` and ``max_row_bytes`` work as for :class:`~tether.durable.SQLiteStore`.

    Args:
        cipher: Encrypts every row (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys: Agent-state keys never stored (see :mod:`tether.durable.redaction`).
        max_row_bytes: Refuse a message or tool-result row larger than this; None: no limit."""

    def __init__(
        self,
        *,
        cipher: RowCipher | None = None,
        redact_state_keys: RedactionPolicy | Iterable[str] | None = None,
        max_row_bytes: int | None = None,
    ) -> None:
        self.cipher = cipher
        self.max_row_bytes = max_row_bytes
        self.redaction = redaction_policy(redact_state_keys)
        self._runs: dict[str, _Rows] = {}
        self._mutex = threading.Lock()
        self._leased: dict[str, object] = {}  # run id -> the token of the live lease
        self._epochs: dict[str, int] = {}
        self.bytes_written = 0
        self.schema_version = SCHEMA_VERSION

    def head(self, run_id: str) -> dict[str, Any] | None:
        rows = self._runs.get(validate_run_id(run_id))
        if rows is None:
            return None
        return decode_head(run_id, rows.head, self.cipher, rev=rows.rev, blobs=rows.fetch, incarnation=rows.incarnation)

    def load(self, run_id: str) -> StoredRun | None:
        rows = self._runs.get(validate_run_id(run_id))
        if rows is None:
            return None
        head = decode_head(run_id, rows.head, self.cipher, rev=rows.rev, blobs=rows.fetch, incarnation=rows.incarnation)
        message_rows = list(enumerate(rows.messages))[int(head["start_seq"]) : int(head["next_seq"])]
        cycle = int(head["cursor"]["cycle_index"])
        result_rows = [(tid, text) for (c, tid), text in rows.results.items() if c == cycle]
        return assemble_run(run_id, head, message_rows, result_rows, self.cipher, self.redaction, rows.fetch)

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write atomically (a compare-and-swap on revision and epoch); it never
        blocks, so ``wait`` makes no difference. Returns True."""
        encoded, rev = prepared.rows, prepared.rev
        with self._mutex:
            rows = self._runs.get(run_id)
            check_fence(
                run_id,
                rev,
                None if rows is None else rows.rev,
                rows is not None,
                lease,
                self._epochs.get(run_id),
                incarnation=prepared.incarnation,
                stored_incarnation=None if rows is None else rows.incarnation,
            )
            if prepared.step is not None and rows is not None and prepared.step in rows.steps:
                raise StoreError(f"run {run_id!r}: step {prepared.step} is already recorded; step rows are never rewritten")
            if rows is None:
                rows = self._runs[run_id] = _Rows(prepared.incarnation)
            rows.messages.extend(text for _, text in encoded.messages)
            rows.results.update({(cycle, tid): text for cycle, tid, text in encoded.results})
            rows.head = encoded.head
            rows.rev = rev if rev is not None else rows.rev
            if prepared.step is not None and encoded.step is not None:
                rows.steps[prepared.step] = encoded.step
            for ident, text in encoded.blobs:
                rows.blobs.setdefault(ident, text)
        self.bytes_written += encoded.size
        return True

    def history(self, run_id: str) -> list[Step]:
        rows = self._rows(run_id)
        return decode_steps(run_id, sorted(rows.steps.items()), self.cipher, rows.fetch)

    def load_at(self, run_id: str, step: int) -> StoredRun:
        rows = self._rows(run_id)
        found = None
        if isinstance(step, int) and not isinstance(step, bool):
            steps = rows.steps
            found = decode_step_at(
                run_id, step, lambda first, stop: [(n, steps[n]) for n in range(first, stop) if n in steps], self.cipher, rows.fetch
            )
        if found is None:
            raise missing_step(run_id, step, len(rows.steps))
        head = found.head if self.redaction is None else self.redaction.fill(run_id, found.head)
        start, stop = int(head["start_seq"]), int(head["next_seq"])
        if stop > len(rows.messages):
            raise StoreError(f"run {run_id!r}: {stop - len(rows.messages)} message rows of step {step} are missing; the store is damaged")
        messages = decode_messages(run_id, iter(list(enumerate(rows.messages))[start:stop]), self.cipher, rows.fetch)
        cycle = int(head["cursor"]["cycle_index"])
        result_rows = [(tid, text) for (c, tid), text in rows.results.items() if c == cycle]
        results = decode_results(run_id, iter(result_rows), self.cipher, cycle=cycle, blobs=rows.fetch)
        return stored_at(run_id, found, messages, results)

    def list_runs(self) -> list[RunSummary]:
        runs = [summarize_row(run_id, rows.head, self.cipher, rev=rows.rev) for run_id, rows in list(self._runs.items())]
        return with_liveness(runs, self.owner_alive)

    def _delete_leased(self, run_id: str, leases: list[Lease]) -> None:
        """Drop the leased runs and all their rows (blobs too) at once (see ``TreeDeletion``)."""
        with self._mutex:
            if run_id not in self._runs:
                raise self._not_found(run_id)
            for lease in leases:
                check_fence(lease.run_id, None, None, True, lease, self._epochs.get(lease.run_id))
            for lease in leases:
                self._runs.pop(lease.run_id, None)

    def _not_found(self, run_id: str) -> RunNotFoundError:
        return RunNotFoundError(f"no run {run_id!r} in this MemoryStore; nothing to delete")

    def size(self, run_id: str) -> RunSize:
        """Rows and bytes of the run's row data by kind (see :class:`~tether.durable.store.RunSize`)."""
        return RunSize(run_id, _sizes(self._rows(run_id)))

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first."""
        return largest_first({run_id: _sizes(rows) for run_id, rows in list(self._runs.items())})

    def _rows(self, run_id: str) -> _Rows:
        rows = self._runs.get(validate_run_id(run_id))
        if rows is None:
            raise RunNotFoundError(f"no run {run_id!r} in this MemoryStore")
        return rows

    @contextmanager
    def lease(self, run_id: str) -> Iterator[Lease]:
        """Exclusive ownership of the run in this process while the context is open."""
        validate_run_id(run_id)
        token = object()
        with self._mutex:
            if run_id in self._leased:
                raise RunLockedError(f"run {run_id!r} is owned by another invocation; wait for it to finish, then resume")
            self._leased[run_id] = token
            epoch = self._epochs[run_id] = self._epochs.get(run_id, 0) + 1
        try:
            yield Lease(run_id, epoch)
        finally:
            with self._mutex:
                if self._leased.get(run_id) is token:
                    del self._leased[run_id]

    def break_lease(self, run_id: str) -> int:
        """Fence off the run's owner (its next write raises LeaseLostError) and free the lease;
        RunNotFoundError for a run the store does not have."""
        if validate_run_id(run_id) not in self._runs:
            raise RunNotFoundError(f"no run {run_id!r} in this MemoryStore; nothing to unlock")
        with self._mutex:
            self._leased.pop(run_id, None)
            epoch = self._epochs[run_id] = self._epochs.get(run_id, 0) + 1
        return epoch

    def owner_alive(self, run_id: str) -> bool:
        """True while an invocation of this process holds the run's lease."""
        return validate_run_id(run_id) in self._leased

    def corrupt_for_test(self, run_id: str, seq: int, text: str) -> None:
        """Overwrite a message row (tests of the corrupt-row error)."""
        self._runs[run_id].messages[seq] = text

    def close(self) -> None:
        """Nothing to release."""


def _sizes(rows: _Rows) -> dict[str, tuple[int, int]]:
    def total(texts: Iterable[str | bytes]) -> tuple[int, int]:
        sizes = [len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass")) for text in texts]
        return len(sizes), sum(sizes)

    return {
        "head": total([rows.head]),
        "messages": total(rows.messages),
        "results": total(rows.results.values()),
        "steps": total(rows.steps.values()),
        "blobs": total(rows.blobs.values()),
    }
