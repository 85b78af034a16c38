"""The inspection commands over runs made in-process: runs, show, fork, export, size."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import Agent, tool
from tether.cli.runs import snapshot_of
from tether.models import ScriptedModel, tool_call
from tether.snapshot import Snapshot
from tether.tools.context import ToolContext

from ..durable.helpers import Crash, Plan, make_agent
from .conftest import Outcome, calc_call, json_fields, store_of


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
    shown = cli("show", "crashed").out.splitlines()
    assert shown[0].startswith("crashed  stalled  turns 1")  # as in the list, not the head's "running"
    assert "stalled run crashed (its process died): resume it with `tether resume crashed`" in shown


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


def test_export_as_typescript_is_the_same_state_in_the_typescript_sdk_shape(home: Path, made: str, cli: Callable[..., Outcome]) -> None:
    outcome = cli("export", "calc", "--format", "typescript")
    assert outcome.code == 0
    document = json.loads(outcome.out)
    assert set(document) == {"scope", "schemaVersion", "createdAt", "data", "appData"}
    assert {"messages", "state", "systemPrompt", "modelState", "interrupts"} <= set(document["data"])
    assert document["appData"] == {"run_id": "calc", "status": "finished"}
    from_ts, from_tether = Agent(), Agent()
    from_ts.load_snapshot(document)
    from_tether.load_snapshot(json.loads(cli("export", "calc").out))
    assert from_ts.messages == from_tether.messages and len(from_ts.messages) == 4
    assert from_ts.run_state == from_tether.run_state


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


def waiting_and_stopped(home: Path) -> str:
    """Two runs made with the SDK: ``waiting`` waits for an answer to its ``approve`` interrupt,
    ``ctrl-c`` was stopped by Ctrl-C. Returns the interrupt's id."""
    store = store_of(home)

    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a human."""
        return str(ctx.interrupt("approve"))

    waiting = Agent(model=ScriptedModel([tool_call("ask")]), tools=[ask], store=store)("q", run_id="waiting")
    with pytest.raises(KeyboardInterrupt):
        Agent(model=ScriptedModel([KeyboardInterrupt()]), store=store)("q", run_id="ctrl-c")
    (interrupt,) = waiting.interrupts
    return interrupt.id


def test_stopped_and_interrupted_runs_are_distinct_each_with_the_command_that_continues_it(
    home: Path, made: str, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    ident = waiting_and_stopped(home)
    assert cli("fork", "calc", "--at", "3", "--new-id", "half").code == 0  # mid-turn: paused
    outcome = cli("runs")
    assert {row[0]: row[1] for row in table_rows(outcome.out)} == {
        "calc": "finished",
        "waiting": "interrupted",
        "ctrl-c": "stopped",
        "half": "paused",
    }
    lines = outcome.out.splitlines()
    assert f"interrupted run waiting waits for answers (approve): answer with `tether resume waiting --answer {ident}=VALUE`" in lines
    assert "stopped run ctrl-c (Ctrl-C or cancelled): continue it with `tether resume ctrl-c`" in lines  # no stored flags
    assert f"paused run half (at a checkpoint): continue it with `tether resume half --model {made} --root {Path.cwd()}`" in lines
    assert [row[0] for row in table_rows(cli("runs", "--status", "stopped").out)] == ["ctrl-c"]

    shown = cli("show", "waiting").out.splitlines()
    assert f"interrupted run waiting waits for answers (approve): answer with `tether resume waiting --answer {ident}=VALUE`" in shown
    assert "stopped run ctrl-c (Ctrl-C or cancelled): continue it with `tether resume ctrl-c`" in cli("show", "ctrl-c").out
    assert "continue it with" not in cli("show", "calc").out  # finished: nothing to continue

    resumed = cli("resume", "ctrl-c", "--model", script("resumed after Ctrl-C"))  # the command, with the user's flags
    assert resumed.code == 0 and "resumed after Ctrl-C" in resumed.out
    assert {run.run_id: run.status for run in store_of(home).list_runs()}["ctrl-c"] == "finished"


def test_a_ctrl_c_run_stored_by_an_older_tether_as_interrupted_is_continued_with_a_plain_resume(
    home: Path, made: str, cli: Callable[..., Outcome]
) -> None:
    waiting_and_stopped(home)
    with contextlib.closing(sqlite3.connect(home / "runs.db")) as db, db:  # before "stopped", Ctrl-C was stored so
        (text,) = db.execute("SELECT head FROM runs WHERE run_id = 'ctrl-c'").fetchone()
        db.execute("UPDATE runs SET head = ? WHERE run_id = 'ctrl-c'", (json.dumps({**json.loads(text), "status": "interrupted"}),))
    outcome = cli("runs")
    assert {row[0]: row[1] for row in table_rows(outcome.out)}["ctrl-c"] == "interrupted"
    assert "interrupted run ctrl-c: continue it with `tether resume ctrl-c`" in outcome.out.splitlines()  # no answers to give


def test_runs_json_lists_the_runs_with_the_fields_its_help_names(
    tmp_path: Path,
    home: Path,
    made: str,
    cli: Callable[..., Outcome],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ident = waiting_and_stopped(home)
    documented = json_fields("runs", capsys, monkeypatch)
    outcome = cli("runs", "--json")
    assert outcome.code == 0 and outcome.err == ""
    listed = json.loads(outcome.out)
    assert [list(run) for run in listed] == [documented] * 3
    runs = {run["run_id"]: run for run in listed}
    calc = runs["calc"]
    assert {key: calc[key] for key in ("status", "parent_run_id", "turns", "cycles", "steps", "total_tokens", "stop_reason")} == {
        "status": "finished",
        "parent_run_id": None,
        "turns": 1,
        "cycles": 2,
        "steps": 5,
        "total_tokens": 30,
        "stop_reason": "end_turn",
    }
    assert calc["created_with"] == ["--model", made, "--root", str(Path.cwd())] and calc["continue_with"] is None
    assert calc["created_at"] <= calc["updated_at"] and calc["problem"] is None
    assert (runs["ctrl-c"]["status"], runs["ctrl-c"]["continue_with"], runs["ctrl-c"]["created_with"]) == (
        "stopped",
        "tether resume ctrl-c",
        None,
    )
    assert runs["waiting"]["continue_with"] == f"tether resume waiting --answer {ident}=VALUE"
    assert [run["run_id"] for run in json.loads(cli("runs", "--json", "--status", "stopped").out)] == ["ctrl-c"]
    assert json.loads(cli("runs", "--json", "--store", str(tmp_path / "none.db")).out) == []


def test_show_prints_the_verdict_of_a_resume_by_changed_code(home: Path, cli: Callable[..., Outcome]) -> None:
    from ..manifest.deploys import answer, build

    store, log = store_of(home), list[str]()
    first = build("same", log, store=store)("go", run_id="v")
    renamed = build("renamed", log, store=store)
    renamed.migrations.rename_tool("send", "deliver")
    assert str(renamed.resume("v", answer(first))) == "done" and log == ["deliver bob yes"]
    rows = table_rows(cli("show", "v").out)
    (verdict,) = [row for row in rows if row[2] == "verdict"]
    assert verdict[3] == "migratable: tool_renamed:send, tool_added:deliver, tool_removed:send"


def test_show_verdict_cell_escapes_stored_text() -> None:
    from rich.console import Console

    from tether.cli.runs import _details
    from tether.durable.history import Step

    differences = [{"name": "tool_removed:[bold]x\x1b[31m"}, "not a difference"]
    verdict = {"verdict": "incompatible", "differences": differences, "allowed": ["tool_removed:[bold]x"]}
    step = Step(3, "verdict", 1, 2, 2, "2026-01-01T00:00:00Z", "interrupted", verdict=verdict)
    console = Console(width=400, record=True, color_system="truecolor", highlight=False)
    console.print(_details(step))
    assert console.export_text(clear=False).strip() == "incompatible: tool_removed:[bold]x\\x1b[31m (allowed: tool_removed:[bold]x)"
    assert "\x1b[31m" in console.export_text(styles=True)  # the verdict is red (incompatible)
