"""PostgreSQL fixtures for the crashtest and contract tests (the durable tests' throwaway cluster)."""

from __future__ import annotations

import pytest

from tests.durable.conftest import pg_conninfo, pg_server

__all__ = ["pg_conninfo", "pg_server", "pg_url"]


@pytest.fixture
def pg_url(pg_conninfo: str) -> str:
    """``pg_conninfo``'s fresh database as the ``postgresql://`` URL child processes are given."""
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    return f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"
