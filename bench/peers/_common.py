"""What every framework adapter shares: the scenarios' measuring code, in the standard library only.

Each adapter (``bench/peers/<framework>.py``) runs in its framework's own virtual environment, so
this module imports nothing but the standard library. An adapter supplies small *cases* (build an
agent, return a callable that runs it); this module times them the same way for everyone and
prints one JSON document on stdout.

The fake models of all adapters follow one rule, :func:`next_call`: they decide the next action
from the last message only (the previous ``add`` result), so a model call costs the same at cycle
1 and at cycle 2,000 and never copies the history. The tool ``add(a, b)`` calls :func:`stamp`, so
cycle times come from the same clock, taken at the same point, in every framework.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

PROMPT = "Add numbers until you reach the target."
FINAL_PREFIX = "done "
EDGE = 20
"""Cycles averaged at the start and at the end of a long run (first-20 vs last-20)."""

STAMPS: list[float] = []
"""perf_counter() at every ``add`` call of the current run (reset by the harness)."""


def stamp() -> None:
    """Record the time of one tool call: called by every adapter's ``add`` tool."""
    STAMPS.append(time.perf_counter())


def add(a: int, b: int) -> int:
    """The benchmark's tool body: add two integers and stamp the time."""
    STAMPS.append(time.perf_counter())
    return a + b


def next_call(last_result: int | None, cycles: int) -> tuple[int, int] | str:
    """The fake model's whole policy: the ``add`` arguments of the next call, or the final answer.

    ``last_result`` is the value of the previous ``add`` call (``None`` before the first one).
    Each call adds 1, so the result counts the cycles done: no counter, no history scan.
    """
    done = 0 if last_result is None else int(last_result)
    if done >= cycles:
        return f"{FINAL_PREFIX}{done}"
    return (done, 1)


# -- a neutral conversation for the snapshot scenario ---------------------------------------


@dataclass(frozen=True)
class Turn:
    """One message of the benchmark conversation, framework-neutral (adapters convert it)."""

    kind: str  # "user" | "assistant_call" | "tool_result" | "assistant_text"
    index: int
    text: str = ""
    call_id: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)


def conversation(size: int) -> list[Turn]:
    """``size`` messages cycling user question -> assistant text + tool call -> tool result.

    The same content as ``bench/snapshot.py``: realistic sizes, every message shape a run has.
    """
    turns: list[Turn] = []
    for i in range(size):
        turn, step = divmod(i, 3)
        if step == 0:
            turns.append(Turn("user", turn, text=f"Question {turn}: what is the weather in city number {turn} today?"))
        elif step == 1:
            turns.append(
                Turn(
                    "assistant_call",
                    turn,
                    text=f"Let me look up the forecast for city {turn}.",
                    call_id=f"tooluse_{turn}",
                    args={"city": f"city-{turn}", "days": 3},
                )
            )
        else:
            turns.append(
                Turn(
                    "tool_result",
                    turn,
                    call_id=f"tooluse_{turn}",
                    result={"city": f"city-{turn}", "forecast": ["sun", "clouds", "rain"], "high_c": 21.5},
                )
            )
    return turns


# -- measuring helpers ----------------------------------------------------------------------


def written_bytes() -> int:
    """Bytes this process has passed to write()/pwrite() so far (``wchar`` of /proc/self/io).

    Counts every rewrite (an O(n^2) store shows here even if the file stays small); -1 where
    /proc is missing.
    """
    try:
        with open("/proc/self/io", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def tree_bytes(path: str) -> int:
    """Total size of the files under ``path`` (or of ``path`` itself)."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mib() -> float:
    """This process's resident set size now, in MiB."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


async def _await_timed(thunk: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = thunk()
    if inspect.isawaitable(value):
        value = await value
    return time.perf_counter() - started, value


def timed(thunk: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by ``thunk()`` and its value.

    An async thunk runs under ``asyncio.run`` with the clock started inside the running loop,
    so creating and closing the event loop is not counted.
    """
    if inspect.iscoroutinefunction(thunk) or getattr(thunk, "is_async", False):
        return asyncio.run(_await_timed(thunk))
    started = time.perf_counter()
    value = thunk()
    if inspect.isawaitable(value):
        raise TypeError("an async case must be a coroutine function or carry is_async = True")
    return time.perf_counter() - started, value


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _check_final(text: Any, cycles: int) -> None:
    if str(text).strip() != f"{FINAL_PREFIX}{cycles}":
        raise RuntimeError(f"expected a final answer {FINAL_PREFIX}{cycles!r}, got {str(text)[:120]!r}")


# -- scenarios ------------------------------------------------------------------------------

LoopCase = Callable[[int], Callable[[], Any]]
"""``case(cycles)`` builds a fresh agent and returns a thunk that runs it and returns the final text."""


def scenario_loop(case: LoopCase, sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """N tool cycles and a final answer, in one agent call, per size.

    Per size: seconds per cycle (whole call / N), the median/min/max of the individual cycle
    times (gaps between consecutive ``add`` calls), the mean of the first and last 20 of them.
    """
    _run_loop(case, 3)  # warm-up: imports, caches, first-call paths
    out: dict[str, Any] = {}
    for cycles in sizes:
        runs = max(1, repeats if cycles <= 20 else repeats // 3 if cycles <= 200 else 1)
        samples: list[dict[str, Any]] = []
        try:
            for _ in range(runs):
                samples.append(_run_loop(case, cycles))
        except Exception as exc:  # a framework that cannot do N cycles in one call
            out[str(cycles)] = {"error": f"{type(exc).__name__}: {exc}"[:400]}
            continue
        out[str(cycles)] = {
            "per_cycle_ms": _median([s["per_cycle_ms"] for s in samples]),
            "cycle_median_ms": _median([s["cycle_median_ms"] for s in samples]),
            "cycle_min_ms": min(s["cycle_min_ms"] for s in samples),
            "cycle_max_ms": max(s["cycle_max_ms"] for s in samples),
            "first20_ms": _median([s["first20_ms"] for s in samples]),
            "last20_ms": _median([s["last20_ms"] for s in samples]),
            "runs": runs,
        }
    return out


def _run_loop(case: LoopCase, cycles: int) -> dict[str, Any]:
    thunk = case(cycles)
    STAMPS.clear()
    seconds, final = timed(thunk)
    _check_final(final, cycles)
    if len(STAMPS) != cycles:
        raise RuntimeError(f"expected {cycles} add calls, got {len(STAMPS)}")
    gaps = [(b - a) * 1000.0 for a, b in itertools.pairwise(STAMPS)] or [seconds * 1000.0]
    edge = min(EDGE, len(gaps))
    return {
        "per_cycle_ms": seconds * 1000.0 / cycles,
        "cycle_median_ms": statistics.median(gaps),
        "cycle_min_ms": min(gaps),
        "cycle_max_ms": max(gaps),
        "first20_ms": statistics.fmean(gaps[:edge]),
        "last20_ms": statistics.fmean(gaps[-edge:]),
    }


@dataclass
class SnapshotCase:
    """Serialize a live conversation and restore it, through the framework's own API."""

    save: Callable[[], str | bytes]
    """Capture the agent's/run's conversation and serialize it to what would be stored."""
    load: Callable[[str | bytes], int]
    """Parse a saved document back into the framework's objects; returns the message count."""
    api: str
    """What was used, in words (goes to the results table)."""


def scenario_snapshot(case: Callable[[list[Turn]], SnapshotCase], sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """Save and load a 10 .. 10,000-message conversation; medians of repeated round trips."""
    out: dict[str, Any] = {}
    for size in sizes:
        built = case(conversation(size))
        document = built.save()
        restored = built.load(document)
        if restored != size:
            raise RuntimeError(f"restored {restored} messages, expected {size}")
        count = max(2, min(repeats * 20, (repeats * 20_000) // max(size, 1)))
        saves, loads = [], []
        for _ in range(count):
            started = time.perf_counter()
            document = built.save()
            saves.append(time.perf_counter() - started)
            started = time.perf_counter()
            built.load(document)
            loads.append(time.perf_counter() - started)
        save_ms, load_ms = _median(saves) * 1000.0, _median(loads) * 1000.0
        out[str(size)] = {
            "save_ms": save_ms,
            "load_ms": load_ms,
            "roundtrip_ms": save_ms + load_ms,
            "bytes": len(document),
            "runs": count,
            "api": built.api,
        }
    return out


@dataclass
class DurableCase:
    """A durable conversation: each ``turn()`` runs one agent call of the same conversation."""

    turn: Callable[[], Any]
    path: str
    """File or directory the store writes (its size is measured afterwards)."""
    api: str


CYCLES_PER_TURN = 10


def durable_plan(messages: int) -> tuple[int, int]:
    """(turns, cycles per turn) whose conversation holds about ``messages`` messages.

    A turn of c cycles adds 2c + 2 messages (prompt, c calls and results, answer). Small sizes
    are one turn; larger ones are turns of :data:`CYCLES_PER_TURN` cycles, so no framework needs
    hundreds of cycles in one call (some cannot: Strands' recursive loop stops near 300).
    """
    if messages <= 2 * CYCLES_PER_TURN + 2:
        return 1, max(1, (messages - 2) // 2)
    return max(1, round(messages / (2 * CYCLES_PER_TURN + 2))), CYCLES_PER_TURN


def _all_turns(case: DurableCase, turns: int, cycles: int) -> Callable[[], Any]:
    """A thunk running ``turns`` turns (async if the case's turn is), checking each answer."""
    if inspect.iscoroutinefunction(case.turn) or getattr(case.turn, "is_async", False):

        async def run_async() -> str:
            final = ""
            for _ in range(turns):
                final = str(await case.turn())
                _check_final(final, cycles)
            return final

        return run_async

    def run_sync() -> str:
        final = ""
        for _ in range(turns):
            final = str(case.turn())
            _check_final(final, cycles)
        return final

    return run_sync


def scenario_durable(case: Callable[[int, str | None], DurableCase], sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """Per-cycle cost of persisting a conversation and the bytes written per message, per size.

    Each size runs the same conversation with the store and without (``case(cycles, None)``),
    in alternation; overhead per cycle = (with - without) / cycles. ``tail`` compares the last
    10 cycles of both runs, so a per-step cost that grows with the history shows there.
    """
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        warm = os.path.join(tmp, "warm")
        os.makedirs(warm)
        timed(_all_turns(case(3, warm), 2, 3))
        timed(_all_turns(case(3, None), 2, 3))
        for size in sizes:
            turns, cycles = durable_plan(size)
            total_cycles = turns * cycles
            runs = max(1, repeats if size <= 10 else repeats // 3 if size <= 100 else 1)
            with_store, without, tails, written, on_disk = [], [], [], [], []
            api = ""
            try:
                for index in range(runs):
                    where = os.path.join(tmp, f"s{size}-{index}")
                    os.makedirs(where)
                    built = case(cycles, where)
                    api = built.api
                    STAMPS.clear()
                    before = written_bytes()
                    seconds, _ = timed(_all_turns(built, turns, cycles))
                    written.append(written_bytes() - before)
                    store_gaps = _gaps()
                    on_disk.append(tree_bytes(built.path))
                    with_store.append(seconds)
                    STAMPS.clear()
                    plain_seconds, _ = timed(_all_turns(case(cycles, None), turns, cycles))
                    without.append(plain_seconds)
                    plain_gaps = _gaps()
                    tail = min(10, len(store_gaps), len(plain_gaps))
                    if tail:
                        tails.append(statistics.fmean(store_gaps[-tail:]) - statistics.fmean(plain_gaps[-tail:]))
                    shutil.rmtree(where, ignore_errors=True)
            except Exception as exc:
                out[str(size)] = {"error": f"{type(exc).__name__}: {exc}"[:400]}
                continue
            messages = turns * (2 * cycles + 2)
            out[str(size)] = {
                "messages": messages,
                "turns": turns,
                "cycles": total_cycles,
                "store_ms_per_cycle": _median(with_store) * 1000.0 / total_cycles,
                "plain_ms_per_cycle": _median(without) * 1000.0 / total_cycles,
                "overhead_ms_per_cycle": (_median(with_store) - _median(without)) * 1000.0 / total_cycles,
                "tail_overhead_ms_per_cycle": _median(tails) * 1000.0 if tails else float("nan"),
                "written_bytes_per_message": _median(written) / messages,
                "disk_bytes_per_message": _median(on_disk) / messages,
                "runs": runs,
                "api": api,
            }
    return out


def _gaps() -> list[float]:
    return [b - a for a, b in itertools.pairwise(STAMPS)]


ConcurrentCase = Callable[[int, int], Callable[[], Any]]
"""``case(agents, cycles)`` returns an async thunk that builds and runs ``agents`` conversations
concurrently (asyncio.gather) and returns their final texts."""


def scenario_concurrent(case: ConcurrentCase, sizes: Sequence[int], cycles: int) -> dict[str, Any]:
    """Wall time, agents per second and peak RSS of ``agents`` concurrent runs of ``cycles`` cycles.

    Building the agents is inside the timed region: serving N conversations includes creating
    whatever per-conversation objects the framework needs. Sizes run in increasing order, so the
    process's peak RSS after each size is that size's peak.
    """
    timed(case(2, 2))  # warm-up
    baseline = current_rss_mib()
    out: dict[str, Any] = {}
    for agents in sizes:
        STAMPS.clear()
        seconds, finals = timed(case(agents, cycles))
        finals = list(finals)
        if len(finals) != agents:
            raise RuntimeError(f"expected {agents} results, got {len(finals)}")
        for final in finals:
            _check_final(final, cycles)
        if len(STAMPS) != agents * cycles:
            raise RuntimeError(f"expected {agents * cycles} add calls, got {len(STAMPS)}")
        out[str(agents)] = {
            "wall_ms": seconds * 1000.0,
            "agents_per_s": agents / seconds,
            # The kernel's high-water mark lags (it is updated when memory is unmapped), so the
            # peak so far is at least every reading taken, including the baseline.
            "peak_rss_mib": max(peak_rss_mib(), current_rss_mib(), baseline),
            "baseline_rss_mib": baseline,
        }
    return out


# -- durable runs on PostgreSQL --------------------------------------------------------------


@dataclass
class PgServer:
    """Where ``bench/compare.py``'s throwaway PostgreSQL server listens (from the environment)."""

    host: str
    port: int
    user: str

    @classmethod
    def from_env(cls) -> PgServer:
        """The server named by ``TETHER_BENCH_PG_HOST`` / ``_PORT`` / ``_USER`` (set by compare.py)."""
        host = os.environ.get("TETHER_BENCH_PG_HOST")
        if not host:
            raise SystemExit("durable-pg needs TETHER_BENCH_PG_HOST/PORT/USER (bench/compare.py sets them)")
        return cls(host, int(os.environ.get("TETHER_BENCH_PG_PORT", "5432")), os.environ.get("TETHER_BENCH_PG_USER", "postgres"))

    def conninfo(self, dbname: str) -> str:
        """A libpq keyword/value connection string for ``dbname``."""
        return f"host={self.host} port={self.port} user={self.user} dbname={dbname}"

    def url(self, dbname: str) -> str:
        """The same database as a ``postgresql://`` URL (unix socket directory as ``host=``)."""
        return f"postgresql://{self.user}@/{dbname}?host={self.host}&port={self.port}"


@dataclass
class DurablePgRig:
    """One framework's durable agent on one PostgreSQL database.

    ``run(cycles, key)`` runs one durable conversation of ``cycles`` tool cycles under the durable
    id ``key`` (a run id, workflow id or thread id) and returns its answer; ``plain(cycles)`` runs
    the same conversation with nothing persisted (the baseline); ``close()`` releases connections.
    """

    run: Callable[[int, str], Awaitable[str]]
    plain: Callable[[int], Awaitable[str]]
    close: Callable[[], Any]
    api: str


PG_FLOOR_COMMITS = 300
PG_CONCURRENT = (50, 5)
"""(conversations, cycles each) of the concurrent durable measurement."""


def _pg_admin(server: PgServer) -> Any:
    import psycopg  # every durable-pg environment has psycopg (Tether's, DBOS's, LangGraph's saver)

    return psycopg.connect(server.conninfo("postgres"), autocommit=True)


def _pg_probe(conn: Any, dbname: str) -> tuple[int, int, int]:
    """(WAL position in bytes, next transaction id, database size in bytes) right now."""
    row = conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint,"
        " pg_snapshot_xmax(pg_current_snapshot())::text::bigint, pg_database_size(%s)",
        (dbname,),
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def pg_floor(server: PgServer, dbname: str, commits: int | None = None) -> float:
    """Milliseconds per commit of the physical floor: one INSERT + UPDATE transaction (psycopg);
    the median of ``commits`` (default :data:`PG_FLOOR_COMMITS`)."""
    import psycopg

    commits = PG_FLOOR_COMMITS if commits is None else commits
    with psycopg.connect(server.conninfo(dbname)) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor (id bigint PRIMARY KEY, rev bigint NOT NULL, body bytea)")
        conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_head (id int PRIMARY KEY, rev bigint NOT NULL)")
        conn.execute("INSERT INTO bench_floor_head VALUES (1, 0) ON CONFLICT DO NOTHING")
        conn.commit()
        body = b"x" * 200
        times = []
        base = int(time.time() * 1000) * 1000
        for index in range(commits):
            started = time.perf_counter()
            with conn.transaction():
                conn.execute("INSERT INTO bench_floor VALUES (%s, %s, %s)", (base + index, index, body))
                conn.execute("UPDATE bench_floor_head SET rev = %s WHERE id = 1", (index,))
            times.append(time.perf_counter() - started)
        conn.execute("DROP TABLE bench_floor, bench_floor_head")
        conn.commit()
    return _median(times) * 1000.0


def scenario_durable_pg(setup: Callable[[PgServer, str], Awaitable[DurablePgRig]], sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """Durable cycles on PostgreSQL with its default durability (fsync, synchronous_commit on).

    Each framework gets a fresh database on the shared throwaway server. Per size N: the same
    N-cycle conversation durable and plain, alternated ``repeats`` times; overhead per cycle =
    (durable - plain) / N (medians). Around each durable run the server's WAL position, its next
    transaction id (write transactions committed: read-only ones take no id) and the database's
    size are read, so WAL bytes, write commits and table growth per cycle are the server's own
    figures. Then ``PG_CONCURRENT`` conversations run at once on the same rig, and the physical
    floor (one INSERT + UPDATE transaction through psycopg) is measured in the same process.
    Everything runs in one event loop (async connections of some frameworks are bound to it).
    """
    server = PgServer.from_env()
    dbname = f"bench_{os.getpid()}"
    admin = _pg_admin(server)
    admin.execute(f"DROP DATABASE IF EXISTS {dbname}")
    admin.execute(f"CREATE DATABASE {dbname}")
    keys = itertools.count()

    async def measure() -> dict[str, Any]:
        out: dict[str, Any] = {}
        rig = await setup(server, dbname)
        try:
            await rig.run(3, f"warm-{next(keys)}")
            await rig.plain(3)
            floor = pg_floor(server, dbname)
            for size in sizes:
                durable, plain, wal, xids, growth = [], [], [], [], []
                for _ in range(max(1, repeats)):
                    started = time.perf_counter()
                    _check_final(await rig.plain(size), size)
                    plain.append(time.perf_counter() - started)
                    before = _pg_probe(admin, dbname)
                    started = time.perf_counter()
                    _check_final(await rig.run(size, f"run-{next(keys)}"), size)
                    durable.append(time.perf_counter() - started)
                    after = _pg_probe(admin, dbname)
                    wal.append((after[0] - before[0]) / size)
                    xids.append((after[1] - before[1]) / size)
                    growth.append((after[2] - before[2]) / size)
                out[str(size)] = {
                    "durable_ms_per_cycle": _median(durable) * 1000.0 / size,
                    "plain_ms_per_cycle": _median(plain) * 1000.0 / size,
                    "overhead_ms_per_cycle": (_median(durable) - _median(plain)) * 1000.0 / size,
                    "wal_bytes_per_cycle": _median(wal),
                    "write_commits_per_cycle": _median(xids),
                    "table_growth_bytes_per_cycle": _median(growth),
                    "floor_ms_per_commit": floor,
                    "api": rig.api,
                }
            conversations, cycles = PG_CONCURRENT
            started = time.perf_counter()
            finals = await asyncio.gather(*(rig.run(cycles, f"conc-{next(keys)}") for _ in range(conversations)))
            seconds = time.perf_counter() - started
            for final in finals:
                _check_final(final, cycles)
            for figures in out.values():  # one figure per process, shown beside every size
                figures["conversations_per_s"] = conversations / seconds
        finally:
            closing = rig.close()
            if inspect.isawaitable(closing):
                await closing
        return out

    try:
        return asyncio.run(measure())
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
        admin.close()


# -- the adapter's command line -------------------------------------------------------------


@dataclass
class Adapter:
    """One framework's cases; ``None`` where the framework has nothing to measure."""

    name: str
    versions: Callable[[], dict[str, str]]
    loop: LoopCase
    snapshot: Callable[[list[Turn]], SnapshotCase]
    durable: Callable[[int, str | None], DurableCase] | None
    concurrent: ConcurrentCase
    notes: dict[str, str] = field(default_factory=dict)
    durable_pg: Callable[[PgServer, str], Awaitable[DurablePgRig]] | None = None
    """``durable_pg(server, dbname)``: the framework's durable agent on that database (or None)."""


def run_scenario(adapter: Adapter, scenario: str, sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """Run one scenario of one adapter and return its JSON-ready result."""
    started = time.perf_counter()
    result: dict[str, Any] = {"framework": adapter.name, "scenario": scenario, "python": sys.version.split()[0]}
    if scenario == "loop":
        result["sizes"] = scenario_loop(adapter.loop, sizes, repeats)
    elif scenario == "snapshot":
        result["sizes"] = scenario_snapshot(adapter.snapshot, sizes, repeats)
    elif scenario == "durable":
        if adapter.durable is None:
            result["unsupported"] = adapter.notes.get("durable", "no built-in durable store")
        else:
            result["sizes"] = scenario_durable(adapter.durable, sizes, repeats)
    elif scenario == "concurrent":
        result["sizes"] = scenario_concurrent(adapter.concurrent, sizes, 5)
    elif scenario == "durable-pg":
        if adapter.durable_pg is None:
            result["unsupported"] = adapter.notes.get("durable-pg", "no PostgreSQL durable execution")
        else:
            result["sizes"] = scenario_durable_pg(adapter.durable_pg, sizes, repeats)
    elif scenario == "versions":
        result["versions"] = adapter.versions()
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    result["notes"] = adapter.notes
    result["seconds"] = time.perf_counter() - started
    return result


def main(adapter: Adapter, argv: Sequence[str] | None = None) -> None:
    """``python bench/peers/<framework>.py SCENARIO --sizes 20,200 --repeats 5``: print JSON."""
    parser = argparse.ArgumentParser(description=f"{adapter.name} side of bench/compare.py")
    parser.add_argument("scenario", choices=["loop", "snapshot", "durable", "concurrent", "durable-pg", "versions"])
    parser.add_argument("--sizes", default="", help="comma-separated sizes")
    parser.add_argument("--repeats", type=int, default=3, help="repeats inside this process (scaled down for big sizes)")
    args = parser.parse_args(argv)
    sizes = [int(part) for part in args.sizes.split(",") if part]
    result = run_scenario(adapter, args.scenario, sizes, args.repeats)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def gather(factories: Sequence[Callable[[], Awaitable[Any]]]) -> Awaitable[list[Any]]:
    """Run coroutine factories concurrently (a helper for concurrent cases)."""
    return asyncio.gather(*(factory() for factory in factories))


def is_async(func: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a thunk as async for :func:`timed` (for callables that are not coroutine functions)."""
    func.is_async = True  # type: ignore[attr-defined]
    return func
