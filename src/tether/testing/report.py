"""What a crashtest found: :class:`CrashReport` and its :class:`CrashFailure` entries."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import CrashTestError


@dataclass(frozen=True)
class CrashFailure:
    """One save point whose crash-and-resume outcome differed from the reference run.

    Attributes:
        point: The save point, ``"before write 7"`` / ``"after write 7"`` (or ``"race after write 7"``).
        write: The 1-based number of the store write the crash was placed at.
        when: ``"before"`` (the write never happened) or ``"after"`` (it was durable).
        reason: What differed, and what to do about it.
        exports: Paths of the JSON exports of the reference run and of this run.
    """

    point: str
    write: int
    when: str
    reason: str
    exports: tuple[str, str]


@dataclass
class CrashReport:
    """The outcome of :func:`tether.testing.crashtest`.

    Attributes:
        factory: The ``"module:attr"`` factory tested.
        store: ``"sqlite"`` or the PostgreSQL URL (password hidden).
        writes: Save points of the reference run (its store writes).
        points: Crash points tested (each write can be crashed ``before`` and ``after``).
        failures: Every point whose outcome differed from the reference.
        in_doubt_reruns: In-doubt tool calls that ran again on resume (same idempotency key).
        in_doubt_interrupts: ``tether.in_doubt`` interrupts raised on resume (a tool marked
            ``idempotent=False`` with no ``reconcile``); answered ``"rerun"`` to finish the run,
            not failures (the re-run's result is not compared: a person chose to run it again).
        reconciled: In-doubt calls settled by the agent's ``reconcile`` without a re-run.
        races: Racing-phase points run (two resumers at once on the same crashed run).
        unreached: Crash points past the end of their run: tools running at once finished in
            another order than in the reference run and their results took fewer save points,
            so the run finished first (it is still compared with the reference).
        workdir: Where the stores, logs and exports are; ``""`` when crashtest made a temporary
            directory and removed it because every point passed.
        timings: Seconds spent: ``reference``, ``points``, ``races``, ``total``.
    """

    factory: str
    store: str
    writes: int = 0
    points: int = 0
    failures: list[CrashFailure] = field(default_factory=list)
    in_doubt_reruns: int = 0
    in_doubt_interrupts: int = 0
    reconciled: int = 0
    races: int = 0
    unreached: int = 0
    workdir: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every crash point ended exactly like the reference run."""
        return not self.failures

    def raise_for_failures(self) -> CrashReport:
        """Raise :class:`~tether.errors.CrashTestError` listing the failures (for a pytest test); returns self when ok."""
        if self.failures:
            failed = f"{len(self.failures)} of {self.points} crash points failed"
            lines = [f"crashtest of {self.factory}: {failed} (files kept in {self.workdir})"]
            lines += [f"- {f.point}: {f.reason} (exports: {f.exports[0]}, {f.exports[1]})" for f in self.failures[:20]]
            raise CrashTestError("\n".join(lines))
        return self

    def summary(self) -> str:
        """One line: points, failures, in-doubt figures, the total time and, after a failure, where the files are."""
        return (
            f"crashtest {self.factory} on {self.store}: {self.points} crash points over {self.writes} save points, "
            f"{self.races} races, {self.unreached} unreached, {len(self.failures)} failures, {self.in_doubt_reruns} in-doubt re-runs, "
            f"{self.in_doubt_interrupts} in-doubt interrupts, {self.reconciled} reconciled, {self.timings.get('total', 0.0):.1f} s"
            + (f"; files kept in {self.workdir}" if self.failures else "")
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data (``tether crashtest --json``)."""
        data = asdict(self)
        data["ok"] = self.ok
        data["failures"] = [{**asdict(f), "exports": list(f.exports)} for f in self.failures]
        return data
