"""``tether rm RUN...`` and ``tether prune --older-than DAYS``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tether.cli.delete import _older
from tether.durable.history import RunSummary

from .conftest import Outcome, one_line_error, store_of


def make(cli: Callable[..., Outcome], script: Callable[..., str], *run_ids: str) -> None:
    for run_id in run_ids:
        assert cli("run", "hi", "--model", script("hello"), "--run-id", run_id).code == 0


def ids(home: Path) -> list[str]:
    return sorted(run.run_id for run in store_of(home).list_runs())


def test_rm_deletes_the_named_runs(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    make(cli, script, "a", "b", "c")
    outcome = cli("rm", "a", "c")
    assert outcome.code == 0 and outcome.out.splitlines() == ["deleted a", "deleted c"]
    assert ids(home) == ["b"]
    one_line_error(cli("show", "a"), "no run 'a'")


def test_rm_of_a_missing_run_says_so_and_deletes_the_others(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    make(cli, script, "a")
    outcome = cli("rm", "ghost", "a")
    assert outcome.code == 1 and outcome.out.splitlines() == ["deleted a"]
    one_line_error(outcome, "tether rm", "no run 'ghost'")
    assert ids(home) == []


def test_rm_refuses_a_run_with_a_live_owner_unless_forced(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    make(cli, script, "busy")
    store = store_of(home)
    with store.lease("busy"):  # a live owner (another open file's flock is exclusive even in this process)
        refused = cli("rm", "busy")
        one_line_error(refused, "tether rm", "'busy'", "live process", "--force")
        assert ids(home) == ["busy"]
        forced = cli("rm", "busy", "--force")
        assert forced.code == 0 and forced.out.strip() == "deleted busy"
    assert ids(home) == []


def test_prune_deletes_only_runs_older_than_the_cutoff(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    make(cli, script, "a", "b")
    kept = cli("prune", "--older-than", "1")
    assert kept.code == 0 and kept.out.splitlines() == ["deleted 0 runs not updated for 1 day"]
    assert ids(home) == ["a", "b"]
    dry = cli("prune", "--older-than", "0", "--dry-run")
    assert dry.out.splitlines() == ["would delete a", "would delete b", "would delete 2 runs not updated for 0 days"]
    assert ids(home) == ["a", "b"]
    store = store_of(home)
    with store.lease("b"):
        done = cli("prune", "--older-than", "0")
    assert done.out.splitlines() == ["deleted a", "deleted 1 run not updated for 0 days; kept 1 with a live owner (b)"]
    assert ids(home) == ["b"]


def test_prune_cutoff_reads_the_update_time() -> None:
    now = datetime.now(UTC)

    def run(updated: str | None) -> RunSummary:
        return RunSummary("r", "finished", 1, 1, 1, None, updated)

    cutoff = now - timedelta(days=2)
    assert _older(run((now - timedelta(days=3)).isoformat().replace("+00:00", "Z")), cutoff)
    assert not _older(run((now - timedelta(days=1)).isoformat()), cutoff)
    assert not _older(run(None), cutoff) and not _older(run("garbage"), cutoff)  # no age: never pruned


def test_prune_needs_a_number_of_days(home: Path, cli: Callable[..., Outcome]) -> None:
    one_line_error(cli("prune", "--older-than", "soon"), "--older-than", "'soon'")
    one_line_error(cli("prune", "--older-than", "-1"), "--older-than")
    one_line_error(cli("prune"), "--older-than")


def test_rm_deletes_a_corrupt_run(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    make(cli, script, "bad", "good")
    with sqlite3.connect(home / "runs.db") as conn:
        conn.execute("UPDATE runs SET head = '{not json' WHERE run_id = 'bad'")
    assert {run.run_id: run.status for run in store_of(home).list_runs()}["bad"] == "corrupt"
    done = cli("rm", "bad")
    assert done.code == 0 and done.out.strip() == "deleted bad"
    assert ids(home) == ["good"]
