"""The `RunStore` protocol: the few operations a durable run needs from storage.

A run is stored as append-only rows plus one small, constant-size *head* that is replaced at
every step: messages are rows (numbered by ``seq``), tool results of the open cycle are rows,
and the head holds the cursor, metrics, model state, agent state and the ``start_seq`` of the
live conversation (a conversation manager's trimming moves ``start_seq``; it never rewrites
rows). Every row is JSON text; nothing is pickled, so loading cannot run code.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import StoreError
from ..types import Message, ToolResult
from .history import RunSummary, Step

SCHEMA_VERSION = 1
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def validate_run_id(run_id: Any) -> str:
    """Return ``run_id`` if it is a safe run id, else raise :class:`StoreError` naming it."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id) or run_id in (".", ".."):
        raise StoreError(f"run_id {run_id!r} is invalid: use 1-128 characters from A-Z a-z 0-9 . _ : - (not '.' or '..')")
    return run_id


@dataclass
class StoredRun:
    """A run as loaded from a store: the head and the live rows."""

    run_id: str
    head: dict[str, Any]
    messages: list[Message]
    results: dict[str, ToolResult] = field(default_factory=dict)


@runtime_checkable
class RunStore(Protocol):
    """Storage for durable runs (SQLite, PostgreSQL, memory).

    ``write`` is one atomic step: it appends ``messages`` (numbered from ``head["next_seq"] -
    len(messages)``), appends ``results`` of cycle ``head["cursor"]["cycle_index"]`` and
    replaces the head. ``lease`` is held while an invocation runs; a second concurrent lease on
    the same run raises :class:`~tether.errors.RunLockedError`.

    Time travel (:mod:`tether.durable.history`): ``write(..., step=row)`` also appends the
    step row ``row`` (a dict with an int ``"step"`` number, unique per run, and a ``"head"``
    copy) in the same transaction; encode it with ``rows.encode_step(row, cipher,
    redaction)``, decode with ``rows.decode_step``. ``history`` returns the steps in order,
    ``load_at`` rebuilds the run at one step (its head copy, the message rows with seq in
    ``[head.start_seq, head.next_seq)``, the results of its cycle named in ``step.results``:
    ``rows.stored_at``), and ``list_runs`` summarizes every head with
    ``history.summary_of``. Step rows, like message rows, are never rewritten.
    """

    bytes_written: int

    def load(self, run_id: str) -> StoredRun | None:
        """The run, or None when the store has no run with that id."""
        ...

    def head(self, run_id: str) -> dict[str, Any] | None:
        """Only the run's head (cheap), or None when it does not exist."""
        ...

    def write(
        self, run_id: str, head: dict[str, Any], messages: list[Message], results: dict[str, ToolResult], step: dict[str, Any] | None = None
    ) -> None:
        """Append rows (and the step row, if any) and replace the head, atomically."""
        ...

    def history(self, run_id: str) -> list[Step]:
        """The run's steps in order; raises RunNotFoundError when the run does not exist."""
        ...

    def load_at(self, run_id: str, step: int) -> StoredRun:
        """The run as it was at ``step``; RunNotFoundError / StoreError when absent."""
        ...

    def list_runs(self) -> list[RunSummary]:
        """A summary of every run in the store, ordered by creation time then run id."""
        ...

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        """Exclusive ownership of the run while the context is open."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...
