"""The row codec of the durable stores: every row to text, and text back to rows.

A store only decides where rows go (tables, a dict); what a row holds is decided here once.
Every row is JSON text (bytes inside messages as ``{"$b64": ...}`` envelopes), sealed by the
store's cipher when it has one (:mod:`tether.durable.crypto`); the head, and the head copy in a
step row, lose the state keys the redaction policy keeps out of the store. Reading a row
parses it, opens its seal, and checks it, so a damaged store is reported as a
:class:`~tether.errors.StoreError` naming the run and the row, never misread.

The rows: the *head* (one per run, replaced at every step), *message* rows (numbered by
``seq``), *result* rows (the tool results of the open cycle) and *step* rows (the time-travel
history, :mod:`tether.durable.history`). Nothing is pickled, so loading cannot run code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .._json import dumps
from .._messages import decode_message_bytes, validate_messages
from ..errors import ShapeError, StoreError
from ..types import Message, ToolResult
from .crypto import RowCipher, open_row
from .history import Step
from .redaction import RedactionPolicy
from .store import SCHEMA_VERSION, EncodedWrite, PreparedWrite, StoredRun, check_row_sizes, head_revision, validate_run_id

# -- writing ---------------------------------------------------------------------------------


def encode_row(value: Any, cipher: RowCipher | None = None) -> str:
    """JSON text of a row (bytes become base64 envelopes), sealed by ``cipher`` if given."""
    text = dumps(value)
    return text if cipher is None else cipher.seal(text)


def encode_head(head: dict[str, Any], cipher: RowCipher | None = None, redaction: RedactionPolicy | None = None) -> str:
    """JSON text of a head row, without the state keys ``redaction`` keeps out of the store."""
    return encode_row(head if redaction is None else redaction.strip(head), cipher)


def encode_step(step: dict[str, Any], cipher: RowCipher | None = None, redaction: RedactionPolicy | None = None) -> str:
    """JSON text of a step row; the head copy loses the redacted state keys, like the head row."""
    if redaction is not None:
        step = {**step, "head": redaction.strip(step["head"])}
    return encode_row(step, cipher)


def encode_write(
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
) -> EncodedWrite:
    """Encode the rows of ``RunStore.write`` (messages numbered up to ``head["next_seq"]``)."""
    first = int(head["next_seq"]) - len(messages)
    cycle = int(head["cursor"]["cycle_index"])
    return EncodedWrite(
        messages=[(first + i, encode_row(message, cipher)) for i, message in enumerate(messages)],
        results=[(cycle, tool_use_id, encode_row(result, cipher)) for tool_use_id, result in results.items()],
        head=encode_head(head, cipher, redaction),
        step=None if step is None else encode_step(step, cipher, redaction),
    )


# -- reading ---------------------------------------------------------------------------------


def prepare_write(
    run_id: str,
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    max_row_bytes: int | None,
) -> PreparedWrite:
    """Encode and check the rows of a write the way every store does (``RunStore.prepare``)."""
    validate_run_id(run_id)
    rows = encode_write(head, messages, results, step, cipher, redaction)
    check_row_sizes(run_id, rows.messages, rows.results, max_row_bytes)
    return PreparedWrite(rows, head_revision(head), None if step is None else int(step["step"]))


def parse_row(run_id: str, what: str, text: Any, cipher: RowCipher | None = None) -> Any:
    """The JSON value of one row's text, its seal opened; ``StoreError`` naming the run and ``what``."""
    if not isinstance(text, str):
        raise StoreError(f"run {run_id!r}: {what} is not JSON text; the store is damaged")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"run {run_id!r}: {what} is corrupt or truncated ({exc}); the store is damaged") from None
    return open_row(value, f"run {run_id!r}: {what}", cipher)


def decode_head(run_id: str, text: Any, cipher: RowCipher | None = None) -> dict[str, Any]:
    """Parse a head row, raising StoreError that names the run."""
    head = parse_row(run_id, "head", text, cipher)
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
        message = parse_row(run_id, f"message seq {seq}", text, cipher)
        try:
            validate_messages([message], [f"run {run_id!r} message seq {seq}"])
        except ShapeError as exc:
            raise StoreError(str(exc)) from None
        messages.append(message)
    decode_message_bytes(messages)
    return messages


def decode_results(run_id: str, rows: Iterator[tuple[str, Any]], cipher: RowCipher | None = None) -> dict[str, ToolResult]:
    """Parse tool-result rows of the open cycle."""
    results: dict[str, ToolResult] = {}
    for tool_use_id, text in rows:
        result = parse_row(run_id, f"tool result {tool_use_id}", text, cipher)
        if not isinstance(result, dict) or result.get("toolUseId") != tool_use_id or "status" not in result:
            raise StoreError(f"run {run_id!r}: the row for tool result {tool_use_id!r} is corrupt")
        holder: list[Message] = [{"role": "user", "content": [{"toolResult": result}]}]  # type: ignore[typeddict-item]
        decode_message_bytes(holder)
        results[tool_use_id] = result  # type: ignore[assignment]
    return results


def decode_step(run_id: str, number: int, text: Any, cipher: RowCipher | None = None) -> Step:
    """Parse a step row, raising :class:`StoreError` naming the run and the step."""
    row = parse_row(run_id, f"step {number}", text, cipher)
    try:
        if not isinstance(row, dict) or not isinstance(row["head"], dict) or int(row["step"]) != number:
            raise TypeError("not a step row")
        return Step(
            step=number,
            position=str(row["position"]),
            cycle_index=int(row["cycle_index"]),
            seq=int(row["seq"]),
            message_count=int(row["message_count"]),
            created_at=str(row["created_at"]),
            status=str(row.get("status") or "running"),
            stop_reason=row.get("stop_reason"),
            model=row.get("model"),
            tools=list(row.get("tools") or []),
            in_doubt=list(row.get("in_doubt") or []),
            results=list(row.get("results") or []),
            forked_from=row.get("forked_from"),
            head=row["head"],
        )
    except (KeyError, TypeError, ValueError):
        raise StoreError(f"run {run_id!r}: the row of step {number} is corrupt; the store is damaged") from None


# -- assembling a loaded run -----------------------------------------------------------------


def assemble_run(
    run_id: str,
    head: dict[str, Any],
    message_rows: list[tuple[int, Any]],
    result_rows: Iterable[tuple[str, Any]],
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
) -> StoredRun:
    """A loaded run from its decoded head and raw rows; missing rows are a damaged store."""
    expected = int(head["next_seq"]) - int(head["start_seq"])
    if len(message_rows) != expected:
        raise StoreError(f"run {run_id!r}: {expected - len(message_rows)} message rows are missing; the store is damaged")
    if redaction is not None:
        head = redaction.fill(run_id, head)
    return StoredRun(run_id, head, decode_messages(run_id, iter(message_rows), cipher), decode_results(run_id, iter(result_rows), cipher))


def stored_at(run_id: str, step: Step, messages: list[Message], results: dict[str, ToolResult]) -> StoredRun:
    """The run as it was at ``step``: its head copy, the live messages then, the results then."""
    kept = set(step.results)
    return StoredRun(run_id, step.head, messages, {k: v for k, v in results.items() if k in kept})
