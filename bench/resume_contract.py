"""The resume-contract scoreboard: the six properties of "Resume Means Resume" (arXiv:2608.03836) on
Tether and its peers, measured in one interleaved run: ``python bench/resume_contract.py``.

Every framework runs the same agent (``bench/peers/contract_common.py``): a scripted model calls one
effect-bearing tool, ``charge(order)``, which asks a person (one interrupt) and then appends the
order to a side-effect log; the model then answers. Tether is checked by its own kit
(:func:`tether.testing.resume_contract`, factory ``bench/peers/contract_tether.py``); every peer
runs as child processes of ``bench/peers/contract_<peer>.py`` in its own virtual environment
(made like ``bench/compare.py`` makes them, under ``~/.cache/tether-bench``), speaking one JSON-lines
probe protocol (``contract_common``). The faults are real, and every verdict is computed here:

- **prefix continuation**: SIGKILL right after each save point of the reference run (and inside
  the tool, before and after its effect), then the framework's own resume: the records stored
  before the kill must stay (unchanged, in order), the run must end as the uninterrupted one did, and no recorded work
  may run again (``redone``: model calls / tool calls whose result was already stored);
- **effect exactly-once**: across those same crashes, the effect log must hold the order once;
- **fork determinism**: fork each checkpoint of the finished run twice (time travel), run both
  forks on: they must end the same (not applicable without a fork API);
- **checkpoint validity**: hand the framework's stored state the values Tether's kit refuses (an
  object, NaN, infinity, bytes, a lone surrogate, a nested object): none may be read back from the
  store (``persisted`` counts those that were);
- **consume-once**: park the run at its interrupt, then ``k`` (8) processes deliver the answer at the
  same instant (a gate file): the effect must fire once;
- **recovery determinism**: crash, copy the crashed store (and the effect log) byte for byte twice,
  resume each copy: the two must end the same.

Options: ``--quick`` (Tether on SQLite only, few cases: a smoke run), ``--columns a,b`` (see
:data:`COLUMNS`), ``--k N``, ``--output PATH`` (default ``bench/results.md``, its
``<!-- bench/resume_contract.py -->`` section), ``--workdir DIR`` (kept for inspection).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS_DIR = HERE / "peers"
SECTION = "bench/resume_contract.py"
PROPERTIES = (
    "prefix continuation",
    "effect exactly-once",
    "fork determinism",
    "checkpoint validity",
    "consume-once",
    "recovery determinism",
)
HOLDS, VIOLATED, NA, FAILED = "holds", "violated", "not applicable", "failed"
TIMEOUT = 180.0


def _load_compare() -> ModuleType:
    """bench/compare.py under a private module name (its env helpers: venvs, pins, child env)."""
    name = "_tether_bench_compare"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _sibling(name: str) -> ModuleType:
    """``bench/<name>.py`` imported by its own name (``bench`` is no package)."""
    sys.path.insert(0, str(HERE))
    try:
        return importlib.import_module(name)
    finally:
        del sys.path[0]


@dataclass(frozen=True)
class Column:
    """One column of the scoreboard: a framework with one store and mode."""

    key: str
    title: str
    peer: str  # tether | langgraph | strands | pydantic-ai | pydantic-ai-temporal | openai-agents
    variant: str  # passed to the peer's child as config["variant"]
    store: str  # sqlite | postgres | files | temporal (one dev server) | temporal-file (a dev server per case, see Places)
    api: str


COLUMNS: tuple[Column, ...] = (
    Column("tether-sqlite", "Tether (SQLite)", "tether", "sqlite", "sqlite", "tether.testing.resume_contract, store='sqlite'"),
    Column("tether-pg", "Tether (PostgreSQL)", "tether", "postgres", "postgres", "tether.testing.resume_contract, a postgresql:// store"),
    Column(
        "tether-serve",
        "Tether served (SQLite)",
        "tether",
        "serve",
        "sqlite",
        "tether.testing.resume_contract, runtime='serve': two `tether serve` processes on a SQLite store",
    ),
    Column(
        "tether-temporal",
        "Tether on Temporal",
        "tether",
        "temporal",
        "temporal",
        "tether.testing.resume_contract, runtime='temporal' on a `temporal server start-dev`",
    ),
    Column(
        "langgraph-sqlite-sync",
        "LangGraph SqliteSaver sync",
        "langgraph",
        "sqlite-sync",
        "sqlite",
        'SqliteSaver, invoke(durability="sync")',
    ),
    Column(
        "langgraph-sqlite-async",
        "LangGraph SqliteSaver async",
        "langgraph",
        "sqlite-async",
        "sqlite",
        'SqliteSaver, invoke(durability="async")',
    ),
    Column(
        "langgraph-pg-sync",
        "LangGraph PostgresSaver sync",
        "langgraph",
        "postgres-sync",
        "postgres",
        'PostgresSaver, invoke(durability="sync")',
    ),
    Column(
        "langgraph-pg-async",
        "LangGraph PostgresSaver async",
        "langgraph",
        "postgres-async",
        "postgres",
        'PostgresSaver, invoke(durability="async")',
    ),
    Column("strands-file", "Strands FileSessionManager", "strands", "file", "files", "FileSessionManager(session_id, storage_dir)"),
    Column(
        "strands-snapshot",
        "Strands SnapshotSessionManager",
        "strands",
        "snapshot",
        "files",
        'SnapshotSessionManager(save_latest_on="message")',
    ),
    Column(
        "pydantic-ai-dbos", "Pydantic AI + DBOS", "pydantic-ai", "dbos", "files", "DBOSAgent(Agent(...)), DBOS system database in SQLite"
    ),
    Column(
        "pydantic-ai-temporal",
        "Pydantic AI + Temporal",
        "pydantic-ai-temporal",
        "temporal",
        "temporal-file",
        "TemporalAgent(Agent(...)) in a workflow answered by signal, worker with AgentPlugin, client with PydanticAIPlugin; "
        "a `temporal server start-dev` per case, its SQLite file in the case's directory",
    ),
    Column(
        "openai-agents",
        "OpenAI Agents SQLiteSession + RunState",
        "openai-agents",
        "sqlite",
        "files",
        "SQLiteSession(session_id, db) + RunState.to_string() at the interruption",
    ),
    Column(
        "strands-tether",
        "Strands + TetherSessionManager",
        "strands",
        "tether",
        "sqlite",
        "tether.strands.TetherSessionManager(session_id, store=path)",
    ),
)


VENV_OF: dict[str, str] = {"pydantic-ai-temporal": "pydantic-ai"}
"""Peers whose probe runs in another peer's environment (``bench/compare.py``'s framework of that name)."""


@dataclass
class Cell:
    verdict: str
    detail: str
    cases: int = 0


@dataclass
class Child:
    returncode: int
    outcome: dict[str, Any]
    stderr: str


@dataclass
class Env:
    """How to start one peer's child processes."""

    python: str
    adapter: Path
    env: dict[str, str]


@dataclass
class Setting:
    columns: tuple[Column, ...]
    k: int
    quick: bool
    workdir: Path
    pg_url: str = ""
    temporal: str = ""  # HOST:PORT of the dev server of the Temporal column
    envs: dict[str, Env] = field(default_factory=dict)
    versions: dict[str, dict[str, str]] = field(default_factory=dict)
    took: dict[str, float] = field(default_factory=dict)


# -- children -----------------------------------------------------------------------------


def spawn(env: Env, config: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [env.python, str(env.adapter), json.dumps(config)],
        cwd=ROOT,
        env=env.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> Child:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return Child(-signal.SIGKILL, {"hung": True}, err + f"\n(killed after {timeout:.0f} s)")
    outcome: dict[str, Any] = {}
    for line in out.splitlines():
        if line.startswith('{"outcome"'):
            outcome = json.loads(line)["outcome"]
    return Child(proc.returncode, outcome, err)


def run(env: Env, config: dict[str, Any]) -> Child:
    proc = spawn(env, config)
    try:
        return finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_ready(proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> bool:
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], timeout)
    return bool(readable) and '"ready"' in proc.stdout.readline()


# -- places: a fresh store per case, and byte-identical copies ------------------------------


class Places:
    """Directories (and, for PostgreSQL columns, databases) of one column's cases.

    A ``temporal-file`` column's store is a Temporal dev server kept in a SQLite file in the case's
    directory: one server runs at a time (a case's, until the next case starts), stopped before its
    file is copied, so a copy is byte-identical and served by a server of its own."""

    def __init__(self, setting: Setting, column: Column, stack: ExitStack) -> None:
        self.root = setting.workdir / column.key
        self.column = column
        self.pg: Any = None
        self.server: Any = None
        if column.store == "postgres":
            from tether.testing.contract_pg import PgCopies

            self.pg = PgCopies(setting.pg_url, os.urandom(3).hex())
            stack.callback(self.pg.drop_all)
        if column.store == "temporal-file":
            stack.callback(self._stop_server)

    def make(self, slug: str) -> tuple[Path, str]:
        directory = self.root / slug
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        return directory, self._spec(directory, slug, fresh=True)

    def _spec(self, directory: Path, slug: str, fresh: bool, source: str = "") -> str:
        if self.pg is not None:
            return self.pg.database(slug) if fresh else self.pg.copy(source, slug)
        if self.column.store == "temporal-file":
            return self._serve(directory / "temporal.db")
        return str(directory / ("sessions" if self.column.store == "files" else "store.db"))

    def _serve(self, db_file: Path) -> str:
        self._stop_server()
        self.server = _sibling("_temporal").dev_server(db_file)
        self.server.start()
        return str(self.server.address)

    def _stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def copy(self, slug: str, new: str) -> tuple[Path, str]:
        """A byte-identical copy of case ``slug`` (its store and its effect log)."""
        source, target = self.root / slug, self.root / new
        self._stop_server()  # a Temporal store is copied at rest
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
        return target, self._spec(target, new, fresh=False, source=slug)


def config(column: Column, directory: Path, spec: str, action: str, **extra: Any) -> dict[str, Any]:
    return {
        "action": action,
        "variant": column.variant,
        "store": spec,
        "thread": "contract",
        "effects": str(directory / "effects.log"),
        "work": str(directory / f"work-{action}.log"),
        **extra,
    }


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


# -- the probes of one peer column ------------------------------------------------------------


class PeerProbe:
    """The six properties of one peer column, every verdict computed from what its children did."""

    def __init__(self, setting: Setting, column: Column, stack: ExitStack) -> None:
        self.setting = setting
        self.column = column
        self.env = setting.envs[column.peer]
        self.places = Places(setting, column, stack)
        self.cells: dict[str, Cell] = {}
        self.reference: dict[str, Any] | None = None
        self.saves = 0

    def child(self, directory: Path, spec: str, action: str, **extra: Any) -> Child:
        done = run(self.env, config(self.column, directory, spec, action, **extra))
        if done.returncode not in (0, -signal.SIGKILL) or done.outcome.get("hung"):
            (directory / f"stderr-{action}.txt").write_text(done.stderr)
        return done

    def dump(self, directory: Path, spec: str) -> dict[str, Any]:
        child = self.child(directory, spec, "dump")
        if child.returncode != 0 or "records" not in child.outcome:
            return {"error": child.outcome.get("error") or child.stderr[-400:], "records": None}
        return child.outcome

    def failed(self, names: Sequence[str], why: str) -> None:
        for name in names:
            self.cells.setdefault(name, Cell(FAILED, why[-500:]))

    def ensure_reference(self) -> bool:
        if self.reference is not None:
            return True
        directory, spec = self.places.make("reference")
        child = self.child(directory, spec, "start", answer=True)
        if child.returncode != 0 or child.outcome.get("status") != "done":
            self.failed(PROPERTIES, f"the reference run did not end (exit {child.returncode}): {child.outcome} {child.stderr[-300:]}")
            return False
        self.saves = int(child.outcome["saves"])
        self.reference = self.dump(directory, spec)
        if self.reference["records"] is None:
            self.failed(PROPERTIES, f"the reference run cannot be read back: {self.reference['error']}")
            return False
        return True

    def crash_points(self) -> list[dict[str, Any]]:
        points: list[dict[str, Any]] = [{"kill_at": n} for n in range(1, self.saves + 1)]
        points += [{"kill_in_tool": "before"}, {"kill_in_tool": "after"}]
        if self.setting.quick:
            points = points[:: max(1, len(points) // 4)][:4]
        return points

    @staticmethod
    def label(point: dict[str, Any]) -> str:
        return f"after save {point['kill_at']}" if "kill_at" in point else f"in the tool, {point['kill_in_tool']} its effect"

    # prefix continuation + effect exactly-once
    def crashes(self) -> None:
        names = ("prefix continuation", "effect exactly-once")
        if not self.ensure_reference():
            return
        assert self.reference is not None
        ref = self.reference["records"]
        cases = prefix_bad = effect_bad = redone = 0
        first_prefix = first_effect = ""
        fired_total = Counter[int]()
        for point in self.crash_points():
            slug = "crash-" + "-".join(str(v) for v in point.values())
            directory, spec = self.places.make(slug)
            killed = self.child(directory, spec, "start", answer=True, **point)
            if killed.returncode != -signal.SIGKILL:
                continue  # the run ended before this point
            resumed = self.child(directory, spec, "resume", answer=True)
            stored, final = (resumed.outcome.get(k) or {"records": None, "error": resumed.stderr[-300:]} for k in ("before", "after"))
            cases += 1
            fired = lines(directory / "effects.log").count("A1")
            fired_total[fired] += 1
            if fired != 1:
                effect_bad += 1
                first_effect = first_effect or f"{self.label(point)}: the effect fired {fired} times"
            problem = ""
            if resumed.returncode != 0 or resumed.outcome.get("status") != "done":
                problem = f"the resume failed (exit {resumed.returncode}): {resumed.outcome.get('error') or resumed.stderr[-300:]}"
            elif stored["records"] is None or final["records"] is None:
                problem = f"the store cannot be read: {stored.get('error') or final.get('error')}"
            else:
                before, after = stored["records"], final["records"]
                again = set(lines(directory / "work-resume.log")) & {r["unit"] for r in before if r["unit"]}
                redone += len(again)
                if not _kept(before, after):
                    problem = "records stored before the kill were changed or lost"
                elif _strip(after) != _strip(ref):
                    problem = f"the run ended with {len(after)} records, the uninterrupted one with {len(ref)}: {_first_diff(after, ref)}"
                elif again:
                    problem = f"recorded work ran again: {', '.join(sorted(again))}"
            if problem:
                prefix_bad += 1
                first_prefix = first_prefix or f"{self.label(point)}: {problem}"
        if cases == 0:
            self.failed(names, "no crash point killed the run")
            return
        self.cells["prefix continuation"] = (
            Cell(VIOLATED, f"{prefix_bad} of {cases} crashes; records redone: {redone}; first: {first_prefix}", cases)
            if prefix_bad
            else Cell(HOLDS, f"{cases} crashes, each resumed to the uninterrupted run, nothing recorded redone", cases)
        )
        spread_ = ", ".join(f"{n}x in {c}" for n, c in sorted(fired_total.items()))
        self.cells["effect exactly-once"] = (
            Cell(VIOLATED, f"{effect_bad} of {cases} crashes; effect fired {spread_}; first: {first_effect}", cases)
            if effect_bad
            else Cell(HOLDS, f"{cases} crashes, the effect fired once in each", cases)
        )

    def recoveries(self) -> None:
        name = "recovery determinism"
        if not self.ensure_reference():
            return
        chosen = self.crash_points()
        chosen = chosen[:: max(1, len(chosen) // 3)][:3] if not self.setting.quick else chosen[:1]
        done, bad, first = 0, 0, ""
        for point in chosen:
            slug = "recover-" + "-".join(str(v) for v in point.values())
            directory, spec = self.places.make(slug)
            killed = self.child(directory, spec, "start", answer=True, **point)
            if killed.returncode != -signal.SIGKILL:
                continue
            ends = []
            for copy in ("a", "b"):
                target, copy_spec = self.places.copy(slug, f"{slug}-{copy}")
                resumed = self.child(target, copy_spec, "resume", answer=True)
                dumped = resumed.outcome.get("after") or {"records": None}
                ends.append(
                    (resumed.returncode, resumed.outcome.get("status"), _strip(dumped["records"] or []), lines(target / "effects.log"))
                )
            done += 1
            if ends[0] != ends[1]:
                bad += 1
                (ca, sa, ra, ea), (cb, sb, rb, eb) = ends
                first = (
                    first
                    or f"{self.label(point)}: copy a ended {ca, sa}, {len(ra)} records, effects {ea}; copy b {cb, sb}, {len(rb)}, {eb}"
                )
        if done == 0:
            self.failed([name], "no crash point killed the run")
        elif bad:
            self.cells[name] = Cell(VIOLATED, f"{bad} of {done} crashed stores recovered two ways; first: {first}", done * 2)
        else:
            self.cells[name] = Cell(HOLDS, f"{done} crashed stores, two byte-identical copies of each recovered to the same run", done * 2)

    def _probe_finished(self, name: str, place: str, action: str) -> tuple[Path, Any, Child] | None:
        """Run the agent to its end in a new place, then ``action`` on it: the place and the
        probe's child; None when the cell is settled already (failed, or not applicable)."""
        directory, spec = self.places.make(place)
        child = self.child(directory, spec, "start", answer=True)
        if child.outcome.get("status") != "done":
            self.failed([name], f"the run did not end: {child.outcome} {child.stderr[-300:]}")
            return None
        probe = self.child(directory, spec, action)
        if "not_applicable" in probe.outcome:
            self.cells[name] = Cell(NA, probe.outcome["not_applicable"])
            return None
        return directory, spec, probe

    def forks(self) -> None:
        name = "fork determinism"
        found = self._probe_finished(name, "fork", "fork_points")
        if found is None:
            return
        directory, spec, points = found
        if points.returncode != 0:
            self.failed([name], f"fork_points failed: {points.outcome} {points.stderr[-300:]}")
            return
        ids = points.outcome["points"]
        if self.setting.quick:
            ids = ids[:2]
        bad, first = 0, ""
        for i, at in enumerate(ids):
            ends = []
            for copy in ("a", "b"):
                forked = self.child(directory, spec, "fork", at=at, fork=copy, effects=str(directory / f"effects-{i}-{copy}.log"))
                ends.append((forked.returncode, _strip(forked.outcome.get("records") or []), forked.outcome.get("error")))
            if ends[0] != ends[1] or ends[0][0] != 0:
                bad += 1
                first = first or f"checkpoint {i + 1}: fork a {ends[0]!s:.200}, fork b {ends[1]!s:.200}"
        self.cells[name] = (
            Cell(VIOLATED, f"{bad} of {len(ids)} checkpoints forked two ways; first: {first}", len(ids) * 2)
            if bad
            else Cell(HOLDS, f"{len(ids)} checkpoints forked twice, every pair ended the same", len(ids) * 2)
        )

    def validity(self) -> None:
        name = "checkpoint validity"
        found = self._probe_finished(name, "validity", "validity")
        if found is None:
            return
        directory, spec, probe = found
        if probe.returncode != 0 or "trials" not in probe.outcome:
            self.failed([name], f"the probe failed (exit {probe.returncode}): {probe.outcome} {probe.stderr[-300:]}")
            return
        after = self.dump(directory, spec)
        trials = probe.outcome["trials"]
        persisted = probe.outcome["persisted"]
        if after["records"] is None:
            self.cells[name] = Cell(VIOLATED, f"after the probe the run cannot be read: {after['error']}", len(trials))
        elif persisted:
            how = "; ".join(f"{t['value']}: {t['detail']}" for t in trials if t["fate"] == "persisted")
            self.cells[name] = Cell(VIOLATED, f"{len(persisted)} of {len(trials)} refused values persisted ({how})", len(trials))
        else:
            fates = Counter(t["fate"] for t in trials)
            self.cells[name] = Cell(HOLDS, f"{len(trials)} values: {dict(fates)}; none read back from the store", len(trials))

    def consume_once(self) -> None:
        name = "consume-once"
        k = self.setting.k
        directory, spec = self.places.make("consume")
        first = self.child(directory, spec, "start", answer=False)
        if first.outcome.get("status") != "interrupted":
            self.failed([name], f"the run did not stop at its interrupt: {first.outcome} {first.stderr[-300:]}")
            return
        gate = directory / "gate"
        procs = [
            spawn(self.env, config(self.column, directory, spec, "answer", gate=str(gate), work=str(directory / f"work-{i}.log")))
            for i in range(k)
        ]
        try:
            ready = sum(wait_ready(p) for p in procs)
            gate.touch()
            racers = [finish(p) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        fired = lines(directory / "effects.log").count("A1")
        statuses = Counter(r.outcome.get("status") or ("error" if r.returncode else "?") for r in racers)
        summary = f"{k} processes answered at once ({ready} ready at the gate): effect fired {fired}x; outcomes {dict(statuses)}"
        self.cells[name] = Cell(HOLDS if fired == 1 else VIOLATED, summary, k)


def _kept(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> bool:
    """Whether every record stored before a crash is still there, unchanged and in order, after the resume
    (a store that records model calls but not tool results, like DBOS's steps, gains the results in between)."""
    rest = iter(after)
    return all(any(record == later for later in rest) for record in before)


def _strip(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "unit"} for r in records]


def _first_diff(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> str:
    for i, (x, y) in enumerate(zip(_strip(a), _strip(b), strict=False)):
        if x != y:
            return f"record {i + 1}: {json.dumps(x)[:160]} vs {json.dumps(y)[:160]}"
    return f"record {min(len(a), len(b)) + 1}: one run has it, the other not"


# -- Tether: the kit -----------------------------------------------------------------------------


class TetherProbe:
    """Tether's column: the kit's own checks, one property group per phase (so phases interleave).

    Served and on Temporal, the kit checks recovery determinism on the crashes of prefix continuation
    (store copies taken at those kills; each killed history replayed), so there the crash phase checks
    the three together and the recovery phase has nothing left to do."""

    def __init__(self, setting: Setting, column: Column, stack: ExitStack) -> None:
        self.setting = setting
        self.column = column
        self.cells: dict[str, Cell] = {}
        self.runtime = column.variant if column.variant in ("serve", "temporal") else "local"

    def _check(self, names: Sequence[str], **options: Any) -> None:
        from tether.testing import resume_contract

        if str(PEERS_DIR) not in sys.path:
            sys.path.insert(0, str(PEERS_DIR))  # the kit's children import the factory from the parent's path
        paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if str(PEERS_DIR) not in paths:  # and its `tether serve` processes from $PYTHONPATH (and the cwd) only
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [*paths, str(PEERS_DIR)]))
        store = self.setting.pg_url if self.column.store == "postgres" else "sqlite"
        quick = {"points": 4, "forks": 2, "recoveries": 1} if self.setting.quick else {"recoveries": 3}
        where: dict[str, Any] = {"runtime": self.runtime}
        if self.runtime == "temporal":
            where["temporal"] = self.setting.temporal
        try:
            report = resume_contract(
                "contract_tether:agent",
                "Charge order A1.",
                store=store,
                answers={"approve": "yes"},
                k=self.setting.k,
                properties=names,
                workdir=self.setting.workdir / self.column.key / names[0].replace(" ", "-"),
                **{**quick, **where, **options},
            )
        except Exception as exc:
            for name in names:
                self.cells[name] = Cell(FAILED, f"{type(exc).__name__}: {exc}"[:500])
            return
        for result in report.results:
            self.cells[result.name] = Cell(result.verdict, result.detail, result.cases)

    def crashes(self) -> None:
        together = [] if self.runtime == "local" else ["recovery determinism"]
        self._check(["prefix continuation", "effect exactly-once", *together])

    def recoveries(self) -> None:
        if "recovery determinism" not in self.cells:
            self._check(["recovery determinism"])

    def forks(self) -> None:
        self._check(["fork determinism"])

    def validity(self) -> None:
        self._check(["checkpoint validity"])

    def consume_once(self) -> None:
        self._check(["consume-once"])


# -- the run ------------------------------------------------------------------------------------


PHASES: tuple[str, ...] = ("crashes", "recoveries", "forks", "validity", "consume_once")


def prepare(setting: Setting, log: Callable[[str], None]) -> None:
    """Each peer's interpreter (its venv made/installed like compare.py does) and versions."""
    compare = _load_compare()
    base_env = compare.child_env()
    src_env = {**base_env, "PYTHONPATH": str(ROOT / "src")}
    peers = dict.fromkeys(c.peer for c in setting.columns)
    for peer in peers:
        if peer == "tether":
            import tether

            setting.versions["tether"] = {"tether": getattr(tether, "__version__", "?"), "revision": compare._git_revision()}
            continue
        if peer == "strands":
            python = compare.tether_python()  # strands-agents and Tether's own session manager, one interpreter
        else:
            framework = next(f for f in compare.FRAMEWORKS if f.name == VENV_OF.get(peer, peer))
            python = compare.ensure_env(framework, compare.cache_dir(), log)
        env = Env(python, PEERS_DIR / f"contract_{peer.replace('-', '_')}.py", src_env if peer == "strands" else base_env)
        setting.envs[peer] = env
        described = run(env, {"action": "versions"})
        if "versions" not in described.outcome:
            raise SystemExit(f"{peer}: its contract adapter does not start: {described.stderr[-1500:]}")
        setting.versions[peer] = {**described.outcome["versions"], "python": described.outcome["python"]}


def measure(setting: Setting, log: Callable[[str], None]) -> dict[str, dict[str, Cell]]:
    """Every phase, for every column in a rotated order: one interleaved run."""
    with ExitStack() as stack:
        if any(c.store == "postgres" for c in setting.columns):
            server = _sibling("_pg").throwaway_server(stack, durable=True)
            setting.pg_url = f"postgresql://postgres@/postgres?host={server.root}&port={server.port}"
        if any(c.store == "temporal" for c in setting.columns):
            setting.temporal = _sibling("_temporal").throwaway_server(stack).address
        probes: list[Any] = [(TetherProbe if c.peer == "tether" else PeerProbe)(setting, c, stack) for c in setting.columns]
        for i, phase in enumerate(PHASES):
            shift = i % len(probes)
            for probe in probes[shift:] + probes[:shift]:
                mark = time.perf_counter()
                getattr(probe, phase)()
                took = time.perf_counter() - mark
                setting.took[probe.column.key] = setting.took.get(probe.column.key, 0.0) + took
                log(f"{phase:<12} {probe.column.key:<24} {took:6.1f} s")
        return {p.column.key: p.cells for p in probes}


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    text = cell.detail.replace("|", "\\|").replace("\n", " ")
    return f"**{cell.verdict}**: {text}"


def render(setting: Setting, cells: dict[str, dict[str, Cell]], meta: dict[str, str]) -> str:
    out = [f"<!-- {SECTION} -->", "## Resume contract scoreboard (`bench/resume_contract.py`)", ""]
    if setting.quick:
        out += ["**Smoke run (`--quick`): few cases, not a result to quote.**", ""]
    out += [
        f"One interleaved run, {meta['started']} -> {meta['finished']} ({meta['seconds']} s). Machine: {meta['machine']}; "
        f"load average at start {meta['load_start']}, at end {meta['load_end']}. Every cell computed by the probe from "
        f"what the framework's child processes did (SIGKILL at every save point and inside the tool, {setting.k} "
        "racing answerers, two byte-identical store copies, forks twice per checkpoint, refused state values); "
        "the same scripted agent everywhere (one interrupt, one effect-bearing tool).",
        "",
    ]
    verdicts = {c.key: [cells.get(c.key, {}).get(p) for p in PROPERTIES] for c in setting.columns}
    out += ["| column | " + " | ".join(PROPERTIES) + " |", "|---|" + "---|" * len(PROPERTIES)]
    for column in setting.columns:
        out.append(f"| {column.title} | " + " | ".join(v.verdict if v else "-" for v in verdicts[column.key]) + " |")
    out += ["", "Counts and counterexamples, by column (seconds each column took):", ""]
    for column in setting.columns:
        out.append(f"- **{column.title}** ({column.api}; {meta.get('took:' + column.key, '?')} s):")
        for prop, cell in zip(PROPERTIES, verdicts[column.key], strict=True):
            out.append(f"  - {prop}: {_cell_text(cell)}")
    out += ["", "Versions:", ""]
    for peer, versions in setting.versions.items():
        out.append(f"- {peer}: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    out += [f"<!-- /{SECTION} -->", ""]
    return "\n".join(out)


def write_section(path: Path, section: str) -> None:
    """Put ``section`` in place of the file's previous one of this script (or at the end)."""
    _sibling("_sections").write_section(path, SECTION, section)


def machine() -> str:
    model = "?"
    try:
        model = next(
            line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return f"{platform.platform()}, nproc {os.cpu_count()}, {model}"


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv: Sequence[str] | None = None) -> tuple[str, dict[str, dict[str, Cell]]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="Tether on SQLite only, few cases (a smoke run)")
    parser.add_argument("--columns", default="", help="comma-separated column keys: " + ", ".join(c.key for c in COLUMNS))
    parser.add_argument("--k", type=int, default=8, help="processes answering one interrupt at once")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument("--no-write", action="store_true", help="print the section, do not write it")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    wanted = [c.strip() for c in args.columns.split(",") if c.strip()] or (["tether-sqlite"] if args.quick else [c.key for c in COLUMNS])
    unknown = [w for w in wanted if w not in {c.key for c in COLUMNS}]
    if unknown:
        parser.error(f"unknown columns {unknown}")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tether-scoreboard-"))
    setting = Setting(tuple(c for c in COLUMNS if c.key in wanted), args.k, args.quick, workdir.resolve())

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    started, load_start, t0 = datetime.datetime.now(datetime.UTC), _load(), time.perf_counter()
    prepare(setting, log)
    cells = measure(setting, log)
    meta = {
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "finished": datetime.datetime.now(datetime.UTC).strftime("%H:%M UTC"),
        "seconds": f"{time.perf_counter() - t0:.0f}",
        "machine": machine(),
        "load_start": load_start,
        "load_end": _load(),
        **{f"took:{key}": f"{seconds:.0f}" for key, seconds in setting.took.items()},
    }
    section = render(setting, cells, meta)
    print(section)
    if not args.no_write:
        write_section(args.output, section)
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return section, cells


if __name__ == "__main__":
    main()
