"""Fixtures of the crashtest and contract tests: PostgreSQL (the durable tests' throwaway cluster),
and an empty working directory a check must leave empty."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.durable.conftest import pg_conninfo, pg_server

__all__ = ["clean_cwd", "pg_conninfo", "pg_server", "pg_url"]


@pytest.fixture
def pg_url(pg_conninfo: str) -> str:
    """``pg_conninfo``'s fresh database as the ``postgresql://`` URL child processes are given."""
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    return f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"


@pytest.fixture
def clean_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run the test from an empty directory, which the check must leave empty (its agents' effects
    go to the check's scratch directories, not where it was started)."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    yield here
    assert list(here.iterdir()) == []
