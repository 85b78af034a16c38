"""Serving cost: committed events per second over SSE with 100 concurrent streams, and the
latency an event gains over the in-process stream, on SQLite and PostgreSQL.

Run: ``python bench/serve.py`` (or ``python bench/serve.py --streams 100 --cycles 50``;
``--src DIR`` serves another checkout's ``src`` to compare before and after a change;
``--output bench/results.md`` writes the figures into that file's ``bench/serve.py`` section).

A real ``tether serve`` process (uvicorn) on loopback serves this module's ``AGENTS`` (the server
imports this file as the module ``serve``); the clients are httpx streams in this process. The
agent ``ticker`` runs ``--cycles`` tool cycles (a scripted model, an async tool that returns
``time.time()`` when it is called), so a run commits about two steps and five events per cycle.

Four scenarios per store:

- **runs**: ``--streams`` runs started at once, one SSE stream each, read from the start while
  the runs execute at full speed (the tool returns at once): the server is saturated, so the
  latency is the backlog, and the events/s are bounded by how fast the runs commit;
- **replay**: one stream each, from the start, of those runs once finished (reading alone);
- **fan-out**: one run, ``--streams`` SSE streams of it at once;
- **paced**: ``--streams`` runs of 10 cycles whose tool takes ``--pace`` seconds (an agent that
  waits for its tools), one stream each: the latency of a server that keeps up.

Printed per scenario: committed events received over SSE per second (all streams together,
from the first request until every stream ended), and the latency of the ``tool_call_end``
events: the client's receipt minus the tool's return time, which is when the agent's in-process
stream yields the tool's result (the loop then commits the step, the server reads it from the
store and sends it). Median and p99 in ms. Nothing is asserted; timings vary with the machine's
load (the server, the clients and PostgreSQL share the machine). PostgreSQL: a throwaway local
server, like ``bench/durable.py``'s (skipped, with the reason, when it cannot be started).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.conversation import NullConversationManager
from tether.models import ScriptedModel
from tether.models.scripted import tool_call

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for this import only: a test importing
import _sections as sections
from _pg import throwaway_server  # this script must not find bench/durable.py as `durable`

del sys.path[0]

ROOT = Path(__file__).resolve().parents[1]
CYCLES_VAR = "TETHER_BENCH_SERVE_CYCLES"
SECTION = "bench/serve.py"


@tool
async def tick(n: int) -> str:
    """Return the time the call happened (seconds since the epoch)."""
    return repr(time.time())


def ticker() -> Agent:
    """An agent that runs ``$TETHER_BENCH_SERVE_CYCLES`` tool cycles, then answers."""
    cycles = int(os.environ.get(CYCLES_VAR, "20"))
    script: list[Any] = [tool_call("tick", {"n": i}) for i in range(cycles)] + ["done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[tick], conversation_manager=NullConversationManager())


PACE_VAR = "TETHER_BENCH_SERVE_PACE"
PACED_CYCLES = 10


@tool
async def paced_tick(n: int) -> str:
    """Wait ``$TETHER_BENCH_SERVE_PACE`` seconds (a tool that takes time), then return the time."""
    await asyncio.sleep(float(os.environ.get(PACE_VAR, "1")))
    return repr(time.time())


def pacer() -> Agent:
    """An agent of PACED_CYCLES tool cycles whose tool takes ``$TETHER_BENCH_SERVE_PACE`` seconds."""
    script: list[Any] = [tool_call("paced_tick", {"n": i}) for i in range(PACED_CYCLES)] + ["done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[paced_tick], conversation_manager=NullConversationManager())


AGENTS = {"ticker": ticker, "pacer": pacer}
LAST_PID = 0  # the pid of the server process :func:`server` started last (bench/serve_langgraph.py reads its CPU)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server(store: str, cycles: int, pace: float, src: Path, folder: Path) -> Iterator[str]:
    """``tether serve serve:AGENTS`` on ``store`` in a subprocess; yields its URL."""
    import httpx

    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(Path(__file__).resolve().parent)]))
    env[CYCLES_VAR] = str(cycles)
    env[PACE_VAR] = str(pace)
    log = folder / f"server-{port}.log"
    command = [sys.executable, "-m", "tether", "--store", store, "serve", "serve:AGENTS", "--port", str(port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    global LAST_PID
    LAST_PID = process.pid
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited: {log.read_text()}")
            try:
                if httpx.get(url + "/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer: {log.read_text()}")
            time.sleep(0.05)
        yield url
    finally:
        process.kill()
        process.wait(10)


async def read_stream(client: Any, url: str, run_id: str, latencies: list[float]) -> int:
    """Read the run's SSE stream from the start to its end; returns the committed events read
    and appends each ``tool_call_end`` event's latency (s) to ``latencies``."""
    count = 0
    kind = ""
    has_id = False
    async with client.stream("GET", f"{url}/runs/{run_id}/events", timeout=300) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                has_id = True
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                received = time.time()
                if has_id:
                    count += 1
                if kind == "tool_call_end":
                    latencies.append(received - float(json.loads(line[6:])["content"][0]["text"]))
                elif kind == "end":
                    return count
            elif line == "":
                kind, has_id = "", False
    return count


async def scenario(url: str, name: str, streams: int, replay: list[str] | None = None) -> dict[str, float]:
    """One scenario: ``runs`` (``ticker`` runs at full speed, a stream each), ``paced`` (``pacer``
    runs, a stream each), ``fanout`` (one ``ticker`` run, ``streams`` streams) or ``replay``
    (a stream each from the start of the finished runs ``replay``): events/s over SSE and the
    latency figures."""
    import httpx

    latencies: list[float] = []
    tag = f"{name}-{time.monotonic_ns()}"
    agent = "pacer" if name == "paced" else "ticker"
    # No idle connection is reused: uvicorn closes one after 5 s idle, and a request sent on it
    # as it closes fails (a client-side race, not the server's doing).
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=600) as client:

        async def start(run_id: str) -> str:
            (await client.post(f"{url}/agents/{agent}/runs", json={"prompt": "tick", "run_id": run_id})).raise_for_status()
            return run_id

        async def one_run(run_id: str) -> int:
            return await read_stream(client, url, await start(run_id), latencies)

        began = time.perf_counter()
        if name in ("runs", "paced"):
            run_ids = [f"{tag}-{i}" for i in range(streams)]
            counts = await asyncio.gather(*(one_run(run_id) for run_id in run_ids))
        elif name == "fanout":
            run_id = await start(f"{tag}-0")
            run_ids = [run_id]
            counts = await asyncio.gather(*(read_stream(client, url, run_id, latencies) for _ in range(streams)))
        else:
            run_ids = list(replay or [])
            counts = await asyncio.gather(*(read_stream(client, url, run_id, []) for run_id in run_ids))
        wall = time.perf_counter() - began
    events = sum(counts)
    ms = sorted(value * 1000 for value in latencies)
    return {
        "streams": float(len(counts)),
        "events": float(events),
        "wall_s": wall,
        "events_per_s": events / wall,
        "median_ms": statistics.median(ms) if ms else float("nan"),
        "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))] if ms else float("nan"),
        "run_ids": run_ids,  # type: ignore[dict-item]
    }


def start_postgres(stack: ExitStack, connections: int) -> tuple[str | None, str]:
    """A ``postgresql://`` URL of a throwaway PostgreSQL server (stopped by ``stack``), or None and why not."""
    try:
        import psycopg  # noqa: F401

        pg_server = throwaway_server(stack, durable=True, max_connections=connections)
    except Exception as exc:  # ImportError, PgUnavailable: no server here
        return None, f"skipped ({exc})"
    return f"postgresql://postgres@/postgres?host={pg_server.root}&port={pg_server.port}", ""


def measure(store: str, streams: int, cycles: int, pace: float, src: Path, folder: Path) -> dict[str, dict[str, float]]:
    """Every scenario on one server process over ``store``, after a warm-up run."""
    with server(store, cycles, pace, src, folder) as url:
        asyncio.run(scenario(url, "runs", 1))  # warm-up: imports, the store's first writes
        found = {"runs": asyncio.run(scenario(url, "runs", streams))}
        found["replay"] = asyncio.run(scenario(url, "replay", streams, replay=found["runs"]["run_ids"]))  # type: ignore[arg-type]
        found["fanout"] = asyncio.run(scenario(url, "fanout", streams))
        found["paced"] = asyncio.run(scenario(url, "paced", streams))
        return found


def table(results: dict[str, Any], streams: int, cycles: int, pace: float, src: Path) -> str:
    """The figures as a markdown section (it replaces the previous one in ``bench/results.md``)."""
    lines = [
        f"<!-- {SECTION} -->",
        "## serve: SSE throughput and latency (`bench/serve.py`)",
        "",
        f"`python bench/serve.py --streams {streams} --cycles {cycles} --pace {pace}` (server source `{_shown(src)}`), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, load average {_load()} at the end. "
        "One `tether serve` process (uvicorn); the httpx clients in another process on the same machine. "
        f"**runs**: N runs of {cycles} instant tool cycles started at once, a stream each from the start (the "
        "server saturated: latency is the backlog); **replay**: N streams of those finished runs from the start; "
        f"**fan-out**: one run, N streams; **paced**: N runs of {PACED_CYCLES} cycles whose tool takes {pace} s, "
        "a stream each. Latency: a `tool_call_end` event's receipt by the client minus the tool's return (when "
        "the agent's in-process stream yields the result).",
        "",
        "| store | scenario | streams | committed events | wall s | events/s | latency median ms | p99 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for store, found in results.items():
        if isinstance(found, str):
            lines.append(f"| {store} | {found} |  |  |  |  |  |  |")
            continue
        for name, row in found.items():
            latency = "" if name == "replay" else f"{row['median_ms']:.1f} | {row['p99_ms']:.1f}"
            lines.append(
                f"| {store} | {name} | {row['streams']:.0f} | {row['events']:,.0f} | {row['wall_s']:.2f} | "
                f"{row['events_per_s']:,.0f} | {latency or ' | '} |"
            )
    lines.append(f"<!-- /{SECTION} -->")
    return "\n".join(lines) + "\n"


def _shown(src: Path) -> str:
    """``src`` relative to this checkout when it is inside it (no local paths in the report)."""
    try:
        return str(src.resolve().relative_to(ROOT))
    except ValueError:
        return "another checkout's src"


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def write_section(path: Path, section: str) -> None:
    """Put ``section`` into ``path`` in place of its previous ``bench/serve.py`` section (or at the end)."""
    sections.write_section(path, SECTION, section)


def main(
    streams: int = 100,
    cycles: int = 50,
    *,
    pace: float = 2.0,
    stores: tuple[str, ...] = ("sqlite", "postgres"),
    src: Path | None = None,
) -> dict[str, Any]:
    """Measure, print the table and return the figures by store (a string: why a store was skipped)."""
    src = src or ROOT / "src"
    results: dict[str, Any] = {}
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="tether-bench-serve-") as name:
        folder = Path(name)
        for store in stores:
            if store == "sqlite":
                results["SQLite"] = measure(str(folder / "runs.db"), streams, cycles, pace, src, folder)
            else:
                url, why = start_postgres(stack, connections=streams * 2 + 50)  # a lease holds a session per executing run
                results["PostgreSQL"] = why if url is None else measure(url, streams, cycles, pace, src, folder)
    print(table(results, streams, cycles, pace, src))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=100, help="concurrent SSE streams (default 100)")
    parser.add_argument("--cycles", type=int, default=50, help="tool cycles per run at full speed (default 50)")
    parser.add_argument("--pace", type=float, default=2.0, help="seconds the paced runs' tool takes (default 2)")
    parser.add_argument("--stores", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument("--src", type=Path, default=None, help="the tether source the server runs (default: this checkout's src)")
    parser.add_argument("--output", type=Path, default=None, help="write the table into this markdown file's bench/serve.py section")
    args = parser.parse_args()
    stores = tuple(s for s in args.stores.split(",") if s)
    found = main(args.streams, args.cycles, pace=args.pace, stores=stores, src=args.src)
    if args.output is not None:
        write_section(args.output, table(found, args.streams, args.cycles, args.pace, args.src or ROOT / "src"))
