"""One algorithm, stores as dialects: every store runs ``RowStore``'s load, read, write and
fence logic and supplies only its primitives (``tether.durable.rowstore``)."""

from __future__ import annotations

import pytest

from tether.durable import MemoryStore, PostgresStore, SQLiteStore
from tether.durable.rowstore import RowStore

SHARED = ("head", "load", "history", "load_at", "list_runs", "size", "write", "prepare", "commit", "delete_run", "lease", "break_lease")


@pytest.mark.parametrize("store", [SQLiteStore, PostgresStore, MemoryStore], ids=lambda cls: cls.__name__)
def test_every_store_runs_the_shared_algorithm(store: type[RowStore[object, object]]) -> None:
    assert issubclass(store, RowStore)
    copied = [name for name in SHARED if name in vars(store)]
    assert copied == [], f"{store.__name__} has its own {copied}: put the logic in RowStore and the SQL in a primitive"
