"""`crashtest`: crash a user's agent at every save point, resume it, and compare with a clean run.

Each run happens in a fresh child process (``python -m tether.testing._child``) that builds the
agent from its ``"module:attr"`` factory, so nothing in memory survives a crash, just as in
production. Faults are injected at the store boundary (:mod:`tether.testing.faults`): a save
point is one store write, and the child SIGKILLs itself just *before* or just *after* write k.
No timers, so a crash point is the same in every run.

For each crash point: the killed child, then one resumer (a fresh child) runs the run to its end;
the stored outcome must equal the reference's (messages, agent state, stop reason), and every
tool call must have *started* once per idempotency key ``run_id/toolUseId``, or twice only when
the crash left it in doubt (started, result not recorded; it runs again with the same key). The
starts are counted by a wrapper the child installs around the agent's tools (see
:mod:`tether.testing._child`), so a completed call that runs again is caught even when it
returns the same result. An in-doubt call of an ``idempotent=False`` tool with no ``reconcile``
stops the resume with a ``tether.in_doubt`` interrupt; crashtest answers ``"rerun"`` (what a
person may answer), counts it, and does not compare that call's result with the reference (a
deliberate second run may return another one). A racing phase crashes a few points and starts
two resumers at once: exactly one may write to the run (the other is refused with
``RunLockedError``, finds the run already finished and writes nothing, or has its answer to an
in-doubt interrupt refused because the winner answered it first), and the outcome must still
equal the reference.

A temporary ``workdir`` (the default) is removed when every point passed and kept, with the
report naming it, when one failed.

On SQLite every point gets its own database file in ``workdir`` and the same run id, so tools
that echo their idempotency key compare equal. On PostgreSQL points share the database, so each
uses its own run id (``crashtest-<token>-<point>``) and its rows are deleted at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._diff import describe, first_difference
from ..durable.history import summary_of
from ..durable.store import RunStore
from ..errors import TetherError
from ._procs import _by_id, _Child, _export, _finish, _hide_password, _Plan, _ready, _run, _spawn, _Start, _starts, new_plan
from .faults import WHEN, open_store
from .report import CrashFailure, CrashReport

DEFAULT_TIMEOUT = 60.0
"""Seconds one child process may take before it is killed and the point reported as hung."""

Progress = Callable[[int, int, str], None]
"""Called after each crash point with (points done, points in all, the point's label)."""


@dataclass(frozen=True)
class Point:
    """A crash point: SIGKILL ``when`` (``"before"``/``"after"``) store write ``write``."""

    write: int
    when: str

    @property
    def label(self) -> str:
        return f"{self.when} write {self.write}"

    @property
    def slug(self) -> str:
        return f"{self.when}-{self.write}"


def crashtest(
    factory: str,
    prompt: str,
    *,
    store: str = "sqlite",
    points: int | str = "all",
    workdir: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    races: int = 2,
    jobs: int | None = None,
    progress: Progress | None = None,
    answers: Mapping[str, Any] | None = None,
) -> CrashReport:
    """Crash the agent built by ``factory`` at its save points and check every resume.

    Args:
        factory: ``"module:attr"`` naming a zero-argument callable that returns the
            :class:`~tether.Agent` (imported in child processes with this process's working
            directory and ``sys.path``). Its store is replaced by the crashtest's.
        prompt: The prompt of the run.
        store: ``"sqlite"`` (a database file per point in ``workdir``) or a
            ``postgresql://`` URL.
        points: ``"all"`` crash points (before and after every store write of the reference
            run), or an int N to test N of them, spread evenly (deterministic).
        workdir: Where stores, tool-start logs and run exports go (default: a new temporary
            directory, removed when every point passed and kept when one failed; the report's
            ``workdir`` names it). A directory you pass is always kept.
        timeout: Seconds each child process may run before it is killed (reported as a failure).
        races: Crash points to repeat with two racing resumers (0 to skip the racing phase).
        jobs: Crash points run at once (default: the CPU count).
        progress: Called after each point with (done, total, label), e.g. for a progress bar.
        answers: Responses to the run's own interrupts, by interrupt name (``{"approve": "yes"}``):
            every run answers them as soon as it stops for them, so an agent that asks a person
            is crash-tested through its answers too. Without it such a reference run is an error.

    Returns:
        The :class:`CrashReport`; call ``raise_for_failures()`` on it in a test.

    Raises:
        TetherError: The factory cannot be imported or the reference run itself does not end
            (it raised, hung, or stopped for an interrupt other than an in-doubt one).
    """
    started = time.perf_counter()
    select_points(1, points)  # a bad points= fails before any run
    plan = new_plan("crashtest", factory, prompt, store, workdir, timeout, answers)
    report = CrashReport(factory=factory, store=_hide_password(store), workdir=str(plan.workdir))
    try:
        _points_and_races(plan, report, points, jobs, races, progress, started)
    except BaseException:
        if plan.own_workdir:  # nothing to inspect: the error says what went wrong
            shutil.rmtree(plan.workdir, ignore_errors=True)
        raise
    if plan.own_workdir and report.ok:
        shutil.rmtree(plan.workdir, ignore_errors=True)
        report.workdir = ""
    return report


def _points_and_races(
    plan: _Plan, report: CrashReport, points: int | str, jobs: int | None, races: int, progress: Progress | None, started: float
) -> None:
    """The reference run, every chosen crash point, then the racing phase, into ``report``."""
    try:
        _reference(plan, report)
        report.timings["reference"] = time.perf_counter() - started
        chosen = select_points(report.writes, points)
        report.points = len(chosen)
        lock, done = threading.Lock(), [0]
        resume_writes: dict[Point, int] = {}

        def one(point: Point) -> None:
            writes = _crash_point(plan, report, point, lock)
            with lock:
                resume_writes[point] = writes
                done[0] += 1
                if progress is not None:
                    progress(done[0], len(chosen), point.label)

        mark = time.perf_counter()
        with ThreadPoolExecutor(max_workers=max(1, jobs or os.cpu_count() or 1)) as pool:
            list(pool.map(one, chosen))
        report.timings["points"] = time.perf_counter() - mark
        mark = time.perf_counter()
        racing = [p for p in chosen if resume_writes.get(p, 0) > 0 and p != Point(1, "before")]  # a run to resume exists
        for point in _spread(racing, races):
            _race(plan, report, point)
            report.races += 1
        report.timings["races"] = time.perf_counter() - mark
    finally:
        report.timings["total"] = time.perf_counter() - started
    report.failures.sort(key=lambda f: (f.point.startswith("race"), f.write, WHEN.index(f.when)))


def select_points(writes: int, points: int | str) -> list[Point]:
    """Every crash point of a run with ``writes`` save points, or ``points`` of them spread evenly."""
    every = [Point(k, when) for k in range(1, writes + 1) for when in WHEN]
    if points == "all":
        return every
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise TetherError(f"crashtest points={points!r} must be 'all' or a positive int")
    return _spread(every, points)


def _spread(items: list[Point], n: int) -> list[Point]:
    if n <= 0 or not items:
        return []
    if n >= len(items):
        return list(items)
    if n == 1:
        return [items[len(items) // 2]]
    return list(dict.fromkeys(items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)))


def _reference(plan: _Plan, report: CrashReport) -> None:
    slug = "reference"
    log = plan.workdir / f"{slug}.log"
    log.unlink(missing_ok=True)
    spec, run_id = plan.spec_for(slug), plan.run_id_for(slug)
    if not plan.postgres:
        Path(spec).unlink(missing_ok=True)
    scratch = str(plan.workdir / f"{slug}.scratch")
    child = _run(plan, {"store": spec, "run_id": run_id, "action": "start", "log": str(log), "scratch": scratch})
    if child.returncode != 0 or child.outcome.get("stop_reason") == "interrupt":
        raise TetherError(
            f"crashtest of {plan.factory}: the reference run (no crash) did not end "
            f"(exit {child.returncode}, outcome {child.outcome}); fix the agent or its factory first:\n{child.stderr[-3000:]}"
        )
    store = open_store(spec)
    try:
        stored = store.load(run_id)
        plan.reference = _export(stored, plan.workdir / f"{slug}.json", {"stop_reason": child.outcome["stop_reason"]})
        if plan.postgres:
            store.delete_run(run_id)
    finally:
        store.close()
    starts = _starts(log)
    plan.ref_runs = _by_id(starts)
    plan.names = {start.id: start.name for start in starts}
    twice = sorted(key for key, n in Counter(start.key for start in starts).items() if n > 1)
    if twice:
        raise TetherError(
            f"crashtest of {plan.factory}: in the reference run (no crash) a tool started more than once for the "
            f"idempotency key {twice[0]}; a call must run once"
        )
    report.writes = int(child.outcome["writes"])


def _in_doubt(store: RunStore, run_id: str) -> set[str]:
    loaded = store.load(run_id)
    if loaded is None or loaded.head["cursor"]["phase"] != "tools":
        return set()
    return {str(i) for i in loaded.head["cursor"]["started"] if i not in loaded.results}


def _crash_point(plan: _Plan, report: CrashReport, point: Point, lock: threading.Lock) -> int:
    """Crash at ``point``, resume, compare; returns the resumer's write count."""
    slug = point.slug
    spec, run_id = plan.spec_for(slug), plan.run_id_for(slug)
    logs = [plan.workdir / f"{slug}.crash.log", plan.workdir / f"{slug}.resume.log"]
    for path in logs:
        path.unlink(missing_ok=True)
    if not plan.postgres:
        Path(spec).unlink(missing_ok=True)
    base = {"store": spec, "run_id": run_id, "scratch": str(plan.workdir / f"{slug}.scratch")}
    store = open_store(spec)
    try:
        killed = _run(plan, {**base, "action": "start", "log": str(logs[0]), "kill_at": point.write, "when": point.when})
        if killed.returncode == 0 and not killed.outcome.get("hung") and int(killed.outcome.get("writes", point.write)) < point.write:
            # The run finished in fewer save points than the reference: tools running at once
            # finished in another order, and their results were stored in fewer writes. The point
            # does not exist in this schedule; the run it made must still equal the reference.
            reason = _compare(plan, store, run_id, killed.outcome, set(), [_starts(logs[0])], lock, report)
            if reason:
                _fail(plan, report, lock, point, f"the run finished before the crash point, and {reason}", store, run_id)
                return 0
            with lock:
                report.unreached += 1
            if plan.postgres:
                store.delete_run(run_id)
            return 0
        if killed.returncode != -signal.SIGKILL or killed.outcome.get("hung"):
            what = "hung" if killed.outcome.get("hung") else f"exited {killed.returncode} without reaching it"
            _fail(plan, report, lock, point, f"the run {what}: {killed.stderr[-1500:]}", store, run_id)
            return 0
        doubt = _in_doubt(store, run_id)
        resumed = _run(plan, {**base, "action": "resume", "log": str(logs[1]), "answer_in_doubt": True})
        if resumed.returncode != 0:
            _fail(plan, report, lock, point, f"the resume failed (exit {resumed.returncode}): {resumed.stderr[-1500:]}", store, run_id)
            return 0
        reason = _compare(plan, store, run_id, resumed.outcome, doubt, [_starts(p) for p in logs], lock, report)
        if reason:
            _fail(plan, report, lock, point, reason, store, run_id)
        elif plan.postgres:
            store.delete_run(run_id)
        return int(resumed.outcome.get("writes", 0))
    finally:
        store.close()


def _compare(
    plan: _Plan,
    store: RunStore,
    run_id: str,
    outcome: dict[str, Any],
    doubt: set[str],
    runs: list[list[_Start]],
    lock: threading.Lock,
    report: CrashReport,
) -> str:
    """Why the finished run differs from the reference ('' when it does not); counts in-doubt figures.

    ``runs`` are the tool starts of the crashed child, then of each resumer.
    """
    after = _by_id(start for starts in runs[1:] for start in starts)
    with lock:
        report.in_doubt_reruns += sum(1 for i in doubt if after[i] > 0)
        report.reconciled += sum(1 for i in doubt if after[i] == 0)
        report.in_doubt_interrupts += int(outcome.get("in_doubt_interrupts", 0))
    reason = _extra_starts(plan, doubt, runs)
    if reason:
        return reason
    answered = set(outcome.get("answered") or [])  # re-run on crashtest's "rerun" answer: not compared
    stored = store.load(run_id)
    messages = [] if stored is None else _masked(stored.messages, answered)
    mine = {"messages": messages, "state": {} if stored is None else stored.head.get("state") or {}}
    ref = {"messages": _masked(plan.reference["messages"], answered), "state": plan.reference["state"]}
    path = first_difference(ref, mine)
    if path is not None:
        return _explain(plan, path, mine, doubt, outcome)
    if outcome.get("stop_reason") != plan.reference["stop_reason"]:
        return f"the resumed run stopped with {outcome.get('stop_reason')!r}, the reference with {plan.reference['stop_reason']!r}"
    ran = _by_id(start for starts in runs for start in starts)
    missing = [i for i in plan.ref_runs if ran[i] == 0 and i not in doubt]
    if missing:
        return f"tool `{plan.names.get(missing[0], '?')}` (call {missing[0]}) never ran, yet the reference ran it"
    return ""


def _extra_starts(plan: _Plan, doubt: set[str], runs: list[list[_Start]]) -> str:
    """A tool started more often per idempotency key than the crash allows ('' when none did).

    Once per key; a call the crash left in doubt may start once more after the resume. The
    count comes from the tools, not from results, so a re-run that returns the same result (a
    second charge with the same receipt text) is caught too.
    """
    before = Counter(start.key for start in runs[0])
    after = Counter(start.key for starts in runs[1:] for start in starts)
    calls = {start.key: start for starts in runs for start in starts}
    for key in sorted(calls):
        call = calls[key]
        tool = f"tool `{call.name}` (call {call.id}) started"
        if before[key] > 1:
            return f"{tool} {before[key]} times for the idempotency key {key} before the crash: a call runs once unless it is in doubt"
        if call.id in doubt:
            if after[key] > 1:
                return f"{tool} {after[key]} times for the idempotency key {key} after the resume: an in-doubt call may run again once"
        elif before[key] and after[key]:
            return (
                f"{tool} again after the resume for the idempotency key {key} ({before[key] + after[key]} starts), though its result "
                f"was recorded before the crash (it was not in doubt): a completed call ran twice"
            )
        elif after[key] > 1:
            return f"{tool} {after[key]} times for the idempotency key {key} after the resume, though it was not in doubt: a call runs once"
    return ""


def _masked(messages: list[Any], calls: set[str]) -> list[Any]:
    """``messages`` with the results of ``calls`` replaced by one placeholder (they are not compared)."""
    if not calls:
        return messages
    out: list[Any] = []
    for message in messages:
        content = [
            {"toolResult": {"toolUseId": block["toolResult"]["toolUseId"], "content": "(re-run on crashtest's answer: not compared)"}}
            if isinstance(block, dict) and "toolResult" in block and block["toolResult"].get("toolUseId") in calls
            else block
            for block in message.get("content") or []
        ]
        out.append({**message, "content": content})
    return out


def _explain(plan: _Plan, path: list[Any], mine: dict[str, Any], doubt: set[str], outcome: dict[str, Any]) -> str:
    """A human reason for a difference at ``path`` (naming the tool when it is a tool result)."""
    field_path = describe(path)
    if len(path) >= 4 and path[0] == "messages" and path[2] == "content" and isinstance(path[3], int):
        messages = mine["messages"]
        if path[1] < len(messages) and path[3] < len(messages[path[1]]["content"]):
            block = messages[path[1]]["content"][path[3]]
            if "toolResult" in block:
                tool_use_id = block["toolResult"]["toolUseId"]
                name = plan.names.get(tool_use_id, "?")
                if tool_use_id in doubt:
                    what = f"tool `{name}` returned a different result when re-run in doubt (call {tool_use_id}, field {field_path})"
                    return f"{what}: {_advice(name, outcome)}"
                return f"tool `{name}` (call {tool_use_id}) returned a different result than in the reference run (field {field_path})"
    return f"the resumed run differs from the reference at {field_path} (a lost, repeated or changed message or state)"


def _advice(name: str, outcome: dict[str, Any]) -> str:
    """What to do about a tool whose in-doubt re-run returned another result, by how it is declared."""
    if (outcome.get("tools") or {}).get(name, True):
        return (
            "it is not idempotent; make it idempotent on `ctx.idempotency_key`, or declare it `@tool(idempotent=False)` "
            "so an in-doubt call is settled by your `reconcile` or asked about with a `tether.in_doubt` interrupt"
        )
    return (
        "it is declared `idempotent=False` and your `reconcile` answered `rerun` for a call that had already happened; "
        "ask the system the tool talks to about `call.idempotency_key` and return the result it recorded"
    )


def _fail(
    plan: _Plan, report: CrashReport, lock: threading.Lock, point: Point, reason: str, store: RunStore, run_id: str, race: bool = False
) -> None:
    export = plan.workdir / f"{'race-' if race else ''}{point.slug}.json"
    try:
        _export(store.load(run_id), export, {"reason": reason})
    except TetherError as exc:
        export.write_text(json.dumps({"reason": reason, "load_error": str(exc)}))
    failure = CrashFailure(
        f"{'race ' if race else ''}{point.label}", point.write, point.when, reason, (str(plan.workdir / "reference.json"), str(export))
    )
    with lock:
        report.failures.append(failure)


def _judge(racers: list[_Child], finished: bool = False) -> tuple[_Child | None, str]:
    """The racer that proceeded, or None and why the race failed.

    Exactly one racer may have run the run on; the other must have been refused: locked out
    (exit 3), finding the run already finished (exit 0, nothing written), or answering an
    in-doubt interrupt that the winner had answered first (exit 3, ``late``: the run is not
    leased between a resume that stops at the interrupt and the answer, so a second resumer can
    take it in between; the late answer is refused and nothing runs twice). A run that pauses at
    checkpoints is not leased between its segments either: racers that went on from a pause may
    each have run a segment. A run ``finished``
    at its crash point (tools running at once stored their results in fewer writes than the
    reference: the point was its last) leaves nothing to proceed with: every racer is refused.
    """
    proceeded = [r for r in racers if r.returncode == 0 and r.outcome.get("writes", 0) > 0]
    refused = [r for r in racers if r.returncode == 3 or (r.returncode == 0 and r.outcome.get("writes", 0) == 0)]
    if any(r.outcome.get("paused") for r in racers) and proceeded and len(refused) + len(proceeded) == len(racers):
        # The run pauses at checkpoints: each pause ends a resume's lease, so the racers may take
        # the run's segments in turns (each tool still starts once: checked on the tool's side).
        return proceeded[0], ""
    if len(proceeded) == (0 if finished else 1) and len(refused) == len(racers) - len(proceeded):
        return (proceeded or refused)[0], ""
    detail = "; ".join(f"exit {r.returncode} {r.outcome} {r.stderr[-500:]}" for r in racers)
    return None, f"{len(proceeded)} of {len(racers)} racing resumers proceeded (must be exactly {0 if finished else 1}): {detail}"


def _race(plan: _Plan, report: CrashReport, point: Point) -> None:
    """Crash at ``point``, then two resumers at once: exactly one proceeds, the outcome matches."""
    slug = f"race-{point.slug}"
    spec, run_id = plan.spec_for(slug), plan.run_id_for(slug)
    logs = [plan.workdir / f"{slug}.{n}.log" for n in ("crash", "a", "b")]
    gate = plan.workdir / f"{slug}.gate"
    for path in [*logs, gate]:
        path.unlink(missing_ok=True)
    if not plan.postgres:
        Path(spec).unlink(missing_ok=True)
    lock = threading.Lock()
    base = {"store": spec, "run_id": run_id, "scratch": str(plan.workdir / f"{slug}.scratch")}
    store = open_store(spec)
    procs: list[subprocess.Popen[str]] = []
    try:
        killed = _run(plan, {**base, "action": "start", "log": str(logs[0]), "kill_at": point.write, "when": point.when})
        if killed.returncode != -signal.SIGKILL:
            _fail(plan, report, lock, point, f"the run exited {killed.returncode} before the crash point", store, run_id, race=True)
            return
        doubt, head = _in_doubt(store, run_id), store.head(run_id)
        finished = head is not None and summary_of(run_id, head).status == "finished"
        procs = [
            _spawn(plan, {**base, "action": "resume", "log": str(log), "answer_in_doubt": True, "gate": str(gate)}) for log in logs[1:]
        ]
        for proc in procs:  # both built their agent and wait at the gate: release them together
            if not _ready(proc, plan.timeout):
                break
        gate.touch()
        racers = [_finish(proc, plan.timeout) for proc in procs]
        winner, reason = _judge(racers, finished)
        if winner is None:
            _fail(plan, report, lock, point, reason, store, run_id, True)
            return
        reason = _compare(plan, store, run_id, winner.outcome, doubt, [_starts(p) for p in logs], lock, report)
        if reason:
            _fail(plan, report, lock, point, reason, store, run_id, race=True)
        elif plan.postgres:
            store.delete_run(run_id)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        store.close()
