"""The served contract's store-bound checks: checkpoint validity and recovery determinism over HTTP.

- **checkpoint validity**: what a client can send that no store can keep (a prompt with a lone
  surrogate, as a new run and as a new turn of a finished run; a body with NaN or infinity) is
  refused with a 4xx JSON answer, and the stored runs do not change (no run made, the finished
  run unchanged);
- **recovery determinism**: a server held inside a tool call (the crash to come) has its store
  copied twice byte for byte, then is killed; a fresh server on each copy takes the run over, and
  both copies end the same (messages, state, status, tool starts). SQLite only: a PostgreSQL
  copy is made from the database as a template, which needs it without sessions, and the check's
  servers hold sessions on it.

Used by :mod:`tether.testing.contract_served`; not a public API.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .._diff import describe, first_difference
from ._http import request
from ._procs import _Plan, _starts
from ._served_server import _Server
from .contract_report import HOLDS, NOT_APPLICABLE, RECOVERY, VALIDITY, VIOLATED, ContractReport
from .contract_runs import _comparable, _load


class ServedChecks(Protocol):
    """What these checks use of :class:`tether.testing.contract_served.ServedChecks`."""

    plan: _Plan
    report: ContractReport
    store: str
    directory: Path
    reference: dict[str, Any]
    add: Callable[..., None]

    def run_id(self, slug: str) -> str: ...

    def drive(self, servers: list[_Server], run_id: str, until: Callable[[], bool] | None = None) -> dict[str, Any]: ...


STORE_FILES = ("store.db", "store.db-wal", "store.db-shm")


def validity(checks: ServedChecks, server: _Server) -> None:
    """Send what no store can keep; each must be a 4xx JSON refusal that changes nothing stored."""
    ref = checks.reference["run_id"]
    fresh = checks.run_id("validity")
    before = _load(checks.store, ref)
    probes: list[tuple[str, str, Any]] = [
        ("a new run's prompt with a lone surrogate", "/agents/agent/runs", {"prompt": "\ud800 go", "run_id": fresh}),
        ("a new turn's prompt with a lone surrogate", "/agents/agent/runs", {"prompt": "\udfff again", "run_id": ref}),
        ("a prompt that is NaN", "/agents/agent/runs", {"prompt": float("nan"), "run_id": fresh}),
        ("a prompt with infinity", "/agents/agent/runs", {"prompt": [{"text": "x", "n": float("inf")}], "run_id": fresh}),
    ]
    accepted: list[str] = []
    for label, path, body in probes:
        status, answer, headers = request(server.url + path, body, timeout=30)
        if not 400 <= status < 500 or "json" not in headers.get("content-type", ""):
            accepted.append(f"{label}: {status} {answer}")
    after = _load(checks.store, ref)
    made = _load(checks.store, fresh)
    report = checks.directory / "validity.json"
    report.write_text(json.dumps({"accepted": accepted, "made": made["steps"] != []}, indent=1))
    if accepted:
        checks.add(VALIDITY, VIOLATED, len(probes), "not refused with a 4xx JSON answer: " + "; ".join(accepted), [str(report)])
    elif made["steps"] or made["messages"]:
        checks.add(VALIDITY, VIOLATED, len(probes), f"refused, yet run {fresh!r} was stored", [str(report)])
    elif (diff := first_difference(_comparable(before), _comparable(after))) is not None:
        checks.add(VALIDITY, VIOLATED, len(probes), f"refused, yet the finished run changed at {describe(diff)}", [str(report)])
    else:
        detail = f"{len(probes)} requests carrying values no store can keep: each a 4xx JSON refusal, nothing stored changed"
        checks.add(VALIDITY, HOLDS, len(probes), detail)


class Recoveries:
    """Byte-identical copies of the served store taken while a server is held inside a tool call."""

    def __init__(self, checks: ServedChecks) -> None:
        self.checks = checks
        self.copies: list[tuple[str, str, Path, Path]] = []  # (label, run id, copy a, copy b)

    def copy(self, label: str, run_id: str) -> None:
        """Copy the store as the held (about to be killed) server leaves it: once, then that copy again."""
        base = self.checks.directory
        first, second = base / f"recover-{len(self.copies)}-a", base / f"recover-{len(self.copies)}-b"
        for target in (first, second):
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
        for name in STORE_FILES:
            if (base / name).exists():
                shutil.copyfile(base / name, first / name)
        for name in STORE_FILES:
            if (first / name).exists():
                shutil.copyfile(first / name, second / name)
        self.copies.append((label, run_id, first, second))

    def check(self) -> None:
        checks = self.checks
        if checks.plan.postgres:
            why = "PostgreSQL copies are made from the database as a template, which needs it without sessions (the servers hold some)"
            checks.add(RECOVERY, NOT_APPLICABLE, 0, f"served on {checks.report.store}: {why}; check it with runtime='local'")
            return
        if not self.copies:
            checks.add(RECOVERY, NOT_APPLICABLE, 0, "no server was killed inside a tool call: nothing to recover")
            return
        for label, run_id, *targets in self.copies:
            if _digest(targets[0]) != _digest(targets[1]):
                checks.add(RECOVERY, VIOLATED, 0, f"{label}: the two copies of the crashed store are not byte-identical")
                return
            ends: list[dict[str, Any]] = []
            for target in targets:
                server = _Server(checks.plan, str(target / "store.db"), target / "starts.log", target.name)
                server.start()
                try:
                    run = checks.drive([server], run_id)
                finally:
                    server.kill()
                data = {**_load(str(target / "store.db"), run_id), "stop_reason": run.get("stop_reason")}
                (data.get("state") or {}).pop("tether.serve", None)
                starts = Counter(s.id for s in _starts(target / "starts.log") if s.key.startswith(run_id + "/"))
                data["starts"] = dict(sorted(starts.items()))
                (target / "export.json").write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str))
                ends.append({**_comparable(data, run_id), "starts": data["starts"]})
            diff = first_difference(ends[0], ends[1])
            if diff is not None:
                files = [str(t / "export.json") for t in targets]
                checks.add(RECOVERY, VIOLATED, len(self.copies), f"{label}: two copies recovered differently at {describe(diff)}", files)
                return
        count = len(self.copies)
        checks.add(
            RECOVERY,
            HOLDS,
            count * 2,
            f"{count} crashed stores, each copied twice byte for byte and taken over by a fresh server: the same run",
        )


def _digest(directory: Path) -> dict[str, str]:
    return {name: hashlib.sha256((directory / name).read_bytes()).hexdigest() for name in STORE_FILES if (directory / name).exists()}


__all__ = ["Recoveries", "validity"]
