"""`MemoryStore`: an in-process RunStore, for tests and short-lived agents.

It holds the same JSON text rows as the SQLite store (so both behave alike, bytes included),
and its lease is an in-process lock set.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Unpack

from ..errors import RunLockedError, StoreError
from .codec import BlobFetch
from .rowstore import Fence, HeadRow, RowStore, StoreOptions
from .store import SCHEMA_VERSION, Lease, PreparedWrite, RunSize, largest_first, validate_run_id

_Runs = dict[str, "_Rows"]


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


class MemoryStore(RowStore[_Runs, _Rows]):
    """Runs kept in this process's memory (lost when it exits); ``cipher``,
    ``redact_state_keys`` and ``max_row_bytes`` work as for :class:`~tether.durable.SQLiteStore`.

    Keyword Args:
        cipher (RowCipher | None): Encrypts every row (e.g. :class:`~tether.durable.crypto.AESGCMCipher`).
        redact_state_keys (RedactionPolicy | Iterable[str] | None): Agent-state keys never stored
            (see :mod:`tether.durable.redaction`).
        max_row_bytes (int | None): Refuse a message or tool-result row larger than this; None: no limit."""

    def __init__(self, **options: Unpack[StoreOptions]) -> None:
        super().__init__(**options)
        self._runs: _Runs = {}
        self._mutex = threading.Lock()
        self._leased: dict[str, object] = {}  # run id -> the token of the live lease
        self._epochs: dict[str, int] = {}
        self.schema_version = SCHEMA_VERSION

    # -- the dialect of RowStore: a dict of runs, writes under a mutex --------------------------

    @property
    def where(self) -> str:
        return "this MemoryStore"

    @contextmanager
    def _reading(self, run_id: str | None) -> Iterator[_Runs]:
        yield self._runs

    @contextmanager
    def _writing(self, run_id: str, *, lease: Lease | None = None, wait: bool = True) -> Iterator[_Runs]:
        """The runs, under the mutex: a write never blocks for long, so ``wait`` makes no difference."""
        with self._mutex:
            yield self._runs

    def _head_row(self, conn: _Runs, run_id: str) -> HeadRow[_Rows] | None:
        rows = conn.get(run_id)
        return None if rows is None else HeadRow(rows.head, rows.rev, rows.incarnation, rows)

    def _locate(self, conn: _Runs, run_id: str) -> _Rows | None:
        return conn.get(run_id)

    def _blob_reader(self, conn: _Runs, run_id: str, key: _Rows) -> BlobFetch:
        return key.fetch

    def _message_rows(self, conn: _Runs, run_id: str, key: _Rows, start: int, stop: int) -> list[tuple[int, Any]]:
        return [(seq, key.messages[seq]) for seq in range(start, min(stop, len(key.messages)))]

    def _result_rows(self, conn: _Runs, run_id: str, key: _Rows, cycle: int) -> list[tuple[str, Any]]:
        return [(tid, text) for (c, tid), text in key.results.items() if c == cycle]

    def _step_rows(self, conn: _Runs, run_id: str, key: _Rows, first: int, stop: int | None) -> list[tuple[int, Any]]:
        steps = key.steps
        end = max(steps, default=0) + 1 if stop is None else stop  # the rows, not a counter: they are the truth
        return [(n, steps[n]) for n in range(first, end) if n in steps]

    def _count_steps(self, conn: _Runs, run_id: str, key: _Rows) -> int:
        return len(key.steps)

    def _head_rows(self, conn: _Runs) -> list[tuple[str, Any, int | None]]:
        return [(run_id, rows.head, rows.rev) for run_id, rows in list(conn.items())]

    def _table_sizes(self, conn: _Runs, run_id: str, key: _Rows) -> dict[str, tuple[int, int]]:
        return _sizes(key)

    def _fence(self, conn: _Runs, run_id: str) -> Fence:
        rows = conn.get(run_id)
        epoch = self._epochs.get(run_id)
        return Fence(False, None, epoch, None) if rows is None else Fence(True, rows.rev, epoch, rows.incarnation)

    def _put_head(self, conn: _Runs, run_id: str, prepared: PreparedWrite) -> _Rows:
        rows = conn.get(run_id)
        if prepared.step is not None and rows is not None and prepared.step in rows.steps:
            raise StoreError(f"run {run_id!r}: step {prepared.step} is already recorded; step rows are never rewritten")
        if rows is None:
            rows = conn[run_id] = _Rows(prepared.incarnation)
        rows.head = prepared.rows.head
        rows.rev = prepared.rev if prepared.rev is not None else rows.rev
        return rows

    def _append(self, conn: _Runs, run_id: str, key: _Rows, prepared: PreparedWrite) -> None:
        encoded = prepared.rows
        key.messages.extend(text for _, text in encoded.messages)
        key.results.update({(cycle, tid): text for cycle, tid, text in encoded.results})
        if prepared.step is not None and encoded.step is not None:
            key.steps[prepared.step] = encoded.step
        for ident, text in encoded.blobs:
            key.blobs.setdefault(ident, text)

    def _delete_rows(self, conn: _Runs, run_id: str) -> None:
        conn.pop(run_id, None)

    def run_sizes(self) -> list[RunSize]:
        """:meth:`size` of every run, the largest first."""
        return largest_first({run_id: _sizes(rows) for run_id, rows in list(self._runs.items())})

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[Lease]:
        """Exclusive ownership of the run in this process while the context is open."""
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

    def _break_lease(self, run_id: str) -> int:
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
