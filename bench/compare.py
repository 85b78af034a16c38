"""Tether against peer agent SDKs, side by side in one run: ``python bench/compare.py``.

Installs each peer (pinned below) into its own virtual environment under
``$TETHER_BENCH_CACHE`` (default ``~/.cache/tether-bench/<peer>``), then runs every scenario in
fresh processes: one subprocess per framework per scenario per round, each printing JSON on
stdout. Rounds interleave the frameworks (in a rotating order), so a burst of load on the
machine hits all of them alike. Every framework drives its own fake model with no latency
(``bench/peers/<framework>_adapter.py``), so only framework cost is measured.

Scenarios (see bench/README.md): ``loop`` (N tool cycles in one call), ``snapshot`` (serialize +
restore a conversation), ``durable`` (store overhead per cycle, bytes per message),
``concurrent`` (100 / 1,000 agents x 5 cycles), ``import`` (cold imports in fresh processes).

Writes a markdown report (medians, min-max over rounds, every framework's ratio to Tether) into
``bench/results.md`` (``--output PATH``) and prints it. Options: ``--quick`` (one round, few repeats: a
smoke run), ``--rounds N``, ``--scenarios loop,snapshot``, ``--frameworks tether,strands``.

A run splices its report into the output file rather than overwriting it (:func:`splice`), so a run of
a few scenarios leaves the others' figures alone:

- each ``## `` section the run produced replaces the file's section of the same heading, in place; a
  heading the file lacks goes after the sections that precede it in a full report (``durable-pg``
  after ``durable``, Versions and setup after the scenarios), or at the end if there are none;
- every other section, and blocks other scripts own (``<!-- bench/serve.py -->`` ... its closing
  comment), stay byte for byte;
- the preamble above the first ``## `` heading is this run's, and it states no date, machine or
  revision: each scenario section names its run (``Run <start time, UTC>: N round(s), Tether revision
  R``), and Versions and setup holds one ``### Run <start time>`` block per run that some section
  still names (date, rounds, machine, load, revision, the frameworks' versions), so a kept section
  keeps its own stated setup; a block no section names any more is dropped;
- Targets keeps the target lines (each names its scenario: ``- `loop`: ...``) of the scenarios this
  run did not measure and takes this run's for the others.

A file that does not exist yet is just written with this run's report.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for this import only: a test importing
from _pg import throwaway_server  # this script must not find bench/durable.py as `durable`

del sys.path[0]

ROOT = Path(__file__).resolve().parents[1]
PEERS_DIR = Path(__file__).resolve().parent / "peers"


@dataclass(frozen=True)
class Framework:
    """One framework under test: how to install it, run its adapter and import it."""

    name: str
    adapter: str
    import_statement: str
    pins: tuple[str, ...] = ()
    """Pinned requirements; empty for Tether, which runs from this repository."""
    only: tuple[str, ...] = ()
    """The scenarios this framework takes part in (empty: all of them)."""
    source: str = ""
    """A git revision of this repository whose ``src/`` Tether runs from (``--baseline``), so one
    interleaved run measures Tether before and after a change; empty for everything else."""

    def runs(self, scenario: str) -> bool:
        """Whether ``scenario`` measures this framework."""
        return not self.only or scenario in self.only


FRAMEWORKS: tuple[Framework, ...] = (
    Framework("tether", "tether_adapter.py", "from tether import Agent, tool"),
    Framework("strands", "strands_adapter.py", "from strands import Agent, tool", ("strands-agents==1.62.0",)),
    Framework(
        "langgraph",
        "langgraph_adapter.py",
        "from langgraph.prebuilt import create_react_agent",
        ("langgraph==1.2.22", "langgraph-checkpoint-sqlite==3.1.2", "langgraph-checkpoint-postgres==3.2.0"),
    ),
    Framework(
        "pydantic-ai",
        "pydantic_ai_adapter.py",
        "from pydantic_ai import Agent",
        ("pydantic-ai-slim[dbos,temporal]==2.68.0", "dbos==3.4.0", "temporalio==1.35.0"),  # temporal: resume_contract.py
    ),
    Framework("openai-agents", "openai_agents_adapter.py", "from agents import Agent, Runner, function_tool", ("openai-agents==0.24.0",)),
    # A durable-execution library, not an agent SDK: measured where durable execution is.
    Framework("dbos", "dbos_adapter.py", "from dbos import DBOS", ("dbos==3.4.0",), only=("durable-pg",)),
)
SCENARIOS: tuple[str, ...] = ("loop", "snapshot", "durable", "durable-pg", "concurrent", "import")
SIZES: dict[str, tuple[int, ...]] = {
    "loop": (20, 200, 2000),
    "snapshot": (10, 100, 1_000, 10_000),
    "durable": (10, 100, 1_000),
    "durable-pg": (200,),
    "concurrent": (100, 1_000),
}
SUBPROCESS_TIMEOUT_S = 1800.0


@dataclass
class Settings:
    """What one run measures and how often."""

    scenarios: tuple[str, ...]
    frameworks: tuple[Framework, ...]
    rounds: int
    repeats: int
    import_repeats: int
    cache: Path
    output: Path
    quick: bool
    sizes: dict[str, tuple[int, ...]] = field(default_factory=lambda: dict(SIZES))


# -- environments ---------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where peer environments live: ``$TETHER_BENCH_CACHE`` or ``~/.cache/tether-bench``."""
    return Path(os.environ.get("TETHER_BENCH_CACHE") or Path.home() / ".cache" / "tether-bench")


def tether_python() -> str:
    """The interpreter that runs Tether: this repository's ``.venv`` if present, else this one."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _base_python() -> str:
    return getattr(sys, "_base_executable", None) or sys.executable


def ensure_env(framework: Framework, cache: Path, log: Callable[[str], None]) -> str:
    """The interpreter of ``framework``'s environment, created and pip-installed if needed.

    A marker file records the pins installed; a changed pin re-runs ``pip install``.
    """
    if framework.source:
        _export_source(framework.source, cache, log)
    if not framework.pins:
        python = tether_python()
        check = subprocess.run([python, "-c", "import tether"], capture_output=True, text=True, check=False)
        if check.returncode != 0:
            raise SystemExit(f"{python} cannot import tether (pip install -e . first):\n{check.stderr[-2000:]}")
        return python
    env = cache / framework.name.replace("-", "_")
    python = env / "bin" / "python"
    marker = env / ".tether-bench-pins"
    wanted = "\n".join(framework.pins) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    if not python.exists():
        log(f"creating {env}")
        shutil.rmtree(env, ignore_errors=True)
        subprocess.run([_base_python(), "-m", "venv", str(env)], check=True)
    log(f"installing {' '.join(framework.pins)} into {env}")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *framework.pins], check=True)
    marker.write_text(wanted)
    return str(python)


def _source_dir(revision: str, cache: Path) -> Path:
    return cache / f"tether-src-{revision}"


def _export_source(revision: str, cache: Path, log: Callable[[str], None]) -> None:
    """``git archive`` of ``revision``'s ``src/`` into the cache (once per revision)."""
    target = _source_dir(revision, cache)
    if (target / "src" / "tether" / "__init__.py").exists():
        return
    log(f"exporting src/ of {revision} into {target}")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {revision}: git archive failed: {archive.stderr.decode(errors='replace')[-400:]}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)


def framework_env(framework: Framework, cache: Path) -> dict[str, str]:
    """What a framework's processes add to :func:`child_env`: a baseline's ``PYTHONPATH``."""
    return {"PYTHONPATH": str(_source_dir(framework.source, cache) / "src")} if framework.source else {}


def child_env() -> dict[str, str]:
    """The environment of every measured process: no tracing exporters, no stray paths."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONSTARTUP")}
    env.update(
        {
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
            "OTEL_SDK_DISABLED": "true",
            "LANGCHAIN_TRACING_V2": "false",
            "PYTHONWARNINGS": "ignore",
        }
    )
    return env


# -- running --------------------------------------------------------------------------------


def start_postgres(stack: ExitStack) -> dict[str, str]:
    """A throwaway PostgreSQL server with PostgreSQL's default durability (fsync and
    synchronous_commit on), stopped by ``stack``; the environment that points adapters at it."""
    server = throwaway_server(stack, durable=True)
    return {"TETHER_BENCH_PG_HOST": str(server.root), "TETHER_BENCH_PG_PORT": str(server.port), "TETHER_BENCH_PG_USER": "postgres"}


def run_adapter(
    python: str, framework: Framework, scenario: str, sizes: Sequence[int], repeats: int, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    """One fresh process running one scenario of one framework; its JSON, or an error entry."""
    command = [python, str(PEERS_DIR / framework.adapter), scenario, "--sizes", ",".join(map(str, sizes)), "--repeats", str(repeats)]
    env = {**child_env(), **(extra_env or {})}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S, env=env, cwd=ROOT, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {SUBPROCESS_TIMEOUT_S:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {done.returncode}: " + " | ".join(tail)[-600:]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def time_import(python: str, statement: str, extra_env: dict[str, str] | None = None) -> tuple[float, float]:
    """(import ms measured inside a fresh process, that process's whole wall ms)."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    started = time.perf_counter()
    env = {**child_env(), **(extra_env or {})}
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    wall = time.perf_counter() - started
    return float(done.stdout.strip().splitlines()[-1]) * 1000.0, wall * 1000.0


Samples = dict[str, dict[str, dict[str, Any]]]
"""scenario -> framework -> size -> metric -> list of per-round values (or "error" -> message)."""


def _record(samples: Samples, scenario: str, framework: str, result: dict[str, Any]) -> None:
    slot = samples.setdefault(scenario, {}).setdefault(framework, {})
    if "error" in result:
        slot.setdefault("*", {})["error"] = result["error"]
        return
    if "unsupported" in result:
        slot.setdefault("*", {})["unsupported"] = result["unsupported"]
        return
    for size, metrics in result.get("sizes", {}).items():
        entry = slot.setdefault(size, {})
        for key, value in metrics.items():
            if key == "error":
                entry["error"] = value
            elif isinstance(value, (int, float)):
                entry.setdefault(key, []).append(float(value))
            else:
                entry[key] = value


def measure(settings: Settings, log: Callable[[str], None]) -> tuple[Samples, dict[str, dict[str, Any]]]:
    """Install, then run every round; returns the samples and each framework's versions/notes."""
    pythons = {fw.name: ensure_env(fw, settings.cache, log) for fw in settings.frameworks}
    info: dict[str, dict[str, Any]] = {}
    for fw in settings.frameworks:
        described = run_adapter(pythons[fw.name], fw, "versions", [], 1, framework_env(fw, settings.cache))
        if "error" in described:
            raise SystemExit(f"{fw.name}: its adapter does not start: {described['error']}")
        info[fw.name] = {"versions": described["versions"], "notes": described["notes"], "python": described["python"]}
        if "import" in settings.scenarios and fw.runs("import"):
            time_import(pythons[fw.name], fw.import_statement, framework_env(fw, settings.cache))  # compile .pyc once, untimed
    samples: Samples = {}
    frameworks = list(settings.frameworks)
    with ExitStack() as stack:
        extra_env: dict[str, str] = {}
        if "durable-pg" in settings.scenarios:
            try:
                extra_env = start_postgres(stack)
            except Exception as exc:  # PgUnavailable, ImportError: reported in the table, the rest still runs
                for fw in frameworks:
                    samples.setdefault("durable-pg", {}).setdefault(fw.name, {}).setdefault("*", {})["error"] = (
                        f"no PostgreSQL server: {exc}"
                    )
        for round_ in range(settings.rounds):
            _round(settings, frameworks, round_, pythons, samples, extra_env, log)
    return samples, info


def _round(
    settings: Settings,
    frameworks: list[Framework],
    round_: int,
    pythons: dict[str, str],
    samples: Samples,
    extra_env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """One round: every scenario, every framework, in a rotated order."""
    shift = round_ % len(frameworks)
    order = frameworks[shift:] + frameworks[:shift]
    for scenario in settings.scenarios:
        for fw in order:
            if not fw.runs(scenario):
                continue
            if scenario == "durable-pg" and not extra_env:
                continue  # the server did not start: recorded once above
            log(f"round {round_ + 1}/{settings.rounds}: {scenario} / {fw.name}")
            if scenario == "import":
                own = framework_env(fw, settings.cache)
                pairs = [time_import(pythons[fw.name], fw.import_statement, own) for _ in range(settings.import_repeats)]
                slot = samples.setdefault("import", {}).setdefault(fw.name, {}).setdefault("-", {})
                slot.setdefault("import_ms", []).extend(p[0] for p in pairs)
                slot.setdefault("process_ms", []).extend(p[1] for p in pairs)
                continue
            env = {**framework_env(fw, settings.cache), **(extra_env if scenario == "durable-pg" else {})}
            result = run_adapter(pythons[fw.name], fw, scenario, settings.sizes[scenario], settings.repeats, env)
            _record(samples, scenario, fw.name, result)


# -- reporting ------------------------------------------------------------------------------


def med(values: Sequence[float] | None) -> float | None:
    """Median of a list of samples (None when there are none)."""
    return statistics.median(values) if values else None


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table cell: 3 significant-ish digits, '-' for missing."""
    if value is None or value != value:  # None or NaN
        return "-"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.{digits}f}"


def spread(values: Sequence[float] | None) -> str:
    """``median (min-max)`` of a metric's samples."""
    if not values:
        return "-"
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def ratio(value: float | None, base: float | None) -> str:
    """``value / base`` as ``12.3x`` ('-' when either is missing)."""
    if value is None or base is None or base == 0 or value != value or base != base:
        return "-"
    return f"{value / base:.2f}x"


def _metric(samples: Samples, scenario: str, framework: str, size: str, key: str) -> list[float] | None:
    entry = samples.get(scenario, {}).get(framework, {}).get(size, {})
    values = entry.get(key)
    return values if isinstance(values, list) else None


def _failure(samples: Samples, scenario: str, framework: str, size: str) -> str | None:
    per_fw = samples.get(scenario, {}).get(framework, {})
    whole = per_fw.get("*", {})
    if "unsupported" in whole:
        return f"n/a: {whole['unsupported']}"
    if "error" in whole:
        return f"failed: {whole['error']}"
    if "error" in per_fw.get(size, {}):
        return f"cannot: {per_fw[size]['error']}"
    return None


@dataclass(frozen=True)
class Column:
    """One metric column of a scenario table (with an optional ratio-to-Tether column)."""

    title: str
    key: str
    with_ratio: bool = False
    show_spread: bool = False


TABLES: dict[str, tuple[str, str, tuple[Column, ...]]] = {
    "loop": (
        "N",
        "Per-cycle cost of N tool cycles + a final answer in one call (ms; lower is better). "
        "`ms/cycle` = whole call / N; `cycle` = the median gap between consecutive tool calls; "
        "first/last 20 = mean gap over the first and last 20 cycles (flat cost: last ~ first).",
        (
            Column("ms/cycle", "per_cycle_ms", with_ratio=True, show_spread=True),
            Column("cycle median", "cycle_median_ms", with_ratio=True),
            Column("cycle min", "cycle_min_ms"),
            Column("cycle max", "cycle_max_ms"),
            Column("first 20", "first20_ms"),
            Column("last 20", "last20_ms"),
        ),
    ),
    "snapshot": (
        "messages",
        "Serialize + restore a conversation through each framework's own API (ms; lower is better).",
        (
            Column("round trip", "roundtrip_ms", with_ratio=True, show_spread=True),
            Column("save", "save_ms", with_ratio=True),
            Column("load", "load_ms", with_ratio=True),
            Column("bytes", "bytes"),
        ),
    ),
    "durable": (
        "messages",
        "Durable store: extra ms per cycle with the store vs the same conversation without it, over "
        "the whole conversation and over its last 10 cycles (a cost growing with history shows there); "
        "bytes passed to write() per message (every rewrite counts) and bytes on disk per message.",
        (
            Column("overhead ms/cycle", "overhead_ms_per_cycle", with_ratio=True, show_spread=True),
            Column("last-10 overhead", "tail_overhead_ms_per_cycle", with_ratio=True),
            Column("written B/msg", "written_bytes_per_message", with_ratio=True),
            Column("disk B/msg", "disk_bytes_per_message", with_ratio=True),
            Column("store ms/cycle", "store_ms_per_cycle"),
            Column("plain ms/cycle", "plain_ms_per_cycle"),
        ),
    ),
    "durable-pg": (
        "cycles",
        "Durable runs on one throwaway PostgreSQL server with its default durability (fsync, "
        "synchronous_commit on): extra ms per cycle with durability vs the same conversation without "
        "it; the server's WAL bytes, write commits (transaction ids taken) and table growth per cycle; "
        "the physical floor (one INSERT + UPDATE transaction through psycopg, measured in the same "
        "process); conversations/s with 50 conversations x 5 cycles at once on one store/connection setup.",
        (
            Column("overhead ms/cycle", "overhead_ms_per_cycle", with_ratio=True, show_spread=True),
            Column("WAL B/cycle", "wal_bytes_per_cycle", with_ratio=True),
            Column("commits/cycle", "write_commits_per_cycle"),
            Column("growth B/cycle", "table_growth_bytes_per_cycle", with_ratio=True),
            Column("floor ms/commit", "floor_ms_per_commit"),
            Column("50-at-once conv/s", "conversations_per_s", with_ratio=True),
        ),
    ),
    "concurrent": (
        "agents",
        "N concurrent conversations x 5 tool cycles in one process (asyncio.gather); building the "
        "per-conversation objects is included. agents/s: higher is better; ratio = framework ÷ Tether.",
        (
            Column("wall ms", "wall_ms", with_ratio=True, show_spread=True),
            Column("agents/s", "agents_per_s", with_ratio=True),
            Column("peak RSS MiB", "peak_rss_mib", with_ratio=True),
            Column("RSS before MiB", "baseline_rss_mib"),
        ),
    ),
    "import": (
        "",
        "Import time in a fresh interpreter (ms, measured inside the process; lower is better) and the "
        "whole process's wall time (interpreter start + import + exit).",
        (
            Column("import ms", "import_ms", with_ratio=True, show_spread=True),
            Column("process ms", "process_ms", with_ratio=True),
        ),
    ),
}


def render_table(samples: Samples, scenario: str, frameworks: Sequence[str], sizes: Sequence[str]) -> list[str]:
    """One scenario's markdown table: a row per (size, framework), ratios to Tether's medians."""
    size_title, _, columns = TABLES[scenario]
    header = ([size_title] if size_title else []) + ["framework"]
    for column in columns:
        header.append(column.title + (" median (min-max)" if column.show_spread else ""))
        if column.with_ratio:
            header.append("÷ Tether")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for size in sizes:
        for framework in frameworks:
            cells = ([f"{int(size):,}"] if size_title else []) + [framework]
            failure = _failure(samples, scenario, framework, size)
            if failure is not None:
                cells.append(failure.replace("|", "/")[:300])
                cells.extend([""] * (len(header) - len(cells)))
                lines.append("| " + " | ".join(cells) + " |")
                continue
            for column in columns:
                values = _metric(samples, scenario, framework, size, column.key)
                cells.append(spread(values) if column.show_spread else fmt(med(values)))
                if column.with_ratio:
                    cells.append(ratio(med(values), med(_metric(samples, scenario, "tether", size, column.key))))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _peer_best(samples: Samples, scenario: str, size: str, key: str, frameworks: Sequence[str], highest: bool) -> tuple[str, float] | None:
    found = [(fw, med(_metric(samples, scenario, fw, size, key))) for fw in frameworks if fw != "tether"]
    valid = [(fw, value) for fw, value in found if value is not None and value == value]
    if not valid:
        return None
    return max(valid, key=lambda item: item[1]) if highest else min(valid, key=lambda item: item[1])


def targets(samples: Samples, frameworks: Sequence[str]) -> list[str]:
    """The issue's targets, each with the measured figure and met / missed.

    Each line names the scenario whose samples judge it (``- `loop`: ...``), so that :func:`splice`
    can replace a scenario's targets along with its section and keep the others.
    """
    lines: list[str] = []

    def add(scenario: str, text: str) -> None:
        lines.append(f"- `{scenario}`: {text}")

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("met" if ok else "**missed**")

    def tether(scenario: str, size: str, key: str) -> float | None:
        return med(_metric(samples, scenario, "tether", size, key))

    if "loop" in samples:
        mine = tether("loop", "20", "per_cycle_ms")
        best = _peer_best(samples, "loop", "20", "per_cycle_ms", frameworks, highest=False)
        factor = best[1] / mine if best and mine else None
        add(
            "loop",
            f"Loop per-cycle cost >= 5x lower than the fastest peer at N=20: "
            f"{fmt(factor)}x vs {best[0] if best else '-'} -> {verdict(None if factor is None else factor >= 5)}",
        )
        small, large = tether("loop", "20", "cycle_median_ms"), tether("loop", "2000", "cycle_median_ms")
        first, last = tether("loop", "2000", "first20_ms"), tether("loop", "2000", "last20_ms")
        flat = large / small if small and large else None
        drift = last / first if first and last else None
        ok = None if flat is None or drift is None else flat <= 1.3 and drift <= 1.3
        add(
            "loop",
            f"Loop flat to N=2,000 (cycle median N=2,000 ÷ N=20 and last-20 ÷ first-20 at N=2,000, both <= 1.3): "
            f"{fmt(flat)} and {fmt(drift)} -> {verdict(ok)}",
        )
    if "snapshot" in samples:
        mine = tether("snapshot", "1000", "roundtrip_ms")
        theirs = med(_metric(samples, "snapshot", "strands", "1000", "roundtrip_ms"))
        factor = theirs / mine if theirs and mine else None
        add(
            "snapshot",
            f"Snapshot round trip of 1,000 messages >= 5x faster than Strands' take_snapshot/load_snapshot: "
            f"{fmt(factor)}x -> {verdict(None if factor is None else factor >= 5)}",
        )
    if "durable" in samples:
        mine = tether("durable", "1000", "overhead_ms_per_cycle")
        theirs = med(_metric(samples, "durable", "langgraph", "1000", "overhead_ms_per_cycle"))
        factor = theirs / mine if theirs and mine and mine > 0 else None
        add(
            "durable",
            f"SQLite durable overhead per cycle >= 10x lower than LangGraph's SqliteSaver at 1,000 messages: "
            f"{fmt(factor)}x -> {verdict(None if factor is None else factor >= 10)}"
            + (" (Tether's overhead is within noise of zero or negative)" if mine is not None and mine <= 0 else ""),
        )
        per_msg = [tether("durable", size, "written_bytes_per_message") for size in ("100", "1000")]
        growth = per_msg[1] / per_msg[0] if per_msg[0] and per_msg[1] else None
        add(
            "durable",
            f"Tether's store writes O(n) bytes (bytes written per message at 1,000 ÷ at 100 <= 1.5): "
            f"{fmt(growth)} -> {verdict(None if growth is None else growth <= 1.5)}",
        )
    if "durable-pg" in samples:
        size = str(SIZES["durable-pg"][-1])
        mine = tether("durable-pg", size, "overhead_ms_per_cycle")
        for peer in ("dbos", "langgraph"):
            theirs = med(_metric(samples, "durable-pg", peer, size, "overhead_ms_per_cycle"))
            share = mine / theirs if mine is not None and theirs else None
            add(
                "durable-pg",
                f"PostgreSQL durable overhead per cycle <= 1/5 of {peer}'s (N={size}): {fmt(share)} of it "
                f"-> {verdict(None if share is None else share <= 0.2)}",
            )
        floor = tether("durable-pg", size, "floor_ms_per_commit")
        times = mine / floor if mine is not None and floor else None
        judged = verdict(None if times is None else times <= 4)
        add("durable-pg", f"... and <= 4x the one-commit floor measured in the same run: {fmt(times)}x -> {judged}")
        wal = tether("durable-pg", size, "wal_bytes_per_cycle")
        add("durable-pg", f"WAL <= 2.5 KB per cycle: {fmt(wal)} B -> {verdict(None if wal is None else wal <= 2500)}")
        rate = tether("durable-pg", size, "conversations_per_s")
        dbos = med(_metric(samples, "durable-pg", "dbos", size, "conversations_per_s"))
        factor = rate / dbos if rate and dbos else None
        add(
            "durable-pg",
            f"50 concurrent conversations on one shared store >= 2x DBOS's throughput: {fmt(factor)}x "
            f"-> {verdict(None if factor is None else factor >= 2)}",
        )
    if "concurrent" in samples:
        mine = tether("concurrent", "1000", "agents_per_s")
        best = _peer_best(samples, "concurrent", "1000", "agents_per_s", frameworks, highest=True)
        factor = mine / best[1] if best and mine else None
        add(
            "concurrent",
            f"1,000 concurrent agents at >= 2x the agents/s of the fastest peer: {fmt(factor)}x vs "
            f"{best[0] if best else '-'} -> {verdict(None if factor is None else factor >= 2)}",
        )
    if "import" in samples:
        mine = tether("import", "-", "import_ms")
        theirs = med(_metric(samples, "import", "strands", "-", "import_ms"))
        share = mine / theirs if mine and theirs else None
        ok = None if share is None else share <= 1 / 3
        add("import", f"import tether <= 1/3 of import strands: {fmt(share)} of it -> {verdict(ok)}")
    return lines


def _git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" (with uncommitted changes)" if dirty else "")


TARGETS = "Targets"
VERSIONS = "Versions and setup"
SECTION_ORDER: tuple[str, ...] = (TARGETS, *SCENARIOS, VERSIONS)
"""The headings of a full report in their order: where :func:`splice` puts a section the file lacks."""

PREAMBLE = (
    "Written by `python bench/compare.py` (see bench/README.md). A run replaces the sections of the scenarios "
    "it measured (and their targets) and keeps every other section as it was, so sections can come from "
    "different runs: each scenario's section names the run that measured it, and that run's date, rounds, "
    "machine, load, Tether revision and versions are under Versions and setup. Every number is a median over "
    "its run's rounds of fresh processes (min-max across rounds in brackets); `÷ Tether` is the framework's "
    "median divided by Tether's (for times and bytes, above 1 means Tether is lower; for agents/s, above 1 means "
    "the peer is faster). Fake models with no latency: only framework cost is measured."
)
SMOKE = "**Smoke run (`--quick`): one round, few repeats, on a possibly busy machine — not a result to quote.**"


def render(samples: Samples, info: dict[str, dict[str, Any]], settings: Settings, meta: dict[str, str]) -> str:
    """This run's markdown report: a preamble true of any run, then its sections.

    Every scenario section names this run (``Run <start time>``); the Versions and setup section holds
    one ``### Run <start time>`` block with the run's date, rounds, machine, load, Tether revision and
    the frameworks' versions. Sections of other runs cite their own blocks, which :func:`splice` keeps.
    """
    names = [fw.name for fw in settings.frameworks]
    run = f"Run {meta['started']}"
    cited = (
        f"{run}: {settings.rounds} round(s), Tether revision {meta['revision']}; its machine, load and versions "
        "under [Versions and setup](#versions-and-setup)."
    ) + (f" {SMOKE}" if settings.quick else "")
    out = ["# Tether vs peer agent SDKs", "", PREAMBLE, ""]
    out += [f"## {TARGETS}", "", "Each target is judged from its scenario's section, in that section's run.", ""]
    out += [*targets(samples, names), ""]
    for scenario in settings.scenarios:
        _, description, _ = TABLES[scenario]
        out += [f"## {scenario}", "", cited, "", description, ""]
        sizes = [str(size) for size in settings.sizes.get(scenario, ())] or ["-"]
        out += render_table(samples, scenario, names, sizes)
        apis = sorted(
            {
                f"{fw}: {info.get(fw, {}).get('notes', {}).get(scenario, '')}"
                for fw in names
                if info.get(fw, {}).get("notes", {}).get(scenario)
            }
        )
        if apis and scenario in ("snapshot", "durable", "durable-pg"):
            out += ["", "APIs used:", "", *[f"- {line}" for line in apis]]
        out.append("")
    out += [
        f"## {VERSIONS}",
        "",
        "One block per run that measured a section above (a run's block goes once no section names that run).",
        "",
        f"### {run}",
        "",
        f"Scenarios {', '.join(settings.scenarios)}; {settings.rounds} round(s) of fresh processes; "
        f"{meta['started']} -> {meta['finished']}. Machine: {meta['machine']}; load average at start "
        f"{meta['load_start']}, at end {meta['load_end']}. Tether revision {meta['revision']}.",
        "",
    ]
    if settings.quick:
        out += [SMOKE, ""]
    for fw in settings.frameworks:
        described = info.get(fw.name, {})
        versions = ", ".join(f"{k} {v}" for k, v in described.get("versions", {}).items())
        pins = ", ".join(fw.pins) if fw.pins else "this repository"
        out.append(f"- **{fw.name}** (Python {described.get('python', '?')}; installed: {pins}): {versions}")
        for key, note in described.get("notes", {}).items():
            out.append(f"  - {key}: {note}")
    out.append("")
    return "\n".join(out)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


# -- the report file ------------------------------------------------------------------------

_MARKER = re.compile(r"<!-- ([\w./-]+) -->")
_TARGET = re.compile(r"- `([^`]+)`: ")


@dataclass(frozen=True)
class Chunk:
    """A piece of a report: the preamble (key ``""``), a ``## `` section (key: the heading's text), or
    a block another script owns, ``<!-- NAME -->`` ... ``<!-- /NAME -->`` (key: its first line), such as
    ``bench/serve.py``'s (whose own ``## `` heading is inside the block)."""

    key: str
    text: str
    """The chunk's lines, ending in one newline: trailing blank lines are separators, not content."""


def split_report(text: str) -> list[Chunk]:
    """``text`` cut into its chunks, in order (an empty preamble is left out)."""
    starts: list[tuple[int, str]] = [(0, "")]
    position, closing = 0, ""
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\n")
        if closing:
            closing = "" if bare == closing else closing
        elif bare.startswith("## "):
            starts.append((position, bare[3:].strip()))
        elif marker := _MARKER.fullmatch(bare):
            starts.append((position, bare))
            closing = f"<!-- /{marker[1]} -->"
        position += len(line)
    ends = [begin for begin, _ in starts[1:]] + [len(text)]
    chunks = [Chunk(key, text[begin:end].rstrip("\n") + "\n") for (begin, key), end in zip(starts, ends, strict=True)]
    return [chunk for chunk in chunks if chunk.key or chunk.text.strip()]


def _join(pieces: Sequence[str]) -> str:
    """Pieces of markdown, one blank line between each two."""
    return "\n".join(piece.rstrip("\n") + "\n" for piece in pieces)


def _slot(keys: Sequence[str], key: str, order: Sequence[str]) -> int:
    """Where a chunk ``key`` new to a report with ``keys`` goes: the preamble first; a known heading after
    the last chunk that comes before it in ``order`` (else before the first that comes after it); the end
    otherwise."""
    if not key:
        return 0
    if key not in order:
        return len(keys)
    rank = order.index(key)
    ranks = [(index, order.index(other)) for index, other in enumerate(keys) if other in order]
    before = [index for index, other in ranks if other < rank]
    after = [index for index, other in ranks if other > rank]
    return before[-1] + 1 if before else after[0] if after else len(keys)


def _merge_targets(old: str, new: str, produced: set[str], headings: Sequence[str]) -> str:
    """``new``'s Targets section with ``old``'s target lines of the scenarios this run neither measured
    (``produced``: this run's headings) nor judged (``new``'s lines), every line in the order of its
    scenario's section in ``headings``. A line naming no scenario (an older format) is not kept: which
    run it speaks for is unknown."""
    lines = new.splitlines(keepends=True)
    head = [line for line in lines if not _TARGET.match(line)]
    fresh = [line for line in lines if _TARGET.match(line)]
    replaced = produced | {found[1] for line in fresh if (found := _TARGET.match(line))}
    kept = [line for line in old.splitlines(keepends=True) if (found := _TARGET.match(line)) and found[1] not in replaced]
    merged = kept + fresh

    def place(line: str) -> int:
        found = _TARGET.match(line)
        return headings.index(found[1]) if found and found[1] in headings else len(headings)

    merged.sort(key=place)  # stable: a scenario's lines keep their order
    return _join(["".join(head), "".join(merged)]) if merged else "".join(head)


def _run_blocks(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A Versions and setup section as its head and its ``### `` blocks (title, text)."""
    parts = re.split(r"^(?=### )", text, flags=re.M)
    blocks = [(part.splitlines()[0][4:].strip(), part) for part in parts[1:]]
    return parts[0], blocks


def _merge_versions(old: str, new: str, others: Sequence[str]) -> str:
    """``new``'s Versions and setup section with ``old``'s run blocks still cited in ``others`` (the rest
    of the merged report), oldest first; a block of a run no section names any more goes, and so does
    whatever an older format put there outside ``### `` blocks."""
    head, fresh = _run_blocks(new)
    titles = {title for title, _ in fresh}
    cited = [part for title, part in _run_blocks(old)[1] if title not in titles and any(title in text for text in others)]
    return _join([head, *cited, *(part for _, part in fresh)])


def splice(existing: str, report: str, order: Sequence[str] = SECTION_ORDER) -> str:
    """``report`` (this run's) spliced into ``existing`` (the output file's text, ``""`` if none).

    A section of ``report`` replaces the section of the same heading in place; a heading new to the file
    goes where :func:`_slot` puts it (by ``order``: ``durable-pg`` after ``durable``, say); every other
    section, and every ``<!-- NAME -->`` block another script wrote, is kept byte for byte (bar its
    trailing blank lines: one blank line separates any two pieces). The preamble is this run's (it
    describes no run). Two sections are merged rather than replaced, since they speak for every
    scenario: Targets keeps the lines of the scenarios this run did not measure, and Versions and setup
    keeps the ``### Run`` blocks still named by a kept section.

    A pure function (text in, text out) so that it can be tested without running a benchmark.
    """
    if not existing.strip():
        return report
    before = {chunk.key: chunk.text for chunk in reversed(split_report(existing))}  # the first of a repeated heading
    merged = split_report(existing)
    fresh = split_report(report)
    for chunk in fresh:
        keys = [each.key for each in merged]
        if chunk.key in keys:
            merged[keys.index(chunk.key)] = chunk
        else:
            merged.insert(_slot(keys, chunk.key, order), chunk)
    keys = [each.key for each in merged]
    produced = {chunk.key for chunk in fresh}
    if TARGETS in produced and TARGETS in before:
        index = keys.index(TARGETS)
        merged[index] = Chunk(TARGETS, _merge_targets(before[TARGETS], merged[index].text, produced, keys))
    if VERSIONS in produced and VERSIONS in before:
        index = keys.index(VERSIONS)
        others = [chunk.text for chunk in merged if chunk.key != VERSIONS]
        merged[index] = Chunk(VERSIONS, _merge_versions(before[VERSIONS], merged[index].text, others))
    return _join([chunk.text for chunk in merged])


def parse(argv: Sequence[str] | None = None) -> Settings:
    """Command-line options into :class:`Settings`."""
    parser = argparse.ArgumentParser(description="Benchmark Tether against peer agent SDKs.")
    parser.add_argument("--quick", action="store_true", help="smoke run: one round, few repeats")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of fresh processes (default 5; 1 with --quick)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"comma-separated subset of {','.join(SCENARIOS)}")
    parser.add_argument("--frameworks", default=",".join(fw.name for fw in FRAMEWORKS), help="comma-separated subset")
    parser.add_argument(
        "--output",
        default=str(ROOT / "bench" / "results.md"),
        help="markdown report path; an existing file gets this run's sections spliced in (the other sections, "
        "their targets and their runs' setup kept), see the module docstring",
    )
    parser.add_argument(
        "--baseline",
        default="",
        help="also run Tether from this git revision's src/ (as 'tether@REV'), interleaved with the working tree's",
    )
    args = parser.parse_args(argv)
    scenarios = tuple(s for s in args.scenarios.split(",") if s)
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; choose from {list(SCENARIOS)}")
    by_name = {fw.name: fw for fw in FRAMEWORKS}
    wanted = [name for name in args.frameworks.split(",") if name]
    missing = [name for name in wanted if name not in by_name]
    if missing:
        parser.error(f"unknown frameworks {missing}; choose from {list(by_name)}")
    if "tether" not in wanted:
        wanted.insert(0, "tether")  # every ratio is to Tether
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    chosen = [by_name[name] for name in wanted]
    if args.baseline:
        resolved = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", f"{args.baseline}^{{commit}}"], capture_output=True, text=True
        )
        if resolved.returncode != 0:
            parser.error(f"--baseline {args.baseline!r} is not a commit of this repository")
        args.baseline = resolved.stdout.strip()
        tether = by_name["tether"]
        chosen.insert(1, Framework(f"tether@{args.baseline}", tether.adapter, tether.import_statement, source=args.baseline))
    return Settings(
        scenarios=scenarios,
        frameworks=tuple(chosen),
        rounds=rounds,
        repeats=1 if args.quick else 3,
        import_repeats=3 if args.quick else 5,
        cache=cache_dir(),
        output=Path(args.output),
        quick=args.quick,
    )


def main(argv: Sequence[str] | None = None) -> str:
    """Measure, splice this run's report into ``--output`` (see :func:`splice`), print it and return it."""
    settings = parse(argv)

    def log(message: str) -> None:
        print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)

    meta = {
        "started": f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC",  # names the run: to the second
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "load_start": _load(),
        "revision": _git_revision(),
    }
    samples, info = measure(settings, log)
    meta["finished"] = f"{datetime.datetime.now(datetime.UTC):%H:%M:%S} UTC"
    meta["load_end"] = _load()
    report = render(samples, info, settings, meta)
    settings.output.parent.mkdir(parents=True, exist_ok=True)
    existing = settings.output.read_text() if settings.output.exists() else ""
    settings.output.write_text(splice(existing, report))
    print(report)
    log(f"wrote {settings.output}" + (" (this run's sections spliced in)" if existing.strip() else ""))
    return report


if __name__ == "__main__":
    main()
