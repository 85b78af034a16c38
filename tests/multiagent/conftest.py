"""Fixtures of the multi-agent tests: every store implementation, as the durable tests have it
(``any_store`` is their ``store`` fixture, PostgreSQL from their server)."""

from __future__ import annotations

from tests.durable.conftest import pg_conninfo, pg_server  # noqa: F401  (fixtures used through any_store)
from tests.durable.conftest import store as any_store  # noqa: F401  (the fixture, under the name these tests use)
