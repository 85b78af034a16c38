"""Encoding one store write and assembling one loaded run: the part every store shares.

A store only decides where rows go (tables, a dict); what a row holds — JSON text, encrypted
with the store's cipher, the head stripped of redacted state keys — is decided here once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import StoreError
from ..types import Message, ToolResult
from .crypto import RowCipher
from .history import encode_step
from .redaction import RedactionPolicy
from .store import StoredRun, decode_messages, decode_results, encode_head, encode_row


@dataclass(frozen=True, slots=True)
class EncodedWrite:
    """The rows of one atomic step: ``(seq, text)`` messages, ``(cycle, toolUseId, text)`` results."""

    messages: list[tuple[int, str]]
    results: list[tuple[int, str, str]]
    head: str
    step: str | None

    @property
    def size(self) -> int:
        """Bytes of row text this write stores (for ``bytes_written``)."""
        return (
            sum(len(text) for _, text in self.messages)
            + sum(len(text) for _, _, text in self.results)
            + len(self.head)
            + len(self.step or "")
        )


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
