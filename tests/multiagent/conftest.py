"""Fixtures of the multi-agent tests: every store implementation (PostgreSQL from the durable tests' server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.durable.conftest import pg_conninfo, pg_server  # noqa: F401  (fixtures used through any_store)
from tether.durable import MemoryStore, RunStore, SQLiteStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """Each store implementation."""
    made: RunStore
    if request.param == "postgres":
        from tether.durable.postgres import PostgresStore

        made = PostgresStore(request.getfixturevalue("pg_conninfo"))
    else:
        made = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "runs.db")
    yield made
    made.close()
