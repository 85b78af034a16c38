"""Fixtures of the benchmark tests: the session's throwaway PostgreSQL server (durable-pg)."""

from tests.durable.conftest import pg_conninfo, pg_server  # noqa: F401
