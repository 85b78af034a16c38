"""The inspection commands over runs made in-process: runs, show, fork, export, size."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import Agent
from tether.cli.runs import snapshot_of
from tether.snapshot import Snapshot

from ..durable.helpers import Crash, Plan, make_agent
from .conftest import Outcome, calc_call, store_of


def table_rows(out: str) -> list[list[str]]:
    """The body cells of the rich tables printed in ``out``."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


@pytest.fixture
def made(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> str:
    """A finished run ``calc`` (one calculator round) made by ``tether run``; returns its model spec."""
    spec = script(calc_call(), "It is 413.", "Again 413.")
    assert cli("run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "calc").code == 0
    return spec


def test_runs_lists_ids_statuses_and_totals(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    plan = Plan(tool_after_effect=0)
    with pytest.raises(Crash):
        make_agent(store_of(home), plan)("go", run_id="crashed")
    outcome = cli("runs")
    assert outcome.code == 0
    rows = {row[0]: row for row in table_rows(outcome.out)}
    assert rows["calc"][1:5] == ["finished", "1", "2", "30"]  # status, turns, cycles, tokens
    assert rows["crashed"][1] == "stalled"  # no live owner: resumable now


def test_show_prints_the_timeline(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    out = cli("show", "calc").out
    assert "calc" in out and "finished" in out and "tokens 30" in out
    assert f"created with: --model {made} --root {Path.cwd()}" in out.splitlines()  # what resume needs
    positions = [row[2] for row in table_rows(out) if row[0]]
    assert positions == ["turn_start", "after_model", "after_tools", "after_model", "turn_end"]
    assert "10 in / 5 out tokens" in out and "tool calculator" in out and " ok" in out


def test_show_marks_in_doubt_calls(home: Path, cli: Callable[..., Outcome]) -> None:
    store = store_of(home)
    plan = Plan(tool_after_effect=0)
    with pytest.raises(Crash):
        make_agent(store, plan)("go", run_id="d")
    make_agent(store, plan).resume("d")
    out = cli("show", "d").out
    assert "in doubt: work (tooluse_1_0) -> rerun" in out
    assert "in doubt, re-run" in out


def test_fork_then_resume_the_fork(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    before = store_of(home).load("calc")
    outcome = cli("fork", "calc", "--at", "3")
    assert outcome.code == 0 and "calc.fork-1" in outcome.out
    assert cli("fork", "calc", "--at", "1", "--new-id", "branch").code == 0
    assert f"continue it with: tether resume calc.fork-1 --model {made} --root {Path.cwd()}" in outcome.out
    resumed = cli("resume", "calc.fork-1", "--model", made)  # the same flags as the run it forks
    assert resumed.code == 0 and "It is 413." in resumed.out
    store = store_of(home)
    fork, original = store.load("calc.fork-1"), store.load("calc")
    assert fork is not None and original is not None and before is not None
    assert fork.messages == original.messages and original.messages == before.messages
    branch = store.history("branch")
    assert branch[0].forked_from == {"run_id": "calc", "step": 1} and branch[0].message_count == 1


def test_export_is_a_loadable_snapshot(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    outcome = cli("export", "calc")
    assert outcome.code == 0
    snapshot = Snapshot.from_dict(json.loads(outcome.out))
    assert snapshot.app_data == {"run_id": "calc", "status": "finished"}
    agent = Agent()
    agent.load_snapshot(snapshot)
    stored = store_of(home).load("calc")
    assert stored is not None and agent.messages == stored.messages
    assert agent.state.get("tether.cli")["model"] == made


def test_size_reports_fields_and_largest_messages(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    report = snapshot_of(store_of(home), "calc").size_report(top=2)
    out = cli("size", "calc", "--top", "2").out
    assert f"{report['total_bytes']} bytes, 4 messages" in out
    rows = table_rows(out)
    for name, size in report["fields"].items():
        assert [name, str(size)] in rows, name
    largest = [row for row in rows if len(row) == 3 and row[0].isdigit()]
    assert largest == [[str(item["index"]), item["role"], str(item["bytes"])] for item in report["largest_messages"]]
    stored = store_of(home).size("calc")
    for name, (count, size) in stored.tables.items():  # the rows as stored, by kind
        assert [name, str(count), str(size)] in rows, name
    assert f"{stored.total} bytes of rows in the store" in out and stored.tables["messages"][0] == 4


def test_size_without_a_run_lists_the_largest_runs(home: Path, made: str, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    assert cli("run", "A longer question " + "q" * 4000, "--model", script("Short."), "--run-id", "big").code == 0
    out = cli("size", "--top", "1").out
    sizes = store_of(home).run_sizes()
    assert [size.run_id for size in sizes] == ["big", "calc"]
    assert "(2 runs)" in out and "big" in out and "calc" not in out.split("(2 runs)")[1]
    assert str(sizes[0].total) in out
