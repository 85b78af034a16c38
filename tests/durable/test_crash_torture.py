"""Crash torture on top of :func:`tether.testing.crashtest`: SIGKILL the 20-cycle durable run at
save points (before and after store writes), resume each in a fresh process, and check nothing is
lost or repeated, plus two racing resumers. Every third cycle runs two calls at once, each
changing the agent state: the final state must equal an uninterrupted run's too (no change lost
or applied twice), on SQLite and on PostgreSQL.

At least 50 kills by default (crash points spread over the run's save points); ``--kills N``
(from ``pytest tests/durable``) or ``TETHER_KILLS=N`` for long local runs (``--kills 0``: all).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.testing import crashtest


def kill_target(config: pytest.Config) -> int:
    try:
        option = config.getoption("--kills")
    except ValueError:
        option = None
    if option is not None:
        return int(option)
    return int(os.environ.get("TETHER_KILLS", "50"))


def test_crash_torture(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    target = kill_target(request.config)
    report = crashtest("tests.durable.torture_agent:make_agent", "run the 20 steps", points=target or "all", workdir=tmp_path, races=2)
    print(report.summary())
    report.raise_for_failures()
    kills = report.points + report.races
    assert report.points >= min(target, 2 * report.writes) and kills >= 50
    assert report.in_doubt_reruns > 0  # some kills fell between a tool's start and its recorded result


def test_crash_torture_postgresql(pg_server: object, pg_conninfo: str, tmp_path: Path) -> None:
    """The same on a real PostgreSQL server (30 crash points spread over the run, no races)."""
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    url = f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"
    report = crashtest("tests.durable.torture_agent:make_agent", "run the 20 steps", store=url, points=30, workdir=tmp_path, races=0)
    print(report.summary())
    report.raise_for_failures()
    assert report.points == 30 and report.in_doubt_reruns > 0


def test_kill_at_every_save_point_on_postgresql(pg_server: object, pg_conninfo: str, tmp_path: Path) -> None:
    """SIGKILL before and after every save point of a run on PostgreSQL: two cycles, each with an
    idempotent call (its start rides on the write of the model's response) and an
    ``idempotent=False`` call with a reconcile (its start is a write of its own)."""
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    url = f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"
    report = crashtest("tests.testing.agents:emailing_reconciled", "send two emails", store=url, points="all", workdir=tmp_path, races=0)
    print(report.summary())
    report.raise_for_failures()
    assert report.points == 2 * report.writes and report.in_doubt_reruns > 0 and report.reconciled > 0
