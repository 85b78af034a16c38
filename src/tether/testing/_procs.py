"""Child processes of the crash and contract checks: the plan they share, spawning a child
(``python -m tether.testing._child``), reading its outcome and its tool-starts log.

Used by :mod:`tether.testing.crash` and :mod:`tether.testing.contract`; not a public API.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..durable.store import StoredRun
from ..errors import TetherError


@dataclass
class _Child:
    returncode: int
    outcome: dict[str, Any]
    stderr: str


@dataclass
class _Plan:
    factory: str
    prompt: str
    store: str
    workdir: Path
    timeout: float
    token: str
    sys_path: list[str]
    env: dict[str, str]
    reference: dict[str, Any] = field(default_factory=dict)
    ref_runs: Counter[str] = field(default_factory=Counter)
    names: dict[str, str] = field(default_factory=dict)
    own_workdir: bool = False
    answers: dict[str, Any] | None = None  # responses to the run's own interrupts, by interrupt name

    @property
    def postgres(self) -> bool:
        return self.store.startswith(("postgresql://", "postgres://"))

    def spec_for(self, slug: str) -> str:
        return self.store if self.postgres else str(self.workdir / f"{slug}.db")

    def run_id_for(self, slug: str) -> str:
        return f"crashtest-{self.token}-{slug}" if self.postgres else "crashtest"


def new_plan(
    what: str,
    factory: str,
    prompt: str,
    store: str,
    workdir: str | os.PathLike[str] | None,
    timeout: float,
    answers: Mapping[str, Any] | None,
) -> _Plan:
    """The plan of a check named ``what`` (``"crashtest"``, ``"resume_contract"``): its store
    checked, its working directory made (a new temporary one when ``workdir`` is None)."""
    if store != "sqlite" and not store.startswith(("postgresql://", "postgres://")):
        raise TetherError(f"{what} store={store!r} must be 'sqlite' or a postgresql:// URL")
    root = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix=f"tether-{what.replace('_', '-')}-"))
    root.mkdir(parents=True, exist_ok=True)
    own, token = workdir is None, uuid.uuid4().hex[:8]
    return _Plan(
        factory, prompt, store, root.resolve(), timeout, token, *_child_paths(), own_workdir=own, answers=dict(answers or {}) or None
    )


def _child_paths() -> tuple[list[str], dict[str, str]]:
    """The parent's import path for the children (cwd first, like ``python -m``)."""
    paths = [os.getcwd(), *[p for p in sys.path if p]]
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        dict.fromkeys([package_root, os.getcwd(), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    )
    return list(dict.fromkeys(paths)), env


def _hide_password(store: str) -> str:
    if "://" not in store or "@" not in store:
        return store
    scheme, rest = store.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}" if ":" in creds else store


def _spawn(plan: _Plan, config: dict[str, Any]) -> subprocess.Popen[str]:
    payload = {"factory": plan.factory, "prompt": plan.prompt, "sys_path": plan.sys_path, "answers": plan.answers, **config}
    return subprocess.Popen(
        [sys.executable, "-m", "tether.testing._child", json.dumps(payload)],
        cwd=os.getcwd(),
        env=plan.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float) -> _Child:
    """Wait for a child (killing it at the timeout) and parse its outcome line."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return _Child(-signal.SIGKILL, {"hung": True}, err + f"\n(killed after {timeout:.0f} s)")
    outcome: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            outcome = json.loads(line)
    return _Child(proc.returncode, outcome, err)


def _ready(proc: subprocess.Popen[str], timeout: float) -> bool:
    """Wait (at most ``timeout`` s) for the child's ``ready`` line; False if it died or hung first."""
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], timeout)
    return bool(readable) and proc.stdout.readline().strip() == "ready"


def _run(plan: _Plan, config: dict[str, Any]) -> _Child:
    proc = _spawn(plan, config)
    try:
        return _finish(proc, plan.timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class _Start:
    """One start of a tool's body, as a child's starts log records it."""

    key: str  # the idempotency key, run_id/toolUseId
    id: str  # the toolUseId
    name: str


def _starts(log: Path) -> list[_Start]:
    """The tool starts a child recorded in ``log`` (none when it started no tool), less those
    whose body stopped to ask a person (a line marked ``interrupted`` cancels one start)."""
    if not log.exists():
        return []
    starts: list[_Start] = []
    for record in (json.loads(line) for line in log.read_text().splitlines() if line.strip()):
        start = _Start(str(record["key"]), str(record["id"]), str(record["name"]))
        if record.get("interrupted") and start in starts:
            starts.remove(start)
        elif not record.get("interrupted"):
            starts.append(start)
    return starts


def _spread(items: list[Any], n: int) -> list[Any]:
    """``n`` of ``items``, spread evenly from the first to the last (all of them when ``n`` covers them)."""
    if n <= 0 or not items:
        return []
    if n >= len(items):
        return list(items)
    return list(dict.fromkeys(items[round(i * (len(items) - 1) / max(n - 1, 1))] for i in range(n)))


def _begun(log: Path, run_id: str) -> list[str]:
    """Every start of a tool body of ``run_id`` in ``log``, in order, as tool-use ids (a body that
    stopped to ask counts too: it is where a hold counter of the served and Temporal checks stops)."""
    if not log.exists():
        return []
    lines = (json.loads(line) for line in log.read_text().splitlines() if line.strip())
    return [str(r["id"]) for r in lines if not r.get("interrupted") and str(r["key"]).startswith(run_id + "/")]


def _by_id(starts: Iterable[_Start]) -> Counter[str]:
    return Counter(start.id for start in starts)


def _export(run: StoredRun | None, path: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "messages": [] if run is None else run.messages,
        "state": {} if run is None else run.head.get("state") or {},
        "status": None if run is None else run.head.get("status"),
        **(extra or {}),
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    return data
