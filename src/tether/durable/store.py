"""The `RunStore` protocol: the few operations a durable run needs from storage.

A run is stored as append-only rows plus one small, constant-size *head* that is replaced at
every step: messages are rows (numbered by ``seq``), tool results of the open cycle are rows,
and the head holds the cursor, metrics, model state, agent state and the ``start_seq`` of the
live conversation (a conversation manager's trimming moves ``start_seq``; it never rewrites
rows). Every row is JSON text; nothing is pickled, so loading cannot run code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._json import dumps
from .._messages import decode_message_bytes, validate_messages
from ..errors import StoreError
from ..types import Message, ToolResult
from .crypto import RowCipher, open_row
from .redaction import RedactionPolicy

if TYPE_CHECKING:
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
    copy) in the same transaction; encode it with ``history.encode_step(row, cipher,
    redaction)``, decode with ``history.decode_step``. ``history`` returns the steps in order,
    ``load_at`` rebuilds the run at one step (its head copy, the message rows with seq in
    ``[head.start_seq, head.next_seq)``, the results of its cycle named in ``step.results``:
    ``history.stored_at``), and ``list_runs`` summarizes every head with
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


# -- row encoding shared by the stores -----------------------------------------------------


def encode_row(value: Any, cipher: RowCipher | None = None) -> str:
    """JSON text of a row (bytes become base64 envelopes), sealed by ``cipher`` if given."""
    text = dumps(value)
    return text if cipher is None else cipher.seal(text)


def encode_head(head: dict[str, Any], cipher: RowCipher | None = None, redaction: RedactionPolicy | None = None) -> str:
    """JSON text of a head row, without the state keys ``redaction`` keeps out of the store."""
    return encode_row(head if redaction is None else redaction.strip(head), cipher)


def decode_head(run_id: str, text: Any, cipher: RowCipher | None = None) -> dict[str, Any]:
    """Parse a head row, raising StoreError that names the run."""
    head = _parse(run_id, "head", text, cipher)
    if not isinstance(head, dict) or not isinstance(head.get("cursor"), dict) or "next_seq" not in head:
        raise StoreError(f"run {run_id!r}: the head row is corrupt (missing cursor or next_seq); the store is damaged")
    version = head.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise StoreError(
            f"run {run_id!r} was written by a newer Tether (schema {version}, this one knows {SCHEMA_VERSION}); upgrade Tether"
        )
    return head


def decode_messages(run_id: str, rows: Iterator[tuple[int, Any]], cipher: RowCipher | None = None) -> list[Message]:
    """Parse message rows (``(seq, text)``), validating each; names run and step on failure."""
    messages: list[Message] = []
    for seq, text in rows:
        message = _parse(run_id, f"message seq {seq}", text, cipher)
        validate_messages([message], [f"run {run_id!r} message seq {seq}"], StoreError)
        messages.append(message)
    decode_message_bytes(messages)
    return messages


def decode_results(run_id: str, rows: Iterator[tuple[str, Any]], cipher: RowCipher | None = None) -> dict[str, ToolResult]:
    """Parse tool-result rows of the open cycle."""
    results: dict[str, ToolResult] = {}
    for tool_use_id, text in rows:
        result = _parse(run_id, f"tool result {tool_use_id}", text, cipher)
        if not isinstance(result, dict) or result.get("toolUseId") != tool_use_id or "status" not in result:
            raise StoreError(f"run {run_id!r}: the row for tool result {tool_use_id!r} is corrupt")
        holder: list[Message] = [{"role": "user", "content": [{"toolResult": result}]}]  # type: ignore[typeddict-item]
        decode_message_bytes(holder)
        results[tool_use_id] = result  # type: ignore[assignment]
    return results


def _parse(run_id: str, what: str, text: Any, cipher: RowCipher | None = None) -> Any:
    import json

    if not isinstance(text, str):
        raise StoreError(f"run {run_id!r}: {what} is not JSON text; the store is damaged")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"run {run_id!r}: {what} is corrupt or truncated ({exc}); the store is damaged") from None
    return open_row(value, f"run {run_id!r}: {what}", cipher)
