"""Run liveness from the operator's side: ``tether runs`` statuses, ``resume --stalled``, ``unlock``.

A stalled run is made the way it happens for real: a ``tether run`` process is killed (SIGKILL)
while its model call waits at a gate (a ``wait_for`` reply of the scripted model), so its head
says ``running`` and the kernel has freed its lease. The lease of a *live* owner is held either
by such a process still waiting, or by ``store.lease`` in this test process (a flock on another
open file is exclusive even within one process).
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from tether.durable import SQLiteStore
from tether.errors import LeaseLostError

from .conftest import Outcome, calc_call, one_line_error, store_of, tether_process
from .test_runs import table_rows

PROMPT = "What is 12 * 34 + 5?"


def gated(script: Callable[..., str], gate: Path) -> str:
    """A model spec: one calculator call, then (once ``gate`` exists) the answer."""
    return script(calc_call(), {"wait_for": str(gate), "then": "It is 413."})


def start_waiting(home: Path, run_id: str, spec: str) -> subprocess.Popen[str]:
    """Start ``tether run`` and return once its second model call waits at the gate."""
    process = tether_process("run", PROMPT, "--model", spec, "--run-id", run_id, home=home)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("<- 413"):  # the tool ran; the next model call waits for the gate
            return process
    out, err = process.communicate(timeout=60)
    raise AssertionError(f"tether run {run_id} did not reach the gate: {out!r} {err!r}")


def kill_mid_run(home: Path, *runs: tuple[str, str], sig: int = signal.SIGKILL) -> None:
    """Start a ``tether run`` per ``(run_id, spec)`` and send each ``sig`` while it waits at its gate."""
    processes = [start_waiting(home, run_id, spec) for run_id, spec in runs]
    for process in processes:
        process.send_signal(sig)
    for process in processes:
        process.communicate(timeout=60)
        assert process.returncode in (-signal.SIGKILL, 130), process.returncode


def statuses(home: Path) -> dict[str, str]:
    return {run.run_id: run.status for run in store_of(home).list_runs()}


def rev(store: SQLiteStore, run_id: str) -> int:
    head = store.head(run_id)
    assert head is not None
    return int(head["rev"])


# -- tether runs ------------------------------------------------------------------------------


def test_runs_shows_stalled_runs_with_the_command_that_resumes_them(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    assert cli("run", PROMPT, "--model", script(calc_call(), "It is 413."), "--run-id", "calc").code == 0
    spec = gated(script, tmp_path / "gate")
    kill_mid_run(home, ("s1", spec))
    outcome = cli("runs")
    assert outcome.code == 0
    rows = {row[0]: row[1] for row in table_rows(outcome.out)}
    assert rows == {"calc": "finished", "s1": "stalled"}
    hint = f"1 stalled run (no live owner): resume it with `tether resume --stalled --model {spec} --root {Path.cwd()}`"
    assert outcome.out.splitlines()[-1] == hint

    kill_mid_run(home, ("s2", gated(script, tmp_path / "other-gate")))  # created with another --model
    last = cli("runs").out.splitlines()[-1]
    assert last.startswith("2 stalled runs (no live owner): resume them with `tether resume --stalled` and the flags")
    assert "they differ (see `tether show RUN`)" in last


def test_runs_filters_by_status(tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    assert cli("run", PROMPT, "--model", script(calc_call(), "It is 413."), "--run-id", "calc").code == 0
    assert cli("fork", "calc", "--at", "3", "--new-id", "half").code == 0  # a fork in mid-turn is paused
    kill_mid_run(home, ("s1", gated(script, tmp_path / "gate")))
    only = cli("runs", "--status", "stalled")
    assert [row[:2] for row in table_rows(only.out)] == [["s1", "stalled"]]
    some = cli("runs", "--status", "finished,paused", "--status", "interrupted")
    assert sorted(row[0] for row in table_rows(some.out)) == ["calc", "half"]
    assert "1 stalled run" in some.out  # the hint speaks of the whole store
    none = cli("runs", "--status", "failed")
    assert none.code == 0 and none.out.splitlines()[0] == f"no failed runs in {home / 'runs.db'} (3 in all)"


def test_stalled_and_corrupt_runs_stand_out(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("run", PROMPT, "--model", script(calc_call(), "It is 413."), "--run-id", "calc").code == 0
    kill_mid_run(home, ("s1", gated(script, tmp_path / "gate")))
    listed = SQLiteStore.list_runs
    unreadable = SimpleNamespace(  # what list_runs reports for a head it cannot read (any status string shows)
        run_id="bad",
        status="corrupt",
        turns=0,
        cycles=0,
        total_tokens=0,
        created_at=None,
        updated_at=None,
        problem="head\x1b[2J is not JSON",
    )
    odd = SimpleNamespace(run_id="odd", status="zombie", turns=1, cycles=1, total_tokens=3, created_at=None, updated_at=None)
    monkeypatch.setattr(SQLiteStore, "list_runs", lambda self: [*listed(self), unreadable, odd])
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich styles even though stdout is captured
    colored = cli("runs").out
    assert "\x1b[1;30;43mstalled" in colored  # bold black on yellow
    assert "\x1b[1;37;41mcorrupt" in colored  # bold white on red
    assert "\x1b[32mfinished" in colored
    monkeypatch.delenv("FORCE_COLOR")
    plain = cli("runs").out
    rows = {row[0]: row[1] for row in table_rows(plain)}
    assert rows == {"calc": "finished", "s1": "stalled", "bad": "corrupt", "odd": "zombie"}
    assert "corrupt run bad: head\\x1b[2J is not JSON" in plain.splitlines()  # escaped: no terminal control from a row


# -- tether resume --stalled ------------------------------------------------------------------


def test_resume_stalled_finishes_stalled_runs_and_leaves_the_others_alone(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    gate = tmp_path / "gate"
    spec, other = gated(script, gate), gated(script, gate)
    assert cli("run", PROMPT, "--model", script(calc_call(), "It is 413."), "--run-id", "done").code == 0
    assert cli("fork", "done", "--at", "3", "--new-id", "half").code == 0
    kill_mid_run(home, ("ctrl-c", spec), sig=signal.SIGINT)
    kill_mid_run(home, ("s1", spec), ("s2", spec), ("s3", other))
    assert statuses(home) == {
        "done": "finished",
        "half": "paused",
        "ctrl-c": "stopped",
        "s1": "stalled",
        "s2": "stalled",
        "s3": "stalled",
    }
    store = store_of(home)
    before = {run_id: rev(store, run_id) for run_id in ("done", "half", "ctrl-c")}
    gate.touch()

    outcome = cli("resume", "--stalled", "--model", spec)
    assert outcome.code == 1
    lines = outcome.out.splitlines()
    assert "s1: resumed, now finished (end_turn)" in lines and "s2: resumed, now finished (end_turn)" in lines
    (skipped,) = [line for line in lines if line.startswith("s3: ")]
    assert skipped.startswith(f"s3: skipped: run 's3' was created with --model {other} --root")
    assert f"(yours: --model {spec})" in skipped
    assert lines[-1] == "3 stalled runs: 2 resumed, 1 skipped or failed"
    assert lines.count("It is 413.") == 2 and "-> calculator" not in outcome.out  # the finished tool calls are not redone
    one_line_error(outcome, "tether resume --stalled", "1 of 3 stalled runs not resumed")
    assert statuses(home) == {
        "done": "finished",
        "half": "paused",
        "ctrl-c": "stopped",
        "s1": "finished",
        "s2": "finished",
        "s3": "stalled",
    }
    assert {run_id: rev(store, run_id) for run_id in before} == before  # not written at all

    again = cli("resume", "--stalled", "--model", other)
    assert again.code == 0, again.err
    assert "s3: resumed, now finished (end_turn)" in again.out.splitlines()
    assert again.out.splitlines()[-1] == "1 stalled run: 1 resumed, 0 skipped or failed"
    nothing = cli("resume", "--stalled")
    assert (nothing.code, nothing.out, nothing.err) == (0, "no stalled runs\n", "")
    assert rows_of(cli("runs").out)["s3"] == "finished"


def rows_of(out: str) -> dict[str, str]:
    return {row[0]: row[1] for row in table_rows(out)}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["resume", "r1", "--stalled"], "not allowed with argument RUN"),
        (["resume"], "one of the arguments RUN --stalled is required"),
        (["resume", "--stalled", "--answer", "a=b"], "cannot go with --stalled"),
        (["runs", "--status", "alive"], "'alive' is not a status"),
        (["unlock"], "RUN"),
    ],
)
def test_liveness_usage_errors_are_one_line(home: Path, cli: Callable[..., Outcome], args: list[str], needle: str) -> None:
    outcome = cli(*args)
    assert outcome.code == 2
    one_line_error(outcome, needle)


# -- tether unlock ----------------------------------------------------------------------------


def test_unlock_refuses_a_live_owner_without_yes_and_fences_it_off_with_yes(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    spec = script(calc_call(), "It is 413.")
    assert cli("run", PROMPT, "--model", spec, "--run-id", "calc").code == 0
    store = store_of(home)
    with store.lease("calc") as old:  # a live owner, in this process
        refused = cli("unlock", "calc")
        one_line_error(refused, "run 'calc' has a live owner (pid unknown)", "its next write fails", "Pass --yes")
        assert refused.code == 1 and refused.out == ""
        head = store.head("calc")
        assert head is not None
        store.write("calc", {**head, "rev": head["rev"] + 1}, [], {}, lease=old)  # still the owner: this write goes through

        done = cli("unlock", "calc", "--yes")
        assert done.code == 0, done.err
        assert done.out.splitlines() == [
            f"run 'calc' unlocked: its owner (if any) is fenced off (epoch {old.epoch + 1}); "
            f"resume it with: tether resume calc --model {spec} --root {Path.cwd()}"
        ]
        assert not store.owner_alive("calc")  # the old flock is on an unlinked file
        stored = rev(store, "calc")
        head = store.head("calc")
        assert head is not None
        with pytest.raises(LeaseLostError, match="was lost"):
            store.write("calc", {**head, "rev": stored + 1}, [], {}, lease=old)
        assert rev(store, "calc") == stored  # nothing was written
        with store.lease("calc") as new:  # a new owner gets the run at once
            assert new.epoch == old.epoch + 2
            store.write("calc", {**head, "rev": stored + 1}, [], {}, lease=new)
    assert rev(store, "calc") == stored + 1


def test_unlock_without_an_owner_needs_no_yes(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    assert cli("run", PROMPT, "--model", script("hello"), "--run-id", "plain").code == 0
    outcome = cli("unlock", "plain")
    assert outcome.code == 0 and outcome.out.startswith("run 'plain' unlocked: its owner (if any) is fenced off (epoch ")


def test_unlock_of_a_missing_run_is_one_line_and_touches_nothing(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    one_line_error(cli("unlock", "ghost"), "no run store")
    assert cli("run", PROMPT, "--model", script("hello"), "--run-id", "real").code == 0
    outcome = cli("unlock", "ghost")
    assert outcome.code == 1 and outcome.out == ""
    one_line_error(outcome, "tether unlock", "no run 'ghost'")
    with contextlib.closing(sqlite3.connect(home / "runs.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM leases WHERE run_id = 'ghost'").fetchone()[0] == 0


def test_an_unlocked_run_loses_its_next_write_in_one_line_and_resumes(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    gate = tmp_path / "gate"
    spec = gated(script, gate)
    process = start_waiting(home, "t", spec)  # a live owner in another process, waiting at the gate
    try:
        assert statuses(home)["t"] == "running"
        one_line_error(cli("unlock", "t"), "run 't' has a live owner")
        assert cli("unlock", "t", "--yes").code == 0
        assert statuses(home)["t"] == "stalled"  # fenced off: no live owner, resumable now
        gate.touch()  # the old owner's model answers; its next write is refused
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: tether run: run 't': this writer's lease"), err
    assert "was lost" in lines[0] and "Traceback" not in err
    resumed = cli("resume", "t", "--model", spec)
    assert resumed.code == 0, resumed.err
    assert "It is 413." in resumed.out and "-> calculator" not in resumed.out
    assert statuses(home)["t"] == "finished"
