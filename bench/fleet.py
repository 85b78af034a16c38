"""A fleet of durable runs on one PostgreSQL database: ``python bench/fleet.py``.

``--runs`` durable runs (default 1,000) are started at once over ``--processes`` worker processes
(default 4) sharing one PostgreSQL database with its default durability (fsync and
synchronous_commit on). Each worker is what ``tether serve`` runs without its HTTP face: a
:class:`tether.serve.runs.RunManager` owning its runs through the store's leases and scanning the
store every ``--scan`` seconds for stalled runs to take over. Each run is a scripted agent doing
``--cycles`` tool cycles; the tool sleeps ``--tool-ms`` and appends its idempotency key to a log
shared by every process (``O_APPEND``: one line per execution).

When ``--kill-at`` of all tool calls have run, worker 0 is killed with SIGKILL and started again
``--restart-after`` seconds later (its runs are then ``stalled``: the other workers and the new
worker 0 take them over). Every worker exits once every run of the fleet is finished.

Checked, not just timed: every run finished with the scripted answer; no tool call executed twice
unless the run's history records it as an in-doubt call that was re-run (started before the kill,
result not recorded: the at-least-once window of an idempotent tool); every call ran at least
once. Reported: wall time, runs/s and cycles/s, the store's commit latency (p50/p99) and the
store time per cycle (p50/p99 over runs) measured inside the workers (the killed worker's first
life excluded: its figures died with it), takeovers, and in-doubt re-runs.

``--store postgresql://...`` uses an existing database instead of a throwaway server (the
tables of a previous fleet are not cleared: use a fresh database). ``--json`` prints the figures
as JSON. The test suite runs a small fleet (tests/bench/test_fleet_bench.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.durable import PostgresStore
from tether.durable.store import RunStore
from tether.models.scripted import ScriptedModel, tool_call
from tether.serve.runs import RunManager
from tether.tools.context import ToolContext

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for this import only: a test importing
from _pg import throwaway_server  # this script must not find bench/durable.py as `durable`

del sys.path[0]

AGENT = "fleet"
ANSWER = "fleet run done"


# -- a worker ---------------------------------------------------------------------------------


class TimedStore(PostgresStore):
    """A PostgresStore that times each commit (the I/O of a save point) per run."""

    def __init__(self, conninfo: str) -> None:
        super().__init__(conninfo)
        self.timings: dict[str, list[float]] = {}
        self._timing_lock = threading.Lock()

    def commit(self, run_id: str, *args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        done = super().commit(run_id, *args, **kwargs)
        if done:  # a declined commit (wait=False: it would block) wrote nothing: not a save point
            self._timed(run_id, started)
        return done

    def send_commit(self, run_id: str, *args: Any, **kwargs: Any) -> Any:
        """A save point sent from the event loop, timed from its send to its outcome (behind
        the run's previous one, when that one is still out: the wait is the run's)."""
        started = time.perf_counter()
        sent = super().send_commit(run_id, *args, **kwargs)
        return None if sent is None else _TimedCommit(self, run_id, started, sent)

    def _timed(self, run_id: str, started: float) -> None:
        elapsed = time.perf_counter() - started
        with self._timing_lock:
            self.timings.setdefault(run_id, []).append(elapsed)


class _TimedCommit:
    """A save point :class:`TimedStore` sent from the event loop; timed when it committed."""

    def __init__(self, store: TimedStore, run_id: str, started: float, sent: Any) -> None:
        self.store, self.run_id, self.started, self.sent = store, run_id, started, sent

    async def done(self) -> bool:
        done = bool(await self.sent.done())
        if done:
            self.store._timed(self.run_id, self.started)
        return done


def make_registry(cycles: int, tool_ms: float, log_path: str) -> dict[str, Any]:
    """The fleet's one agent: ``cycles`` calls of ``work``, then :data:`ANSWER`."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    @tool
    async def work(step: int, tool_context: ToolContext) -> str:
        """One unit of work (idempotent: safe to run again with the same key)."""
        await asyncio.sleep(tool_ms / 1000.0)
        os.write(log_fd, f"{tool_context.idempotency_key} {os.getpid()}\n".encode())
        return f"worked {step}"

    def factory() -> Agent:
        script: list[Any] = [tool_call("work", {"step": i}) for i in range(cycles)] + [ANSWER]
        return Agent(model=ScriptedModel(script, stateful=True), tools=[work])

    return {AGENT: factory}


async def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    """Start this worker's share of the runs, take over stalled runs, and return its figures once
    every run of the fleet is finished. A ``--restarted`` worker starts only those of its share the
    store does not have (its killed predecessor died before starting them: an app submits them
    again); the runs it did start are stalled now, and the scans of every worker take them over."""
    store = TimedStore(args.store)
    manager = RunManager(make_registry(args.cycles, args.tool_ms, args.log), store, scan_interval=args.scan)
    await manager.start()
    mine = [f"fleet-{i:05d}" for i in range(args.index, args.runs, args.processes)]
    if args.restarted:
        heads = await asyncio.gather(*(asyncio.to_thread(store.head, run_id) for run_id in mine))
        mine = [run_id for run_id, head in zip(mine, heads, strict=True) if head is None]
    gate = asyncio.Semaphore(64)

    async def start(run_id: str) -> None:
        async with gate:
            await manager.start_run(AGENT, "go", run_id)

    await asyncio.gather(*(start(run_id) for run_id in mine))
    started = len(mine)
    executed: set[str] = set()
    while True:
        executed.update(manager.executions)
        runs = await asyncio.to_thread(store.list_runs)
        if len(runs) >= args.runs and all(run.status == "finished" for run in runs):
            break
        await asyncio.sleep(0.2)
    await manager.stop()
    timings = dict(store.timings)
    store.close()
    return {
        "index": args.index,
        "pid": os.getpid(),
        "restarted": args.restarted,
        "started": started,
        "executed": sorted(executed),
        "timings": timings,
    }


# -- the fleet --------------------------------------------------------------------------------


def start_postgres(stack: ExitStack) -> str:
    """A conninfo of a throwaway PostgreSQL server with its default durability (stopped by ``stack``)."""
    server = throwaway_server(stack, durable=True)
    conninfo: str = server.conninfo()
    return conninfo


def _spawn(args: argparse.Namespace, index: int, workdir: Path, *, restarted: bool) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "_worker",
        "--store", args.store,
        "--runs", str(args.runs),
        "--processes", str(args.processes),
        "--cycles", str(args.cycles),
        "--tool-ms", str(args.tool_ms),
        "--scan", str(args.scan),
        "--index", str(index),
        "--log", str(workdir / "calls.log"),
        "--out", str(workdir / f"worker-{index}-{'restarted' if restarted else 'first'}.json"),
    ]  # fmt: skip
    if restarted:
        command.append("--restarted")
    with (workdir / f"worker-{index}.log").open("ab") as errors:  # the child keeps its own descriptor
        return subprocess.Popen(command, cwd=workdir, stderr=errors)


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        return 0


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (nearest rank); NaN for none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def verify(store: RunStore, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """Every run finished with its answer; no completed call ran twice; every call ran."""
    runs = {run.run_id: run for run in store.list_runs()}
    expected = [f"fleet-{i:05d}" for i in range(args.runs)]
    missing = [run_id for run_id in expected if run_id not in runs]
    unfinished = sorted(run_id for run_id in expected if run_id in runs and runs[run_id].status != "finished")
    executions = Counter(line.split()[0] for line in log.read_text().splitlines() if line.strip())
    duplicated = {key: count for key, count in executions.items() if count > 1}
    in_doubt_reruns: set[str] = set()
    for run_id in {key.split("/", 1)[0] for key in duplicated}:
        for step in store.history(run_id):
            for decided in step.in_doubt:
                if decided.get("action") == "rerun":
                    in_doubt_reruns.add(f"{run_id}/{decided.get('toolUseId')}")
    unexplained = sorted(key for key in duplicated if key not in in_doubt_reruns or duplicated[key] > 2)
    wrong_answers = []
    for run_id in expected:
        loaded = store.load(run_id) if run_id in runs else None
        last = loaded.messages[-1] if loaded is not None and loaded.messages else None
        text = "".join(block.get("text", "") for block in (last or {}).get("content", []))
        if text != ANSWER:
            wrong_answers.append(run_id)
    calls_expected = args.runs * args.cycles
    return {
        "missing": missing,
        "unfinished": unfinished,
        "wrong_answers": wrong_answers[:20],
        "calls_expected": calls_expected,
        "calls_distinct": len(executions),
        "executions": sum(executions.values()),
        "in_doubt_reruns": sum(count - 1 for key, count in duplicated.items() if key not in unexplained),
        "unexplained_duplicates": unexplained[:20],
        "ok": not missing and not unfinished and not wrong_answers and not unexplained and len(executions) == calls_expected,
    }


def fleet(args: argparse.Namespace) -> dict[str, Any]:
    """Run the fleet, kill and restart worker 0 on the way, verify, and return the figures."""
    with ExitStack() as stack:
        if not args.store:
            args.store = start_postgres(stack)
        workdir = Path(tempfile.mkdtemp(prefix="tether-fleet-", dir=args.workdir or None))
        if not args.keep:
            stack.callback(lambda: subprocess.run(["rm", "-rf", str(workdir)], check=False))
        PostgresStore(args.store).close()  # the schema exists before four processes race to make it
        started = time.perf_counter()
        workers = {index: _spawn(args, index, workdir, restarted=False) for index in range(args.processes)}
        for process in workers.values():
            stack.callback(lambda p=process: p.poll() is None and p.kill())
        total_calls = args.runs * args.cycles
        killed_at = restarted_at = None
        if args.kill_at < 1:
            while _lines(workdir / "calls.log") < args.kill_at * total_calls:
                if any(p.poll() not in (None, 0) for p in workers.values()):
                    raise SystemExit(f"a worker failed before the kill; see {workdir}/worker-*.log")
                time.sleep(0.02)
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait()
            killed_at = time.perf_counter() - started
            time.sleep(args.restart_after)
            workers[0] = _spawn(args, 0, workdir, restarted=True)
            stack.callback(lambda p=workers[0]: p.poll() is None and p.kill())
            restarted_at = time.perf_counter() - started
        deadline = time.monotonic() + args.timeout
        for index, process in workers.items():
            remaining = max(0.1, deadline - time.monotonic())
            try:
                code = process.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                raise SystemExit(f"worker {index} did not finish in {args.timeout:.0f} s; see {workdir}/worker-{index}.log") from None
            if code != 0:
                tail = (workdir / f"worker-{index}.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"worker {index} exited with {code}:\n{tail}")
        wall = time.perf_counter() - started
        reports = [json.loads(path.read_text()) for path in sorted(workdir.glob("worker-*.json"))]
        store = PostgresStore(args.store)
        try:
            checked = verify(store, args, workdir / "calls.log")
        finally:
            store.close()
    commits = [t * 1000.0 for report in reports for series in report["timings"].values() for t in series]
    per_cycle = [sum(series) * 1000.0 / args.cycles for report in reports for series in report["timings"].values()]
    first = {run_id for report in reports if not report["restarted"] for run_id in report["executed"]}
    taken_over = [run_id for report in reports if report["restarted"] for run_id in report["executed"]]
    return {
        "runs": args.runs,
        "processes": args.processes,
        "cycles": args.cycles,
        "tool_ms": args.tool_ms,
        "wall_s": wall,
        "runs_per_s": args.runs / wall,
        "cycles_per_s": args.runs * args.cycles / wall,
        "killed_at_s": killed_at,
        "restarted_at_s": restarted_at,
        "commit_ms_p50": percentile(commits, 0.5),
        "commit_ms_p99": percentile(commits, 0.99),
        "store_ms_per_cycle_p50": percentile(per_cycle, 0.5),
        "store_ms_per_cycle_p99": percentile(per_cycle, 0.99),
        "commits_measured": len(commits),
        "runs_executed_by_restarted_worker": len(taken_over),
        "runs_executed_by_first_workers": len(first),
        "workdir": str(workdir),
        **checked,
    }


def report(figures: dict[str, Any]) -> str:
    """The figures as a few lines of text."""
    verdict = "all checks passed" if figures["ok"] else "CHECKS FAILED"
    lines = [
        f"fleet: {figures['runs']} runs x {figures['cycles']} cycles over {figures['processes']} processes "
        f"(tool {figures['tool_ms']:.0f} ms): {figures['wall_s']:.1f} s, {figures['runs_per_s']:.1f} runs/s, "
        f"{figures['cycles_per_s']:.0f} cycles/s",
        f"store commit latency p50 {figures['commit_ms_p50']:.2f} ms, p99 {figures['commit_ms_p99']:.2f} ms "
        f"({figures['commits_measured']} commits); store time per cycle p50 {figures['store_ms_per_cycle_p50']:.2f} ms, "
        f"p99 {figures['store_ms_per_cycle_p99']:.2f} ms",
    ]
    if figures["killed_at_s"] is not None:
        lines.append(
            f"worker 0 SIGKILLed at {figures['killed_at_s']:.1f} s, restarted at {figures['restarted_at_s']:.1f} s; "
            f"{figures['runs_executed_by_restarted_worker']} runs executed by the restarted worker"
        )
    lines.append(
        f"{figures['executions']} tool executions for {figures['calls_expected']} calls: "
        f"{figures['in_doubt_reruns']} in-doubt re-runs, {len(figures['unexplained_duplicates'])} unexplained duplicates, "
        f"{len(figures['unfinished'])} unfinished, {len(figures['missing'])} missing runs -> {verdict}"
    )
    return "\n".join(lines)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (the fleet, or one ``_worker``)."""
    parser = argparse.ArgumentParser(description="Many durable runs over several processes on one PostgreSQL database.")
    parser.add_argument("role", nargs="?", default="fleet", choices=["fleet", "_worker"], help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1000, help="durable runs in the fleet (default 1000)")
    parser.add_argument("--processes", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--cycles", type=int, default=5, help="tool cycles per run (default 5)")
    parser.add_argument("--tool-ms", type=float, default=20.0, help="how long each tool call sleeps (default 20)")
    parser.add_argument("--scan", type=float, default=1.0, help="seconds between two scans for stalled runs (default 1)")
    parser.add_argument("--kill-at", type=float, default=0.4, help="fraction of tool calls after which worker 0 is killed (1: never)")
    parser.add_argument("--restart-after", type=float, default=1.0, help="seconds before the killed worker starts again")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds the fleet may take")
    parser.add_argument("--store", default="", help="a PostgreSQL conninfo or URL (default: a throwaway server)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, per-worker figures)")
    parser.add_argument("--workdir", default="", help="where the work directory is made (default: the system's temp dir)")
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--log", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    parser.add_argument("--restarted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.processes < 1 or args.cycles < 1:
        parser.error("--runs, --processes and --cycles must be at least 1")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    """Run the fleet (or, as ``_worker``, one of its processes)."""
    args = parse(argv)
    if args.role == "_worker":
        figures = asyncio.run(run_worker(args))
        Path(args.out).write_text(json.dumps(figures))
        return None
    figures = fleet(args)
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    if not figures["ok"]:
        raise SystemExit(1)
    return figures


if __name__ == "__main__":
    main()
