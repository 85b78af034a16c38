"""Fixtures of the durable tests: every RunStore implementation, and the --kills option."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tether.durable import MemoryStore, RunStore, SQLiteStore


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--kills", type=int, default=None, help="SIGKILLs in the crash-torture test (default 50)")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """Each store implementation (PostgreSQL joins here later)."""
    made: RunStore = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "runs.db")
    yield made
    made.close()


def corrupt_message(store: RunStore, run_id: str, seq: int, text: str) -> None:
    """Overwrite one stored message row with ``text`` (behind the store's back)."""
    if isinstance(store, MemoryStore):
        store.corrupt_for_test(run_id, seq, text)
    else:
        assert isinstance(store, SQLiteStore)
        with sqlite3.connect(store.path) as conn:
            conn.execute("UPDATE messages SET body = ? WHERE run_id = ? AND seq = ?", (text, run_id, seq))


Corrupt = Callable[[RunStore, str, int, str], None]
