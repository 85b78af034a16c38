"""What the resume contract found: one :class:`PropertyResult` per property, in a :class:`ContractReport`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ContractViolationError

PREFIX = "prefix continuation"
EFFECT = "effect exactly-once"
FORK = "fork determinism"
VALIDITY = "checkpoint validity"
CONSUME = "consume-once"
RECOVERY = "recovery determinism"
PROPERTIES = (PREFIX, EFFECT, FORK, VALIDITY, CONSUME, RECOVERY)
"""The six properties of "Resume Means Resume" (arXiv:2608.03836), in the paper's order."""

HOLDS = "holds"
VIOLATED = "violated"
NOT_APPLICABLE = "not applicable"


@dataclass(frozen=True)
class PropertyResult:
    """The verdict on one property.

    Attributes:
        name: One of :data:`PROPERTIES`.
        verdict: ``"holds"``, ``"violated"`` or ``"not applicable"``.
        cases: How many cases were checked (crash points, forked steps, copies, probes, racers).
        detail: For a violation, the smallest counterexample in words (the step or crash point,
            what differed, which tool ran how often); for "not applicable", why; else a summary.
        files: The files that show it: run exports, effect logs, the two diverging runs.
    """

    name: str
    verdict: str
    cases: int
    detail: str
    files: tuple[str, ...] = ()


@dataclass
class ContractReport:
    """The outcome of :func:`tether.testing.resume_contract`.

    Attributes:
        factory: The ``"module:attr"`` factory checked.
        store: ``"sqlite"`` or the PostgreSQL URL (password hidden).
        results: One entry per property checked, in :data:`PROPERTIES` order.
        workdir: Where stores, logs and exports are; ``""`` when the contract made a temporary
            directory and removed it because nothing was violated.
        timings: Seconds per phase and ``total``.
        runtime: Where the runs ran: ``"local"`` (child processes of the check), ``"serve"``
            (``tether serve`` processes driven over HTTP) or ``"temporal"``.
    """

    factory: str
    store: str
    results: list[PropertyResult] = field(default_factory=list)
    workdir: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    runtime: str = "local"

    @property
    def ok(self) -> bool:
        """True when no property is violated (holding or not applicable)."""
        return all(result.verdict != VIOLATED for result in self.results)

    @property
    def where(self) -> str:
        """The store, and the runtime when it is not local (``"sqlite, served"``)."""
        return self.store if self.runtime == "local" else f"{self.store}, {'served' if self.runtime == 'serve' else self.runtime}"

    def result(self, name: str) -> PropertyResult:
        """The verdict on property ``name``; KeyError when it was not checked."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def raise_for_violations(self) -> ContractReport:
        """Raise :class:`~tether.errors.ContractViolationError` naming each violation (for a test); self when ok."""
        violated = [r for r in self.results if r.verdict == VIOLATED]
        if violated:
            lines = [f"resume contract of {self.factory} on {self.where}: {len(violated)} of {len(self.results)} properties violated"]
            lines += [f"- {r.name}: {r.detail}" + (f" (files: {', '.join(r.files)})" if r.files else "") for r in violated]
            raise ContractViolationError("\n".join(lines))
        return self

    def summary(self) -> str:
        """One line per property: its verdict, the cases checked and the detail."""
        width = max(len(name) for name in PROPERTIES)
        lines = [f"resume contract {self.factory} on {self.where} ({self.timings.get('total', 0.0):.1f} s)"]
        lines += [f"  {r.name:<{width}}  {r.verdict:<14}  {r.cases:>4} cases  {r.detail}" for r in self.results]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data (``tether contract --json``)."""
        data = asdict(self)
        data["ok"] = self.ok
        data["results"] = [{**asdict(r), "files": list(r.files)} for r in self.results]
        return data
