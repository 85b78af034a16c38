"""bench/fleet.py at a small size: runs over two worker processes on a real PostgreSQL, one worker
SIGKILLed mid-way and restarted; every run finishes and no completed call runs twice.

The benchmark checks its own results (:func:`verify`); this test runs it small so it cannot rot,
and shows the check catches a duplicate execution that no in-doubt record explains.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def fleet() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fleet", BENCH / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_small_fleet_survives_a_killed_worker(fleet: ModuleType, pg_conninfo: str, tmp_path: Path) -> None:
    argv = ["--runs", "16", "--processes", "2", "--cycles", "2", "--tool-ms", "30", "--kill-at", "0.3", "--timeout", "240"]
    figures = fleet.main([*argv, "--store", pg_conninfo, "--workdir", str(tmp_path), "--keep", "--json"])
    assert figures["ok"], figures
    assert figures["killed_at_s"] is not None and figures["restarted_at_s"] > figures["killed_at_s"]
    assert figures["calls_distinct"] == figures["calls_expected"] == 32
    assert figures["executions"] == 32 + figures["in_doubt_reruns"]
    assert figures["commits_measured"] > 0 and figures["commit_ms_p50"] > 0

    # The check is real: a second execution of a call nobody found in doubt is reported.
    log = Path(figures["workdir"]) / "calls.log"
    first_key = log.read_text().split()[0]
    with log.open("a") as handle:
        handle.write(f"{first_key} 0\n{first_key} 0\n")
    from tether.durable import PostgresStore

    store = PostgresStore(pg_conninfo)
    try:
        checked = fleet.verify(store, fleet.parse(argv), log)
    finally:
        store.close()
    assert not checked["ok"] and checked["unexplained_duplicates"] == [first_key]


def test_a_worker_killed_before_it_started_its_runs_starts_them_when_restarted(fleet: ModuleType, pg_conninfo: str, tmp_path: Path) -> None:
    # Killed at once: its share of the runs does not exist yet; the restarted worker submits them
    # (a fleet whose restarted worker only took over stalled runs waited for them forever).
    argv = ["--runs", "6", "--processes", "2", "--cycles", "1", "--tool-ms", "10", "--kill-at", "0", "--timeout", "120"]
    figures = fleet.main([*argv, "--store", pg_conninfo, "--workdir", str(tmp_path), "--json"])
    assert figures["ok"], figures
    assert figures["calls_distinct"] == figures["calls_expected"] == 6
