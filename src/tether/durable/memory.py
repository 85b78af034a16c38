"""`MemoryStore`: an in-process RunStore, for tests and short-lived agents.

It holds the same JSON text rows as the SQLite store (so both behave alike, bytes included),
and its lease is an in-process lock set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import RunLockedError
from ..types import Message, ToolResult
from .store import SCHEMA_VERSION, StoredRun, decode_head, decode_messages, decode_results, encode_row, validate_run_id


class _Rows:
    __slots__ = ("head", "messages", "results")

    def __init__(self) -> None:
        self.head = ""
        self.messages: list[str] = []
        self.results: dict[tuple[int, str], str] = {}


class MemoryStore:
    """Runs kept in this process's memory (lost when it exits)."""

    def __init__(self) -> None:
        self._runs: dict[str, _Rows] = {}
        self._mutex = threading.Lock()
        self._leased: set[str] = set()
        self.bytes_written = 0
        self.schema_version = SCHEMA_VERSION

    def head(self, run_id: str) -> dict[str, Any] | None:
        rows = self._runs.get(validate_run_id(run_id))
        return None if rows is None else decode_head(run_id, rows.head)

    def load(self, run_id: str) -> StoredRun | None:
        rows = self._runs.get(validate_run_id(run_id))
        if rows is None:
            return None
        head = decode_head(run_id, rows.head)
        start = int(head["start_seq"])
        messages = decode_messages(run_id, iter(list(enumerate(rows.messages))[start:]))
        cycle = int(head["cursor"]["cycle_index"])
        results = decode_results(run_id, iter([(tid, text) for (c, tid), text in rows.results.items() if c == cycle]))
        return StoredRun(run_id, head, messages, results)

    def write(self, run_id: str, head: dict[str, Any], messages: list[Message], results: dict[str, ToolResult]) -> None:
        rows = self._runs.get(validate_run_id(run_id))
        if rows is None:
            rows = self._runs[run_id] = _Rows()
        texts = [encode_row(message) for message in messages]
        cycle = int(head["cursor"]["cycle_index"])
        result_texts = {(cycle, tid): encode_row(result) for tid, result in results.items()}
        head_text = encode_row(head)
        rows.messages.extend(texts)
        rows.results.update(result_texts)
        rows.head = head_text
        self.bytes_written += sum(map(len, texts)) + sum(map(len, result_texts.values())) + len(head_text)

    @contextmanager
    def lease(self, run_id: str) -> Iterator[None]:
        validate_run_id(run_id)
        with self._mutex:
            if run_id in self._leased:
                raise RunLockedError(f"run {run_id!r} is owned by another invocation; wait for it to finish, then resume")
            self._leased.add(run_id)
        try:
            yield
        finally:
            with self._mutex:
                self._leased.discard(run_id)

    def corrupt_for_test(self, run_id: str, seq: int, text: str) -> None:
        """Overwrite a message row (tests of the corrupt-row error)."""
        self._runs[run_id].messages[seq] = text

    def close(self) -> None:
        """Nothing to release."""
