"""What every store does the same way around the row codec: the write path (encode, then commit)."""

from __future__ import annotations

from typing import Any

from ..types import Message, ToolResult
from .codec import prepare_write
from .crypto import RowCipher
from .packing import HeadPacker
from .redaction import RedactionPolicy
from .store import Lease, PreparedWrite


class RowWrites:
    """The write half every store shares: ``write`` is ``commit(prepare(...))`` and ``prepare``
    encodes with the store's ``cipher``, ``redaction`` and ``max_row_bytes``. A store sets those
    three attributes and implements :meth:`commit` (the I/O)."""

    cipher: RowCipher | None
    redaction: RedactionPolicy | None
    max_row_bytes: int | None

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
        """Append rows (and the step row) and replace the head, atomically (see ``RunStore.write``)."""
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
        """Encode a write (pure CPU, on the caller's thread)."""
        return prepare_write(run_id, head, messages, results, step, self.cipher, self.redaction, self.max_row_bytes, packer)

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write (each store implements it)."""
        raise NotImplementedError
