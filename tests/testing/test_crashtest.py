"""crashtest on agents that are sound, not idempotent, declared non-idempotent, reconciled;
on SQLite and PostgreSQL; with racing resumers."""

from __future__ import annotations

import re
import select
import subprocess
import tempfile
from pathlib import Path

import pytest

from tether.durable import SQLiteStore
from tether.errors import CrashTestError, TetherError
from tether.testing import CrashReport, crashtest
from tether.testing._procs import _Child, _child_paths, _finish, _Plan, _run, _spawn, _starts
from tether.testing.crash import Point, _in_doubt, _judge, select_points

ADVICE = "it is not idempotent; make it idempotent on `ctx.idempotency_key`, or declare it `@tool(idempotent=False)`"


def test_sound_agent_passes_every_save_point(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:sound", "do the three steps", workdir=tmp_path)
    assert report.ok, report.failures
    assert report.writes >= 9  # 3 cycles x 2 tools
    assert report.points == 2 * report.writes  # before and after every write
    assert report.in_doubt_reruns > 0  # crashes between a tool's start and its recorded result
    assert report.races == 2
    assert report.raise_for_failures() is report
    assert (tmp_path / "reference.json").exists()


def test_a_crash_point_past_the_end_of_a_shorter_schedule_is_unreached_not_failed(tmp_path: Path) -> None:
    """Tools running at once may finish in another order than in the reference run and take
    fewer save points: the last crash point then lies past the end of the run. The run must
    still end like the reference; the point is counted as unreached, not failed."""
    report = crashtest("tests.testing.agents:fewer_writes_after_the_reference", "note twice", points=2, workdir=tmp_path, races=0)
    assert report.ok, report.failures
    assert report.points == 2 and report.unreached == 1  # the last point: after the reference's last write
    assert "1 unreached" in report.summary()


def test_tool_with_a_different_result_when_rerun_is_reported(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:charging", "charge twice", workdir=tmp_path, races=0)
    assert not report.ok
    for failure in report.failures:
        assert "tool `charge_card` returned a different result when re-run in doubt" in failure.reason
        assert ADVICE in failure.reason
        reference, mine = failure.exports
        assert Path(reference).exists() and Path(mine).exists()
    with pytest.raises(CrashTestError, match=re.escape("charge_card")):
        report.raise_for_failures()


def test_non_idempotent_tool_without_reconcile_interrupts_not_fails(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:emailing", "send two emails", workdir=tmp_path, races=0)
    assert report.ok, report.failures
    assert report.in_doubt_interrupts > 0  # reported as in-doubt interrupts (answered "rerun")
    assert report.reconciled == 0


def test_declared_non_idempotent_tool_with_a_new_result_is_asked_not_failed(tmp_path: Path) -> None:
    """`idempotent=False`, no reconcile, a new receipt on every run: the advice is already followed.

    The in-doubt call stops the resume with an interrupt; crashtest answers "rerun" as a person
    may, and the re-run's new receipt is not held against the agent (points=4 includes the two
    crash points where `pay` is in doubt).
    """
    report = crashtest("tests.testing.agents:paying", "pay twice", points=4, workdir=tmp_path, races=0)
    assert report.ok, report.failures
    assert report.in_doubt_interrupts > 0 and report.reconciled == 0


def test_reconcile_that_reruns_a_call_that_happened_is_reported(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:paying_reconcile_reruns", "pay twice", points=4, workdir=tmp_path, races=0)
    assert report.failures and report.in_doubt_interrupts == 0
    for failure in report.failures:
        assert "tool `pay` returned a different result when re-run in doubt" in failure.reason
        assert "declared `idempotent=False` and your `reconcile` answered `rerun`" in failure.reason
        assert ADVICE not in failure.reason


def test_completed_call_run_again_with_the_same_result_is_reported(tmp_path: Path) -> None:
    """A broken store loses `record`'s stored result: the resume runs the completed call again.

    The result is the same text, so only the tool's start count per idempotency key shows it.
    """
    report = crashtest("tests.testing.agents:forgetful", "do it", points=3, workdir=tmp_path, races=0)
    assert report.failures, report.summary()
    for failure in report.failures:
        assert "tool `record` (call c0-record) started again after the resume for the idempotency key crashtest/c0-record" in failure.reason
        assert "it was not in doubt" in failure.reason


def test_tool_started_twice_for_one_call_is_reported(tmp_path: Path) -> None:
    """A hook that runs `record` twice per call (same result each time) is caught in the reference run."""
    with pytest.raises(TetherError, match=re.escape("a tool started more than once for the idempotency key crashtest/c0-record")):
        crashtest("tests.testing.agents:retrying", "do it", points=2, workdir=tmp_path, races=0)


def test_temporary_workdir_is_removed_after_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    report = crashtest("tests.testing.agents:sound", "do it", points=2, races=0)
    assert report.ok, report.failures
    assert report.workdir == "" and list(tmp_path.glob("tether-crashtest-*")) == []
    with pytest.raises(TetherError, match="reference run"):
        crashtest("tests.testing.agents:retrying", "do it", points=2, races=0)
    assert list(tmp_path.glob("tether-crashtest-*")) == []


def test_temporary_workdir_is_kept_and_named_after_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    report = crashtest("tests.testing.agents:forgetful", "do it", points=3, races=0)
    kept = list(tmp_path.glob("tether-crashtest-*"))
    assert not report.ok and len(kept) == 1 and report.workdir == str(kept[0].resolve())
    assert (kept[0] / "reference.json").is_file()
    assert f"files kept in {report.workdir}" in report.summary()
    with pytest.raises(CrashTestError, match=re.escape(f"files kept in {report.workdir}")):
        report.raise_for_failures()


def test_late_duplicate_rerun_answer_is_a_refusal_not_a_failure(tmp_path: Path) -> None:
    """Two resumers of a run with an in-doubt `send_email`, forced into the window between a
    resume that stops at the in-doubt interrupt and its answer: A stops at the interrupt and
    holds its answer; B resumes, answers "rerun" and finishes; then A answers, late. The run is
    not leased between A's two calls, so this is legal: A's answer is refused, the tool ran once
    after the crash, and the race has one winner."""
    plan = _Plan("tests.testing.agents:emailing", "send two emails", "sqlite", tmp_path, 60.0, "t", *_child_paths())
    base = {"store": str(tmp_path / "run.db"), "run_id": "crashtest", "scratch": str(tmp_path / "scratch")}
    for write in range(1, 12):  # the first crash point that leaves send_email in doubt (deterministic)
        (tmp_path / "run.db").unlink(missing_ok=True)
        crashed = _run(plan, {**base, "action": "start", "log": str(tmp_path / "crash.log"), "kill_at": write, "when": "before"})
        assert crashed.returncode < 0, crashed.stderr
        store = SQLiteStore(str(tmp_path / "run.db"))
        doubt = _in_doubt(store, "crashtest")
        store.close()
        if any(i.endswith("-send_email") for i in doubt):
            break
    else:
        pytest.fail("no crash point left send_email in doubt")
    hold = tmp_path / "hold"
    a = _spawn(plan, {**base, "action": "resume", "log": str(tmp_path / "a.log"), "answer_in_doubt": True, "hold_answers": str(hold)})
    try:
        assert _line(a) == "ready" and _line(a) == "interrupted"  # A stopped at the interrupt, its answer held
        b = _run(plan, {**base, "action": "resume", "log": str(tmp_path / "b.log"), "answer_in_doubt": True})
        assert b.returncode == 0 and b.outcome["stop_reason"] == "end_turn", b.stderr
        hold.touch()
        late = _finish(a, 60.0)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert late.returncode == 3 and late.outcome.get("late") is True, late.stderr
    winner, reason = _judge([late, b])
    assert winner is b and reason == ""
    reruns = [s for s in _starts(tmp_path / "a.log") + _starts(tmp_path / "b.log") if s.id in doubt]
    assert sorted(s.id for s in reruns) == sorted(doubt)  # each in-doubt call ran again once after the crash


def test_a_race_on_a_run_finished_at_its_crash_point_has_no_winner_to_find() -> None:
    """Tools running at once may store their results in fewer writes than the reference run: a
    racing point can then be the run's last write. Both racers find it finished (nothing
    written): that is a pass only when the run was finished before the race, and one racer
    that wrote is then a failure."""
    idle = [_Child(0, {"stop_reason": "end_turn", "writes": 0}, "") for _ in range(2)]
    wrote = _Child(0, {"stop_reason": "end_turn", "writes": 1}, "")
    assert _judge(idle, finished=True) == (idle[0], "")
    assert _judge(idle)[0] is None and "must be exactly 1" in _judge(idle)[1]
    assert _judge([wrote, idle[0]], finished=True)[0] is None
    assert _judge([wrote, idle[0]]) == (wrote, "")


def _line(proc: subprocess.Popen[str]) -> str:
    """The child's next stdout line ('' when it printed none within 60 s)."""
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], 60)
    return proc.stdout.readline().strip() if readable else ""


def test_non_idempotent_tool_with_reconcile(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:emailing_reconciled", "send two emails", workdir=tmp_path, races=0)
    assert report.ok, report.failures
    assert report.reconciled > 0 and report.in_doubt_interrupts == 0


def test_postgresql(pg_server: object, pg_conninfo: str, tmp_path: Path) -> None:
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    url = f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"
    report = crashtest("tests.testing.agents:sound", "do the three steps", store=url, points=8, workdir=tmp_path, races=1)
    assert report.ok, report.failures
    assert report.points == 8 and report.races == 1


def test_outbox_orders_exactly_once_at_every_save_point(pg_server: object, pg_conninfo: str, tmp_path: Path) -> None:
    """A tool that inserts an order row through ``context.transaction()``, killed at every save
    point on a real PostgreSQL: every run ends with exactly one row per order, with no reconcile
    and no in-doubt interrupt (an in-doubt call simply runs again)."""
    import psycopg

    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE crashtest_orders (run_id TEXT NOT NULL, n INT NOT NULL)")
    fields = dict(part.split("=", 1) for part in pg_conninfo.split())
    url = f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"
    report = crashtest("tests.testing.agents:ordering", "place two orders", store=url, workdir=tmp_path, races=1)
    assert report.ok, report.failures
    assert report.points == 2 * report.writes and report.races == 1, report.writes
    assert report.in_doubt_interrupts == 0 and report.in_doubt_reruns > 0  # crashes left orders in doubt; they ran again
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        rows = conn.execute("SELECT run_id, n, count(*) FROM crashtest_orders GROUP BY run_id, n").fetchall()
    per_run: dict[str, dict[int, int]] = {}
    for run_id, n, count in rows:
        per_run.setdefault(run_id, {})[n] = count
    assert len(per_run) == 1 + report.points + report.races  # the reference, every crash point, the race
    assert all(counts == {0: 1, 1: 1} for counts in per_run.values()), per_run


def test_racing_phase_catches_a_broken_lock(tmp_path: Path) -> None:
    report = crashtest("tests.testing.agents:unlocked", "do the three steps", points=4, workdir=tmp_path, races=1)
    assert report.races == 1
    raced = [f for f in report.failures if f.point.startswith("race ")]
    assert raced, report.failures  # two resumers both got the run
    assert all(not f.point.startswith("race ") for f in report.failures if f not in raced)


def test_points_sampling_is_deterministic() -> None:
    assert select_points(3, "all") == [Point(k, w) for k in (1, 2, 3) for w in ("before", "after")]
    sample = select_points(20, 5)
    assert sample == select_points(20, 5) and len(sample) == 5
    assert sample[0] == Point(1, "before") and sample[-1] == Point(20, "after")
    with pytest.raises(TetherError, match="points"):
        select_points(3, 0)


def test_bad_factory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="reference run"):
        crashtest("tests.testing.agents:nope", "x", workdir=tmp_path)
    with pytest.raises(TetherError, match="points="):
        crashtest("tests.testing.agents:sound", "x", points="some", workdir=tmp_path)
    with pytest.raises(TetherError, match="store="):
        crashtest("tests.testing.agents:sound", "x", store="mysql://x", workdir=tmp_path)


def test_report_json_round(tmp_path: Path) -> None:
    report = CrashReport("a:b", "sqlite", writes=3, points=6)
    data = report.to_dict()
    assert data["ok"] is True and data["points"] == 6 and data["failures"] == []
