"""``tether rm RUN...`` and ``tether prune --older-than DAYS``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tether import Agent
from tether.cli.delete import _older
from tether.durable.history import RunSummary
from tether.models import ScriptedModel, tool_call

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


# -- multi-agent runs: a run goes with its tree of nested runs ------------------------------------


def lead_run(home: Path, run_id: str, *, fail: bool = False) -> list[str]:
    """A lead agent that asks a researcher agent (a nested run of it) and then answers, or, with
    ``fail``, fails after the researcher answered. Returns the ids of the run and its child."""
    store = store_of(home)
    child = Agent(model=ScriptedModel(["found it"]), name="researcher")
    replies: list[Any] = [tool_call("researcher", {"input": "look"}), RuntimeError("the lead broke") if fail else "done"]
    lead = Agent(model=ScriptedModel(replies), tools=[child], name="lead", store=store)
    if fail:
        with pytest.raises(RuntimeError):
            lead("go", run_id=run_id)
    else:
        lead("go", run_id=run_id)
    tree = [run_id, *(run.run_id for run in store.list_runs() if run.parent_run_id == run_id)]
    assert len(tree) == 2
    return tree


def test_rm_deletes_a_run_with_its_nested_runs_and_lists_them(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    tree = lead_run(home, "daily")
    make(cli, script, "daily.v2")
    outcome = cli("rm", "daily")
    assert outcome.code == 0 and outcome.out.splitlines() == [f"deleted {ident}" for ident in tree]
    assert ids(home) == ["daily.v2"]


def test_rm_force_fences_off_a_live_owner_of_a_nested_run(home: Path, cli: Callable[..., Outcome]) -> None:
    tree = lead_run(home, "daily")
    store = store_of(home)
    with store.lease(tree[1]):
        refused = cli("rm", "daily")
        one_line_error(refused, "tether rm", "'daily'", "nested", "live process", "--force")
        assert ids(home) == sorted(tree)
        forced = cli("rm", "daily", "--force")
        assert forced.code == 0 and forced.out.splitlines() == [f"deleted {ident}" for ident in tree]
    assert ids(home) == []


def test_prune_takes_whole_trees_and_never_a_nested_run_on_its_own(home: Path, cli: Callable[..., Outcome]) -> None:
    tree = lead_run(home, "daily", fail=True)
    statuses = {run.run_id: run.status for run in store_of(home).list_runs()}
    assert statuses == {tree[0]: "failed", tree[1]: "finished"}
    none = cli("prune", "--older-than", "0", "--status", "finished")
    assert none.out.splitlines() == ["deleted 0 runs not updated for 0 days"]  # the finished child stays with its parent
    assert ids(home) == sorted(tree)
    dry = cli("prune", "--older-than", "0", "--status", "failed", "--dry-run")
    assert dry.out.splitlines() == [*(f"would delete {ident}" for ident in tree), "would delete 2 runs not updated for 0 days"]
    with store_of(home).lease(tree[1]):
        kept = cli("prune", "--older-than", "0")
    assert kept.out.splitlines() == ["deleted 0 runs not updated for 0 days; kept 1 with a live owner (daily)"]
    done = cli("prune", "--older-than", "0", "--status", "failed")
    assert done.out.splitlines() == [*(f"deleted {ident}" for ident in tree), "deleted 2 runs not updated for 0 days"]
    assert ids(home) == []
