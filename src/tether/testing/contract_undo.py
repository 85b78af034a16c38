"""The resume contract on compensation: the unwinding of a run, under the paper's faults.

When the agent's tools declare compensations (``@tool(compensate=...)``), the contract asks for
the compensation of its finished run (``agent.compensate(run_id)`` in a child process) and checks
the unwinding as it checks the run, each compensation counted on its own side (a wrapper records
every start of it and what it returned, :func:`tether.testing._child.count_undos`):

- **effect exactly-once**: the compensating process is SIGKILLed at every save point of the
  unwinding and a fresh process compensates again: each performed call is undone once per undo
  key, newest call first; twice only when the kill caught that undo in doubt (started, its
  outcome not recorded), and then it returns what it returned the first time (a compensation
  must be idempotent by its undo key); an undo recorded before the kill never runs again;
- **prefix continuation**: the steps recorded before the kill are kept, the resumed unwinding
  records the same steps as the uninterrupted one and ends with its status (``compensated``, or
  ``compensation_failed`` when a compensation raises, as designed);
- **consume-once**: ``k`` processes ask to compensate one run at the same instant: one unwinds
  it, the others are refused (the run is locked) or given the stored report, each undo once.

Details name the unwinding (``unwinding: 8 kills, each undo once ...``); an agent whose tools
declare no compensation gets a "not applicable" note on effect exactly-once.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from ..durable.compensation import performed_calls
from ..errors import TetherError
from ..tools.compensation import UNDO_SUFFIX
from ._procs import _Child, _finish, _Plan, _ready, _run, _spawn
from .contract_report import CONSUME, EFFECT, HOLDS, NOT_APPLICABLE, PREFIX, VIOLATED
from .crash import select_points

UNWINDING = ("unwind", "undo", "unwound")
"""The positions of an unwinding's steps."""


class _Checks(Protocol):
    """What the unwinding phase uses of the contract check it is part of (:class:`tether.testing.contract._Checks`)."""

    plan: _Plan

    def place(self, slug: str) -> tuple[str, str, Path]: ...

    def config(self, spec: str, run_id: str, directory: Path, action: str, **extra: Any) -> dict[str, Any]: ...

    def add(self, name: str, verdict: str, cases: int, detail: str, files: Iterable[Path | str] = ()) -> None: ...


class _Undos:
    """A compensating process's undo log: the undo keys in the order they started, and what each returned."""

    def __init__(self, log: Path) -> None:
        records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
        self.started = [str(r["key"]) for r in records if "returned" not in r]
        self.names = {str(r["key"]): str(r["name"]) for r in records}
        self.returned = {str(r["key"]): r["returned"] for r in records if "returned" in r}


class UndoChecks:
    """The unwinding phase of one contract check (local runtime), sharing its plan and report."""

    def __init__(self, checks: _Checks, compensable: Iterable[str], load: Callable[[str, str], dict[str, Any]]) -> None:
        self.checks = checks
        self.load = load  # the stored run as JSON data: its messages, status and steps
        self.compensable = set(compensable)
        self.status = ""
        self.failed: list[str] = []
        self.calls: list[str] = []  # the toolUseIds of the calls to undo, newest first
        self.shape: list[str] = []
        self.writes = 0

    def check(self, wanted: list[str], points: int | str, k: int) -> None:
        """Compensate the run, then kill the unwinding at every chosen save point, then race ``k`` compensations."""
        if not self.compensable:
            if EFFECT in wanted:
                self.checks.add(EFFECT, NOT_APPLICABLE, 0, "unwinding: no tool declares a compensation (compensate=), nothing to undo")
            return
        if not self.reference(wanted):
            return
        if PREFIX in wanted or EFFECT in wanted:
            self.kills(wanted, points)
        if CONSUME in wanted:
            self.race(k)

    # -- the uninterrupted unwinding -----------------------------------------------------

    def finished_run(self, slug: str) -> tuple[str, str, Path]:
        """A fresh run of the agent, run to its end without faults: (store spec, run id, directory)."""
        spec, run_id, directory = self.checks.place(slug)
        child = _run(self.checks.plan, self.checks.config(spec, run_id, directory, "start"))
        if child.returncode != 0 or child.outcome.get("stop_reason") == "interrupt":
            raise TetherError(
                f"resume contract of {self.checks.plan.factory}: the run to compensate ({slug}) did not end "
                f"(exit {child.returncode}, outcome {child.outcome}):\n{child.stderr[-2000:]}"
            )
        return spec, run_id, directory

    def compensate(self, spec: str, run_id: str, directory: Path, name: str, **extra: Any) -> _Child:
        config = self.checks.config(spec, run_id, directory, "compensate", **extra)
        return _run(self.checks.plan, {**config, "log": str(directory / f"{name}.starts.log"), "undo_log": str(directory / f"{name}.log")})

    def reference(self, wanted: list[str]) -> bool:
        """Compensate one finished run without faults; False when there is nothing to check further."""
        spec, run_id, directory = self.finished_run("unwind-reference")
        child = self.compensate(spec, run_id, directory, "undo")
        stored = self.load(spec, run_id)
        calls = performed_calls(stored["messages"], {}, [], "done")
        self.calls = [str(c["toolUseId"]) for c in calls if c["name"] in self.compensable]
        undos = _Undos(directory / "undo.log")
        files = [directory / "undo.log", _export(directory, stored)]
        name = EFFECT if EFFECT in wanted else PREFIX if PREFIX in wanted else CONSUME
        if child.returncode != 0 or child.outcome.get("status") not in ("compensated", "compensation_failed"):
            detail = f"unwinding: compensating the finished run failed (exit {child.returncode}): {child.stderr[-800:] or child.outcome}"
            self.checks.add(name, VIOLATED, 1, detail, files)
            return False
        if not self.calls:
            self.checks.add(name, NOT_APPLICABLE, 0, "unwinding: the run performed no call whose tool has a compensation")
            return False
        found = self.effects(run_id, undos, _Undos(directory / "none.log"), set(), "the uninterrupted unwinding")
        if found is not None:
            self.checks.add(EFFECT, VIOLATED, 1, found, files)
            return False
        self.status = str(child.outcome["status"])
        self.failed = [f"{u['tool']} ({u['error']})" for u in child.outcome.get("undos") or [] if u.get("outcome") == "failed"]
        self.shape = _shape(stored["steps"])
        self.writes = int(child.outcome.get("writes", 0))
        return True

    def keys(self, run_id: str) -> list[str]:
        """The undo keys of run ``run_id`` (its calls are the reference run's), newest call first."""
        return [f"{run_id}/{ident}{UNDO_SUFFIX}" for ident in self.calls]

    # -- a kill at every save point of the unwinding -----------------------------------------

    def kills(self, wanted: list[str], points: int | str) -> None:
        """SIGKILL the compensating process at each chosen save point, compensate again in a fresh one, judge."""
        done, in_doubt, violated = 0, 0, set[str]()
        for point in select_points(self.writes, points):
            spec, run_id, directory = self.finished_run(f"unwind-{point.slug}")
            killed = self.compensate(spec, run_id, directory, "killed", kill_at=point.write, when=point.when)
            if killed.returncode != -signal.SIGKILL:
                continue  # the unwinding ended before this point in this schedule
            prefix = self.load(spec, run_id)["steps"]
            resumed = self.compensate(spec, run_id, directory, "resumed")
            stored = self.load(spec, run_id)
            files = [_export(directory, stored), directory / "killed.log", directory / "resumed.log"]
            done += 1
            label = f"unwinding killed {point.label}"
            first, second = _Undos(directory / "killed.log"), _Undos(directory / "resumed.log")
            recorded = {f"{run_id}/{s['undo']['toolUseId']}{UNDO_SUFFIX}": s for s in prefix if s["position"] == "undo"}
            found = {
                PREFIX: self.continuation(resumed, prefix, stored["steps"]),
                EFFECT: self.effects(run_id, first, second, set(recorded), "", recorded),
            }
            in_doubt += sum(1 for key in first.started if key in second.started)
            for prop, detail in found.items():
                if detail is not None and prop in wanted and prop not in violated:
                    violated.add(prop)
                    self.checks.add(prop, VIOLATED, done, f"{label}: {detail}", files)
        if done == 0:
            return
        if EFFECT in wanted and EFFECT not in violated:
            doubt = f", {in_doubt} in-doubt undos re-run with the same undo key" if in_doubt else ""
            self.checks.add(EFFECT, HOLDS, done, f"unwinding: {done} kills, each undo once, newest call first{doubt}")
        if PREFIX in wanted and PREFIX not in violated:
            ended = self.status + (f" as designed ({'; '.join(self.failed)} reported)" if self.failed else "")
            self.checks.add(
                PREFIX, HOLDS, done, f"unwinding: {done} kills resumed in a fresh process, the recorded steps kept, ended {ended}"
            )

    def continuation(self, resumed: _Child, prefix: list[dict[str, Any]], steps: list[dict[str, Any]]) -> str | None:
        """What the resumed unwinding got wrong about the steps and the status, or None."""
        if resumed.returncode != 0:
            return f"compensating again failed (exit {resumed.returncode}): {resumed.stderr[-800:]}"
        kept = steps[: len(prefix)]
        if kept != prefix:
            where = next((i for i, (x, y) in enumerate(zip(prefix, kept, strict=False)) if x != y), len(kept))
            return f"step {where + 1}, recorded before the kill, changed when the unwinding resumed"
        if _shape(steps) != self.shape:
            return f"the resumed unwinding recorded {_shape(steps)}, the uninterrupted one {self.shape}"
        if resumed.outcome.get("status") != self.status:
            return f"the resumed unwinding ended {resumed.outcome.get('status')}, the uninterrupted one {self.status}"
        return None

    def effects(
        self,
        run_id: str,
        first: _Undos,
        second: _Undos,
        before: set[str],
        where: str,
        recorded: dict[str, dict[str, Any]] | None = None,
    ) -> str | None:
        """What is wrong with the undos two processes (the killed one, the resumed one) ran on run
        ``run_id``, or None. ``before``: the undo keys whose outcome was recorded before the kill
        (never to run again)."""
        expected = self.keys(run_id)
        names = {**first.names, **second.names}
        counts = (Counter(first.started), Counter(second.started))
        prefix = f"{where}: " if where else ""
        for key in expected:
            total = counts[0][key] + counts[1][key]
            what = f"the undo of `{names.get(key, key.split('/')[-2])}` ({key})"
            if total == 0:
                return f"{prefix}{what} never ran"
            if key in before and counts[1][key]:
                step = (recorded or {}).get(key, {})
                return (
                    f"{prefix}{what}, recorded {step.get('undo', {}).get('outcome', 'done')} at step {step.get('step')} "
                    f"before the kill, ran again when the unwinding resumed ({total} undos in all)"
                )
            if max(counts[0][key], counts[1][key]) > 1:
                return f"{prefix}{what} started {max(counts[0][key], counts[1][key])} times in one process"
            if counts[0][key] and counts[1][key] and key in first.returned and first.returned[key] != second.returned.get(key):
                return (
                    f"{prefix}{what} returned {first.returned[key]!r}, then {second.returned.get(key)!r} when re-run in doubt "
                    "with the same undo key: the compensation is not idempotent by its key"
                )
        extra = sorted((set(counts[0]) | set(counts[1])) - set(expected))
        if extra:
            return f"{prefix}undid {extra[0]}, a call the run did not perform"
        order = list(dict.fromkeys([*first.started, *second.started]))
        if order != expected:
            return f"{prefix}undone in the order {_calls(order)}, not newest call first {_calls(expected)}"
        return None

    # -- k processes compensating one run at once --------------------------------------------

    def race(self, k: int) -> None:
        """``k`` processes ask to compensate one finished run at the same instant."""
        plan = self.checks.plan
        spec, run_id, directory = self.finished_run("unwind-race")
        gate = directory / "gate"
        logs = [directory / f"undo-{i}.log" for i in range(k)]
        config = self.checks.config(spec, run_id, directory, "compensate")
        procs = [_spawn(plan, {**config, "log": str(log) + ".starts", "undo_log": str(log), "gate": str(gate)}) for log in logs]
        try:
            for proc in procs:
                _ready(proc, plan.timeout)
            gate.touch()
            racers = [_finish(proc, plan.timeout) for proc in procs]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        stored = self.load(spec, run_id)
        files = [_export(directory, stored), *(log for log in logs if log.exists())]
        unwound = [r for r in racers if r.returncode == 0 and r.outcome.get("writes", 0) > 0]
        refused = [r for r in racers if r.returncode == 3]
        late = [r for r in racers if r.returncode == 0 and r.outcome.get("writes", 0) == 0]
        starts = Counter(key for log in logs for key in _Undos(log).started)
        twice = sorted(key for key, n in starts.items() if n > 1)
        head = f"unwinding: {k} processes compensated one run at once"
        if len(unwound) != 1 or len(refused) + len(late) != k - 1:
            codes = dict(Counter(r.returncode for r in racers))
            detail = f"{head}: {len(unwound)} unwound it (must be 1), exit codes {codes}"
            self.checks.add(CONSUME, VIOLATED, k, detail + (f": {racers[0].stderr[-500:]}" if not unwound else ""), files)
        elif twice:
            self.checks.add(CONSUME, VIOLATED, k, f"{head}: the undo {twice[0]} started {starts[twice[0]]} times", files)
        elif sorted(starts) != sorted(self.keys(run_id)) or stored["status"] != self.status:
            detail = f"{head}: undid {_calls(list(starts))} and ended {stored['status']}, alone it undid {_calls(self.keys(run_id))}"
            self.checks.add(CONSUME, VIOLATED, k, detail + f" and ended {self.status}", files)
        else:
            detail = f"{head}: 1 unwound it, {len(refused)} refused, {len(late)} given the stored report, each undo once"
            self.checks.add(CONSUME, HOLDS, k, detail)


def _shape(steps: list[dict[str, Any]]) -> list[str]:
    """The unwinding's steps in words (``undo flight undone``), the redo flag of an in-doubt undo left out."""
    out = []
    for step in steps:
        if step["position"] in UNWINDING:
            undo = step.get("undo") or {}
            out.append(" ".join(str(x) for x in (step["position"], undo.get("toolUseId"), undo.get("outcome")) if x is not None))
    return out


def _calls(keys: list[str]) -> str:
    """Undo keys as their calls' ids (``[charge, hotel, flight]``)."""
    return "[" + ", ".join(key.removesuffix(UNDO_SUFFIX).rsplit("/", 1)[-1] for key in keys) + "]"


def _export(directory: Path, stored: dict[str, Any]) -> Path:
    path = directory / "export.json"
    path.write_text(json.dumps(stored, indent=1, ensure_ascii=False, default=str))
    return path
