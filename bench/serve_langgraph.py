"""Tether serve vs LangGraph's Agent Server (in-memory runtime), side by side in one run.

Run: ``python bench/serve_langgraph.py`` (``--quick``: 5 and 10 concurrent runs, a smoke test;
``--concurrency 50,200``; ``--stores sqlite,postgres``; ``--no-peer``: Tether only).

Both servers are real processes on loopback, started here and stopped at the end. The same work
on both: a scripted zero-latency model and one tool, ``--cycles`` (default 5) tool cycles per run.

- **Tether**: ``tether serve`` (``bench/serve.py``'s ``ticker`` agent), SQLite or PostgreSQL
  (a throwaway local server, skipped with the reason when it cannot start);
  ``POST /agents/ticker/runs`` then ``GET /runs/{id}/events``.
- **LangGraph**: ``langgraph-api`` + ``langgraph-runtime-inmem`` (``langgraph_api.cli.run_server``,
  the runtime ``langgraph dev`` uses; in memory, nothing written to disk, no key, no network)
  serving ``bench/peers/langgraph_server_graph.py``; ``POST /threads`` then
  ``POST /threads/{id}/runs/stream`` (``stream_mode=updates``, ``stream_resumable``), with
  ``n_jobs_per_worker`` = the concurrency (so its queue does not cap it). Installed only into its
  own environment, ``$TETHER_BENCH_CACHE/langgraph_server`` (default ``~/.cache/tether-bench``).

Per server and concurrency N: N runs started at once; **runs/s** = N / wall time (first request to
the last stream's end); **first event** = request sent to the first *committed* event received
(Tether: the first SSE event with an ``id``; LangGraph: the first ``updates`` event, written after
the first superstep — its ``metadata`` event precedes any work and is not counted); **reconnect**
= a new stream of each finished run resuming after its first event id (``Last-Event-ID``) to the
first replayed event; **CPU/run** = the server process's user+system CPU (``/proc``) over the
measured runs / N. Median and p99 in ms. Nothing is asserted; timings vary with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER_PINS = ("langgraph-api==0.16.7", "langgraph-runtime-inmem==0.36.7")
GRAPH = HERE / "peers" / "langgraph_server_graph.py"


def _bench_serve() -> Any:
    """``bench/serve.py`` (the Tether server and agents), loaded from its file under a private
    module name: never as ``serve``, which would shadow the test package ``tests/serve``."""
    name = "tether_bench_serve"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


serve = _bench_serve()


def cache_dir() -> Path:
    return Path(os.environ.get("TETHER_BENCH_CACHE") or Path.home() / ".cache" / "tether-bench")


def peer_python(log: Any = print) -> str:
    """The interpreter of the LangGraph server's own environment, created and installed if needed."""
    env = cache_dir() / "langgraph_server"
    python = env / "bin" / "python"
    marker = env / ".tether-bench-pins"
    wanted = "\n".join(PEER_PINS) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    base = getattr(sys, "_base_executable", None) or sys.executable
    log(f"creating {env} ({', '.join(PEER_PINS)})")
    subprocess.run([base, "-m", "venv", str(env)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_PINS], check=True, capture_output=True)
    marker.write_text(wanted)
    return str(python)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not answer within 60 s: {log.read_text()[-2000:]}")
        time.sleep(0.1)


@contextlib.contextmanager
def langgraph_server(python: str, jobs: int, cycles: int, folder: Path) -> Iterator[tuple[str, int]]:
    """The LangGraph in-memory Agent Server in a subprocess; yields its URL and pid."""
    port = serve.free_port()
    code = (
        "import sys; from langgraph_api.cli import run_server; "
        f"run_server(host='127.0.0.1', port={port}, graphs={{'ticker': {str(GRAPH) + ':graph'!r}}}, n_jobs_per_worker={jobs}, "
        "open_browser=False, disable_persistence=True, server_level='WARNING')"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")}
    env.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false", LOG_LEVEL="WARNING", TETHER_BENCH_SERVE_CYCLES=str(cycles))
    log = folder / f"langgraph-{port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([python, "-c", code], cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(process, url + "/ok", log)
        yield url, process.pid
    finally:
        process.kill()
        process.wait(10)


@contextlib.contextmanager
def tether_server(store: str, cycles: int, folder: Path) -> Iterator[tuple[str, int]]:
    """``tether serve`` (bench/serve.py's server) on ``store``; yields its URL and pid."""
    with serve.server(store, cycles, 1.0, ROOT / "src", folder) as url:
        yield url, serve.LAST_PID


async def events(response: Any) -> Any:
    """(event kind, id) of each SSE event as it ends (a blank line; LangGraph sends ``id:`` after ``data:``)."""
    kind, event_id, has_data = "", "", False
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            has_data = True
        elif line == "" and has_data:
            yield kind, event_id
            kind, event_id, has_data = "", "", False


def committed(kind: str, event_id: str, peer: str) -> bool:
    """Tether: every event with an id; LangGraph: its ``updates`` events (a superstep's writes)."""
    return bool(event_id) and (kind == "updates" if peer == "langgraph" else kind not in ("end", "error"))


async def sse(response: Any, peer: str, first: list[float], began: float, *, only_first: bool = False) -> tuple[str, int]:
    """Read an SSE stream to its end (or its first committed event when ``only_first``); appends
    (first committed event - began) to ``first``; returns its id and the count of committed events."""
    response.raise_for_status()
    first_id, count = "", 0
    async for kind, event_id in events(response):
        if committed(kind, event_id, peer):
            count += 1
            if not first_id:
                first_id = event_id
                first.append(time.perf_counter() - began)
                if only_first:
                    break
        if kind in ("end", "error"):
            break
    return first_id, count


async def round_of(peer: str, url: str, n: int) -> dict[str, Any]:
    """N runs at once on one server, then a reconnect to each; the figures."""
    import httpx

    first: list[float] = []
    again: list[float] = []
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=600) as client:

        async def one(i: int) -> tuple[str, str, int]:
            began = time.perf_counter()
            if peer == "langgraph":
                thread = (await client.post(f"{url}/threads", json={})).json()["thread_id"]
                body = {
                    "assistant_id": "ticker",
                    "input": {"messages": [{"role": "user", "content": "tick"}]},
                    "stream_mode": ["updates"],
                    "stream_resumable": True,
                }
                async with client.stream("POST", f"{url}/threads/{thread}/runs/stream", json=body, timeout=600) as r:
                    where = r.headers.get("content-location", "")  # /threads/{t}/runs/{r}
                    first_id, count = await sse(r, peer, first, began)
                return where + "/stream", first_id, count
            run_id = f"vs-{time.monotonic_ns()}-{i}"
            (await client.post(f"{url}/agents/ticker/runs", json={"prompt": "tick", "run_id": run_id})).raise_for_status()
            async with client.stream("GET", f"{url}/runs/{run_id}/events", timeout=600) as r:
                first_id, count = await sse(r, peer, first, began)
            return f"/runs/{run_id}/events", first_id, count

        began = time.perf_counter()
        done = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - began

        async def reconnect(path: str, after: str) -> None:
            began = time.perf_counter()
            async with client.stream("GET", url + path, headers={"last-event-id": after}, timeout=600) as r:
                await sse(r, peer, again, began, only_first=True)

        await asyncio.gather(*(reconnect(path, after) for path, after, _ in done))
    return {"runs": n, "wall_s": wall, "runs_per_s": n / wall, "events": sum(c for _, _, c in done), "first": first, "again": again}


def pct(values: list[float], q: float) -> float:
    ms = sorted(v * 1000 for v in values)
    return ms[min(len(ms) - 1, int(len(ms) * q))] if ms else float("nan")


def measure(peer: str, url: str, pid: int, levels: list[int]) -> dict[int, dict[str, Any]]:
    asyncio.run(round_of(peer, url, 2))  # warm-up: imports, first writes
    found: dict[int, dict[str, Any]] = {}
    for n in levels:
        cpu = cpu_seconds(pid)
        row = asyncio.run(round_of(peer, url, n))
        row["cpu_ms_per_run"] = (cpu_seconds(pid) - cpu) * 1000 / n  # includes the reconnects
        found[n] = row
    return found


def versions(peer_py: str | None) -> str:
    from importlib.metadata import version

    text = f"tether {version('tether')}"
    if peer_py:
        names = ("langgraph-api", "langgraph-runtime-inmem", "langgraph")
        code = f"from importlib.metadata import version as v; print(', '.join(f'{{p}} {{v(p)}}' for p in {names!r}))"
        done = subprocess.run([peer_py, "-c", code], capture_output=True, text=True, check=False)
        text += ", " + (done.stdout.strip() or "langgraph versions unknown")
    return text


def main(levels: list[int], cycles: int = 5, stores: tuple[str, ...] = ("sqlite", "postgres"), peer: bool = True) -> dict[str, Any]:
    results: dict[str, Any] = {}
    peer_py: str | None = None
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="tether-bench-vs-") as name:
        folder = Path(name)
        for store in stores:
            label = f"Tether ({'SQLite' if store == 'sqlite' else 'PostgreSQL'})"
            if store == "sqlite":
                target = str(folder / "runs.db")
            else:
                pg_url, why = serve.start_postgres(stack, connections=max(levels) * 2 + 50)
                if pg_url is None:
                    results[label] = why
                    continue
                target = pg_url
            try:
                with tether_server(target, cycles, folder) as (url, pid):
                    results[label] = measure("tether", url, pid, levels)
            except Exception as exc:  # a server that fails is reported, not hidden
                results[label] = f"failed: {exc!s:.300}"
        if peer:
            label = "LangGraph Agent Server (in-memory)"
            try:
                peer_py = peer_python()
                with langgraph_server(peer_py, max(levels), cycles, folder) as (url, pid):
                    results[label] = measure("langgraph", url, pid, levels)
            except Exception as exc:
                results[label] = f"failed to start or run: {exc!s:.300}"
    print(report(results, levels, cycles, versions(peer_py)))
    return results


def report(results: dict[str, Any], levels: list[int], cycles: int, described: str) -> str:
    lines = [
        f"{len(os.sched_getaffinity(0))} CPUs (nproc), load average {serve._load()} at the end, {cycles} tool cycles per run, {described}",
        "",
        "| server | concurrent runs | runs/s | first event p50 ms | p99 ms | reconnect p99 ms | server CPU ms/run | committed events |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, found in results.items():
        if isinstance(found, str):
            lines.append(f"| {label} | {found} |  |  |  |  |  |  |")
            continue
        for n, r in found.items():
            lines.append(
                f"| {label} | {n} | {r['runs_per_s']:.1f} | {pct(r['first'], 0.5):.1f} | {pct(r['first'], 0.99):.1f} | "
                f"{pct(r['again'], 0.99):.1f} | {r['cpu_ms_per_run']:.1f} | {r['events']} |"
            )
    lines.append("")
    ours = results.get("Tether (SQLite)")
    theirs = results.get("LangGraph Agent Server (in-memory)")
    top = max(levels)
    if isinstance(ours, dict) and isinstance(theirs, dict) and ours[top]["first"] and theirs[top]["first"]:
        a, b = ours[top], theirs[top]
        ratio = a["runs_per_s"] / b["runs_per_s"]
        holds = ratio >= 2 and pct(a["first"], 0.99) <= pct(b["first"], 0.99)
        lines.append(
            f"Goal at {top} concurrent runs (Tether SQLite >= 2x LangGraph's runs/s, p99 first event <= LangGraph's): "
            f"{'HOLDS' if holds else 'DOES NOT HOLD'} (runs/s ratio {ratio:.2f}, p99 first event "
            f"{pct(a['first'], 0.99):.1f} vs {pct(b['first'], 0.99):.1f} ms)"
        )
    else:
        lines.append(f"Goal at {top} concurrent runs: not evaluated (a server has no figures)")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--concurrency", default="50,200", help="comma-separated concurrent runs (default 50,200)")
    parser.add_argument("--cycles", type=int, default=5, help="tool cycles per run (default 5)")
    parser.add_argument("--stores", default="sqlite,postgres", help="Tether stores: sqlite, postgres")
    parser.add_argument("--quick", action="store_true", help="smoke test: 5 and 10 concurrent runs, SQLite only")
    parser.add_argument("--no-peer", action="store_true", help="Tether only (no LangGraph environment)")
    args = parser.parse_args()
    levels = [5, 10] if args.quick else [int(x) for x in args.concurrency.split(",") if x]
    stores = ("sqlite",) if args.quick else tuple(s for s in args.stores.split(",") if s)
    main(levels, args.cycles, stores, peer=not args.no_peer)
