"""`resume_contract`: check the six properties of "Resume Means Resume" on your own agent.

The paper (arXiv:2608.03836) states a machine-checkable contract for checkpoint, interrupt and
resume in agent persistence layers. Each property is checked here with the fault the paper uses,
every run in a fresh child process (``python -m tether.testing._child``) built from your
``"module:attr"`` factory, so nothing in memory survives a crash:

- **prefix continuation**: kill the run (SIGKILL) at every save point and resume it: the steps
  stored before the kill are kept unchanged, and the run ends as the uninterrupted one did;
- **effect exactly-once**: across those crashes (and two racing resumers), each tool call starts
  once per idempotency key, twice only when the crash left it in doubt (re-run with the same
  key); counted on the tool's side, so a silent re-run is caught;
- **fork determinism**: fork every step twice and run both forks on: they end the same;
- **checkpoint validity**: values the state refuses (not JSON, or JSON no store can keep) are
  refused when they are set, and the stored run does not change;
- **consume-once**: ``k`` processes (default 8) deliver one interrupt answer at the same instant:
  exactly one proceeds, the others are refused, the answer's effects happen once;
- **recovery determinism**: two byte-identical copies of a crashed store (SQLite files, or
  PostgreSQL databases made from the crashed one as a template) recover to the same run.

When the agent's tools declare compensations, the run's unwinding is checked too
(:mod:`tether.testing.contract_undo`): killed at every save point and compensated again, each
undo once and newest call first (effect exactly-once), the recorded steps kept (prefix
continuation), ``k`` processes compensating one run at once undo once (consume-once).

Each property reports ``holds``, ``violated`` with the smallest counterexample (the crash point
or step, what differed, the effect log, the two diverging exports) or ``not applicable`` with
why (consume-once needs an agent whose run asks a question, and ``answers=`` to answer it, or
whose tools declare compensations).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._diff import describe, first_difference
from ..errors import TetherError
from ._procs import _finish, _hide_password, _Plan, _ready, _run, _spawn, _spread, _starts, new_plan
from .contract_pg import PgCopies
from .contract_report import (
    CONSUME,
    EFFECT,
    FORK,
    HOLDS,
    NOT_APPLICABLE,
    PREFIX,
    PROPERTIES,
    RECOVERY,
    VALIDITY,
    VIOLATED,
    ContractReport,
    PropertyResult,
)
from .contract_runs import _comparable, _load
from .contract_undo import UndoChecks
from .crash import DEFAULT_TIMEOUT, Point, crashtest, select_points

RUN = "contract"
RUNTIMES = ("local", "serve", "temporal")


def resume_contract(
    factory: str,
    prompt: str,
    *,
    store: str = "sqlite",
    answers: Mapping[str, Any] | None = None,
    k: int = 8,
    points: int | str = "all",
    forks: int | str = "all",
    recoveries: int = 3,
    properties: Iterable[str] = PROPERTIES,
    workdir: str | Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    runtime: str = "local",
    temporal: str | None = None,
) -> ContractReport:
    """Check the resume contract on the agent built by ``factory``.

    Args:
        factory: ``"module:attr"`` naming a zero-argument callable that returns the
            :class:`~tether.Agent` (imported only in child processes). Its store is replaced.
        prompt: The prompt of the run.
        store: ``"sqlite"`` (files in ``workdir``) or a ``postgresql://`` URL (recovery
            determinism then needs the right to ``CREATE DATABASE``).
        answers: Responses to the run's own interrupts, by interrupt name; required for
            consume-once, which is "not applicable" to a run that asks nothing.
        k: Processes delivering one interrupt answer at the same instant.
        points: Crash points for prefix continuation and effect exactly-once (see
            :func:`~tether.testing.crashtest`): ``"all"`` or a number spread over the run.
        forks: Steps forked twice: ``"all"`` or a number spread over the run.
        recoveries: Crash points whose store is copied twice and recovered from each copy.
        properties: The properties to check (default: all six, :data:`PROPERTIES`).
        workdir: Where stores, logs and exports go (default: a temporary directory, removed
            when nothing was violated).
        timeout: Seconds each child process may take.
        runtime: ``"local"`` (the runs in child processes of the check) or ``"serve"``: the
            agent served by two ``tether serve`` processes on the store, driven over HTTP, a
            server killed inside each tool call and ``k`` racers sending one keyed request and
            one answer (:mod:`tether.testing.contract_served`); needs ``tether[serve]``. Or
            ``"temporal"``: the run as a Temporal workflow on the server ``temporal`` names, ``k``
            updates and ``k`` signals delivering one answer at once, a worker killed in each tool
            call, the histories replayed, each step forked twice into new workflows with
            ``TetherClient.fork`` (:mod:`tether.testing.contract_temporal`); needs ``tether[temporal]``.
        temporal: ``HOST:PORT`` of the Temporal server (``runtime="temporal"`` only).

    Raises:
        TetherError: A bad argument, or the uninterrupted reference run does not end.
    """
    wanted = list(dict.fromkeys(properties))
    unknown = [name for name in wanted if name not in PROPERTIES]
    if unknown or not wanted:
        raise TetherError(f"resume_contract properties={unknown or wanted!r}: choose from {', '.join(PROPERTIES)}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise TetherError(f"resume_contract k={k!r} must be an int >= 2 (processes answering at once)")
    if runtime not in RUNTIMES:
        raise TetherError(f"resume_contract runtime={runtime!r}: choose from {', '.join(RUNTIMES)}")
    if (runtime == "temporal") != (temporal is not None):
        raise TetherError("resume_contract: temporal='HOST:PORT' goes with runtime='temporal' (and only with it)")
    started = time.perf_counter()
    plan = new_plan("resume_contract", factory, prompt, store, workdir, timeout, answers)
    report = ContractReport(factory=factory, store=_hide_password(store), workdir=str(plan.workdir), runtime=runtime)
    checks = _Checks(plan, report)
    try:
        if runtime == "serve":
            from .contract_served import ServedChecks

            ServedChecks(plan, report, checks.add).check(wanted, k, points, recoveries, forks)
            return _finished(report, plan, wanted)
        if runtime == "temporal":
            from .contract_temporal import TemporalChecks

            TemporalChecks(plan, report, checks.add, str(temporal)).check(wanted, k, points, forks)
            return _finished(report, plan, wanted)
        reference = checks.reference()
        phases: tuple[tuple[tuple[str, ...], Callable[[], None]], ...] = (
            ((PREFIX, EFFECT), lambda: checks.crashes(points)),
            ((RECOVERY,), lambda: checks.recoveries(recoveries)),
            ((FORK,), lambda: checks.forks(forks)),
            ((VALIDITY,), checks.validity),
            ((CONSUME,), lambda: checks.consume_once(reference, k)),
            ((PREFIX, EFFECT, CONSUME), lambda: UndoChecks(checks, reference["compensable"], _load).check(wanted, points, k)),
        )
        for names, phase in phases:
            if any(name in wanted for name in names):
                mark = time.perf_counter()
                phase()
                report.timings["/".join(names)] = time.perf_counter() - mark
    finally:
        report.timings["total"] = time.perf_counter() - started
    return _finished(report, plan, wanted)


def _finished(report: ContractReport, plan: _Plan, wanted: list[str]) -> ContractReport:
    """The report's results in the paper's order; the temporary workdir removed when all held."""
    report.results = sorted((r for r in report.results if r.name in wanted), key=lambda r: PROPERTIES.index(r.name))
    if plan.own_workdir and report.ok:
        shutil.rmtree(plan.workdir, ignore_errors=True)
        report.workdir = ""
    return report


class _Checks:
    """The phases of one contract check, sharing its plan and report."""

    def __init__(self, plan: _Plan, report: ContractReport) -> None:
        self.plan = plan
        self.report = report
        self.steps = 0
        self.ref: tuple[str, str, Path] = ("", "", plan.workdir)
        self.runs: list[tuple[str, str]] = []  # (store, run id) of the runs made in the user's PostgreSQL database

    # -- places ------------------------------------------------------------------------

    def place(self, slug: str) -> tuple[str, str, Path]:
        """(store spec, run id, directory) of a fresh run named ``slug``."""
        directory = self.plan.workdir / slug
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        if self.plan.postgres:
            run_id = f"contract-{self.plan.token}-{slug}"
            self.runs.append((self.plan.store, run_id))
            return self.plan.store, run_id, directory
        return str(directory / "store.db"), RUN, directory

    def config(self, spec: str, run_id: str, directory: Path, action: str, **extra: Any) -> dict[str, Any]:
        return {
            "store": spec,
            "run_id": run_id,
            "action": action,
            "log": str(directory / f"{action}.log"),
            "scratch": str(directory / "scratch"),
            "answer_in_doubt": True,
            **extra,
        }

    def add(self, name: str, verdict: str, cases: int, detail: str, files: Iterable[Path | str] = ()) -> None:
        """Record a verdict; a property checked by two phases keeps the first violation, else adds up its cases."""
        new = PropertyResult(name, verdict, cases, detail, tuple(str(f) for f in files))
        for i, old in enumerate(self.report.results):
            if old.name == name:
                if old.verdict == VIOLATED:
                    return
                if verdict != VIOLATED:  # holds where any phase found it holding; else not applicable
                    merged = HOLDS if HOLDS in (old.verdict, verdict) else NOT_APPLICABLE
                    new = PropertyResult(name, merged, old.cases + cases, f"{old.detail}; {detail}", old.files)
                self.report.results[i] = new
                return
        self.report.results.append(new)

    # -- the uninterrupted run -----------------------------------------------------------

    def reference(self) -> dict[str, Any]:
        """Run the agent once without faults; its export (with ``asked``: the interrupts it answered)."""
        spec, run_id, directory = self.place("reference")
        child = _run(self.plan, self.config(spec, run_id, directory, "start"))
        if child.returncode != 0 or child.outcome.get("stop_reason") == "interrupt":
            raise TetherError(
                f"resume contract of {self.plan.factory}: the reference run (no fault) did not end (exit {child.returncode}, "
                f"outcome {child.outcome}); fix the agent or its factory, or pass answers= for its interrupts:\n{child.stderr[-3000:]}"
            )
        export = _load(spec, run_id)
        self.steps = len(export["steps"])
        self.ref = (spec, run_id, directory)
        asked, compensable = child.outcome.get("asked") or [], child.outcome.get("compensable") or []
        return {**export, "asked": asked, "stop_reason": child.outcome["stop_reason"], "compensable": compensable}

    # -- prefix continuation and effect exactly-once: crashtest --------------------------

    def crashes(self, points: int | str) -> None:
        """crashtest at every chosen save point; its failures sorted into the two properties."""
        crash = crashtest(
            self.plan.factory,
            self.plan.prompt,
            store=self.plan.store,
            points=points,
            workdir=self.plan.workdir / "crash",
            timeout=self.plan.timeout,
            answers=self.plan.answers,
        )
        effects = [f for f in crash.failures if _about_effects(f.reason)]
        others = [f for f in crash.failures if not _about_effects(f.reason)]
        cases = crash.points + crash.races
        for name, failures in ((EFFECT, effects), (PREFIX, others)):
            if failures:
                first = failures[0]
                logs = sorted((self.plan.workdir / "crash").glob(f"*{first.point.split()[-1]}*.log"))
                self.add(name, VIOLATED, cases, f"{first.point}: {first.reason}", [*first.exports, *logs])
            else:
                doubt = f", {crash.in_doubt_reruns} in-doubt re-runs with the same key" if name == EFFECT else ""
                self.add(name, HOLDS, cases, f"{crash.points} crash points and {crash.races} racing resumes{doubt}")

    # -- recovery determinism (and the stored prefix) ------------------------------------

    def recoveries(self, count: int) -> None:
        """Crash, copy the crashed store twice byte for byte, recover each copy: the same run, the prefix kept."""
        chosen = [p for p in select_points(max(self.steps, 1), "all") if p.when == "after" and p.write < self.steps]
        chosen = _spread(chosen, count)
        copies = PgCopies(self.plan.store, self.plan.token) if self.plan.postgres else None
        if copies is not None and not copies.allowed():
            self.add(RECOVERY, NOT_APPLICABLE, 0, f"the role cannot CREATE DATABASE on {self.report.store} (copies need it)")
            return
        done, violated = 0, set[str]()
        try:
            for point in chosen:
                found = self.recover(point, copies)
                if found is None:
                    continue
                done += 1
                for name, detail, files in found:
                    if name not in violated:
                        violated.add(name)
                        self.add(name, VIOLATED, done, detail, files)
        finally:
            if copies is not None:
                copies.drop_all()
        if done == 0:
            self.add(RECOVERY, NOT_APPLICABLE, 0, "the run has no save point to crash after and recover from")
            return
        self.add(RECOVERY, HOLDS, done * 2, f"{done} crashed stores, each recovered from two byte-identical copies to one run")
        self.add(PREFIX, HOLDS, done * 2, f"the stored steps of {done} crashed stores kept as they were by the recovery")

    def recover(self, point: Point, copies: PgCopies | None) -> list[tuple[str, str, list[Path]]] | None:
        """Crash at ``point``, recover two copies; the violations found (None: the run ended before the point)."""
        slug = f"recover-{point.slug}"
        directory = self.plan.workdir / slug
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        spec = copies.database(slug) if copies is not None else str(directory / "store.db")
        killed = _run(self.plan, self.config(spec, RUN, directory, "start", kill_at=point.write, when=point.when))
        if killed.returncode != -signal.SIGKILL:
            return None  # the run ended before this point in this schedule: nothing to recover
        targets: list[tuple[str, Path, str]] = []
        for name in ("a", "b"):
            target = self.plan.workdir / f"{slug}-{name}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(directory, target)  # the scratch directory too: the outside world as it was
            targets.append((name, target, copies.copy(slug, f"{slug}-{name}") if copies is not None else str(target / "store.db")))
        if copies is None and not _digest(directory) == _digest(targets[0][1]) == _digest(targets[1][1]):
            raise TetherError(f"resume contract: the copies of the crashed store {directory} are not byte-identical")
        prefix = _load(spec, RUN)["steps"]  # read after copying: opening a store may checkpoint its files
        found: list[tuple[str, str, list[Path]]] = []
        exports, paths = [], []
        for name, target, copy_spec in targets:
            resumed = _run(self.plan, self.config(copy_spec, RUN, target, "resume"))
            if resumed.returncode != 0:
                detail = f"{point.label}: recovery from copy {name} failed (exit {resumed.returncode}): {resumed.stderr[-800:]}"
                return [(RECOVERY, detail, [target])]
            export = {**_load(copy_spec, RUN), "stop_reason": resumed.outcome.get("stop_reason")}
            export["starts"] = sorted(s.key for s in _starts(target / "resume.log"))
            path = target / "export.json"
            path.write_text(json.dumps(export, indent=1, ensure_ascii=False, default=str))
            exports.append(export)
            paths.append(path)
            kept = export["steps"][: len(prefix)]
            if kept != prefix and not found:
                where = next((i for i, (x, y) in enumerate(zip(prefix, kept, strict=False)) if x != y), len(kept))
                found.append(
                    (PREFIX, f"{point.label}: step {where + 1}, stored before the crash, changed when copy {name} recovered", [path])
                )
        first, second = ({**_comparable(e), "starts": e["starts"]} for e in exports)
        diff = first_difference(first, second)
        if diff is not None:
            detail = f"{point.label}: two byte-identical copies of the crashed store recovered differently at {describe(diff)}"
            found.append((RECOVERY, detail, paths))
        return found

    # -- fork determinism -----------------------------------------------------------------

    def forks(self, forks: int | str) -> None:
        """Fork every chosen step of the reference run twice, run both on, compare."""
        spec, run_id, _ = self.ref
        steps = list(range(1, self.steps + 1))
        if forks != "all":
            if isinstance(forks, bool) or not isinstance(forks, int) or forks < 1:
                raise TetherError(f"resume_contract forks={forks!r} must be 'all' or a positive int")
            steps = _spread(steps, forks)
        for step in steps:
            exports, paths = [], []
            for name in ("a", "b"):
                fork_id = f"{run_id}.fork-{step}-{name}"
                directory = self.plan.workdir / f"fork-{step}-{name}"
                shutil.rmtree(directory, ignore_errors=True)
                directory.mkdir(parents=True)
                child = _run(self.plan, self.config(spec, run_id, directory, "fork", at=step, fork_id=fork_id))
                if child.returncode != 0:
                    detail = f"step {step}: fork {name} failed (exit {child.returncode}): {child.stderr[-800:]}"
                    self.add(FORK, VIOLATED, len(steps), detail, [directory])
                    return
                export = {**_load(spec, fork_id), "stop_reason": child.outcome.get("stop_reason")}
                path = directory / "export.json"
                path.write_text(json.dumps(export, indent=1, ensure_ascii=False, default=str))
                exports.append(json.loads(json.dumps(_comparable(export), default=str).replace(fork_id, "<fork>")))
                paths.append(path)
            diff = first_difference(exports[0], exports[1])
            if diff is not None:
                self.add(FORK, VIOLATED, len(steps), f"step {step}: its two forks differ at {describe(diff)}", paths)
                return
        self.add(FORK, HOLDS, len(steps) * 2, f"{len(steps)} steps forked twice, every pair ended the same")

    # -- checkpoint validity --------------------------------------------------------------

    def validity(self) -> None:
        """Refused values and a refused prompt, handed to the agent on the finished run: nothing stored changes."""
        spec, run_id, directory = self.ref
        before = _load(spec, run_id)
        child = _run(self.plan, self.config(spec, run_id, directory, "probe"))
        after = _load(spec, run_id)
        export = directory / "probe.json"
        export.write_text(json.dumps({"outcome": child.outcome, "stderr": child.stderr[-3000:]}, indent=1, ensure_ascii=False))
        cases = 7
        if child.returncode != 0:
            self.add(VALIDITY, VIOLATED, cases, f"the probe process failed (exit {child.returncode}): {child.stderr[-800:]}", [export])
        elif child.outcome.get("accepted") or child.outcome.get("crashed"):
            got = [*(f"{what} was accepted" for what in child.outcome.get("accepted") or []), *(child.outcome.get("crashed") or [])]
            self.add(VALIDITY, VIOLATED, cases, "; ".join(got), [export])
        elif (diff := first_difference(_comparable(before), _comparable(after))) is not None:
            self.add(
                VALIDITY, VIOLATED, cases, f"the refused values were refused, yet the stored run changed at {describe(diff)}", [export]
            )
        else:
            self.add(VALIDITY, HOLDS, cases, "6 state values and a prompt no store can keep: each refused, the stored run unchanged")

    # -- consume-once ---------------------------------------------------------------------

    def consume_once(self, reference: dict[str, Any], k: int) -> None:
        """Stop a run at its interrupt, then ``k`` processes answer it at the same instant."""
        if not reference["asked"]:
            self.add(CONSUME, NOT_APPLICABLE, 0, "the run asked nothing (no interrupt of its own); give an agent that asks and answers=")
            return
        spec, run_id, directory = self.place("consume")
        first = _run(self.plan, self.config(spec, run_id, directory, "start", answers=None))
        if first.outcome.get("stop_reason") != "interrupt":
            self.add(CONSUME, VIOLATED, 0, f"the run did not stop for its interrupt this time: {first.outcome}", [directory])
            return
        gate = directory / "gate"
        logs = [directory / f"answer-{i}.log" for i in range(k)]
        procs = [_spawn(self.plan, {**self.config(spec, run_id, directory, "answer"), "log": str(log), "gate": str(gate)}) for log in logs]
        try:
            for proc in procs:  # every racer built its agent and waits at the gate: release them together
                _ready(proc, self.plan.timeout)
            gate.touch()
            racers = [_finish(proc, self.plan.timeout) for proc in procs]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        # The racer whose answer was taken wrote; the others wrote nothing. The winner can still be
        # locked out later (exit 3 after writing): a checkpoint pause ends its lease, and a late
        # racer may hold the lease for the instant it takes to refuse. Then the run is finished by
        # a fresh process, as its owner would go on with it.
        proceeded = [r for r in racers if r.returncode in (0, 3) and r.outcome.get("writes", 0) > 0]
        refused = [r for r in racers if r.returncode == 3 and not r.outcome.get("writes", 0)]
        stop = proceeded[0].outcome.get("stop_reason") if proceeded else None
        if len(proceeded) == 1 and proceeded[0].returncode == 3:
            finish = directory / "finish.log"
            finished = _run(self.plan, {**self.config(spec, run_id, directory, "resume"), "log": str(finish)})
            logs.append(finish)
            stop = finished.outcome.get("stop_reason")
        starts = Counter(s.key for log in logs for s in _starts(log))
        twice = sorted(key for key, n in starts.items() if n > 1)
        export = {**_load(spec, run_id), "stop_reason": stop}
        path = directory / "export.json"
        path.write_text(json.dumps(export, indent=1, ensure_ascii=False, default=str))
        files = [path, *(log for log in logs if log.exists())]
        if len(proceeded) != 1 or len(refused) != k - 1:
            codes = Counter(r.returncode for r in racers)
            detail = f"{k} processes answered one interrupt at once: {len(proceeded)} proceeded (must be 1), exit codes {dict(codes)}"
            self.add(CONSUME, VIOLATED, k, detail + (f": {racers[0].stderr[-500:]}" if not proceeded else ""), files)
        elif twice:
            self.add(
                CONSUME, VIOLATED, k, f"{k} processes answered one interrupt: a tool started {starts[twice[0]]} times for {twice[0]}", files
            )
        elif (diff := first_difference(_comparable(reference, self.ref[1]), _comparable(export, run_id))) is not None:
            self.add(CONSUME, VIOLATED, k, f"the answered run differs from the reference at {describe(diff)}", files)
        else:
            self.add(CONSUME, HOLDS, k, f"{k} processes answered one interrupt at once: 1 proceeded, {k - 1} refused, each effect once")


def _about_effects(reason: str) -> bool:
    """Whether a crashtest failure is about how often a tool started (not about what the run holds)."""
    return any(words in reason for words in ("started", "never ran", "racing resumers proceeded", "when re-run in doubt"))


def _digest(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory``, by relative path."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }
