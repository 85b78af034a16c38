"""A fleet: two real ``tether serve`` processes on one PostgreSQL store, 50 runs spread over
both, one process SIGKILLed while every run is inside a tool. The survivor takes the dead
one's runs over through their leases and all 50 finish; no side effect ran twice except the
calls the runs' in-doubt records say were re-run; and each run's event stream, read from the
survivor from the start while all this happens, holds every committed event once, in order."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from tether.durable.postgres import PostgresStore
from tether.serve import StepEvents

from .conftest import ServerProcess, read_sse
from .test_takeover import url_of

RUNS = 50


def wait_until(what: str, check: Any, timeout: float = 30) -> None:
    """Wait for ``check()`` to hold (a liveness deadline, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)


def effects(gate: Path) -> list[tuple[str, int, int]]:
    """The side-effect log: (idempotency key, step, pid) per executed call."""
    path = gate / "effects.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(key, int(step), int(pid)) for key, step, pid in (line.split() for line in lines)]


def stream(url: str, run_id: str) -> list[dict[str, Any]]:
    with httpx.stream("GET", f"{url}/runs/{run_id}/events", timeout=60) as response:
        assert response.status_code == 200, run_id
        return read_sse(response)


def stored_events(store: PostgresStore, run_id: str) -> list[dict[str, Any]]:
    """The committed events of the run derived from all its stored steps in one pass: what its
    stream must hold. A step's messages are those it added that its live conversation holds."""
    steps = store.history(run_id)
    messages = dict(enumerate(store.messages(run_id, 0, steps[-1].seq)))
    derive = StepEvents()
    out: list[dict[str, Any]] = []
    for step in steps:
        start = max(derive.seq, int(step.head["start_seq"]))
        out.extend(dict(event) for event in derive.events(step, {seq: messages[seq] for seq in range(start, step.seq)}))
    return out


def test_fifty_runs_on_two_servers_survive_a_kill(tmp_path: Path, gate_dir: Path, pg_conninfo: str) -> None:
    store_url = url_of(pg_conninfo)
    doomed, survivor = (ServerProcess(tmp_path, gate_dir, store_url, "registry_module:FLEET") for _ in range(2))
    ids = [f"f{i:02d}" for i in range(RUNS)]
    home = {run_id: (doomed if i % 2 == 0 else survivor) for i, run_id in enumerate(ids)}
    try:
        with ThreadPoolExecutor(max_workers=RUNS) as pool:
            list(pool.map(ServerProcess.start, [doomed, survivor]))
            started = list(
                pool.map(lambda r: httpx.post(f"{home[r].url}/agents/fleet/runs", json={"prompt": "go", "run_id": r}, timeout=30), ids)
            )
            assert [s.status_code for s in started] == [202] * RUNS, [s.text for s in started if s.status_code != 202]
            streams = {run_id: pool.submit(stream, survivor.url, run_id) for run_id in ids}  # from the start, on the survivor

            held = lambda: {key for key, step, _ in effects(gate_dir) if step == 2}  # noqa: E731
            wait_until("every run inside its held tool", lambda: len(held()) == RUNS)
            assert doomed.process is not None
            doomed_pid = doomed.process.pid
            doomed.kill()  # 25 runs die inside a tool
            (gate_dir / "release").write_text("")

            def finished() -> bool:
                runs = httpx.get(f"{survivor.url}/runs", params={"limit": 1000}).json()["runs"]
                return sum(run["status"] == "finished" for run in runs) == RUNS

            wait_until("all 50 runs finished on the survivor", finished)  # each with its answer: checked in its stream's result
            seen = {run_id: future.result(timeout=60) for run_id, future in streams.items()}

        store = PostgresStore(pg_conninfo)
        try:
            for run_id in ids:
                events = seen[run_id]
                committed = [e for e in events if "id" in e]
                positions = [tuple(int(part) for part in e["id"].split(".")) for e in committed]
                assert positions == sorted(set(positions)), f"{run_id}: ids not strictly increasing: {[e['id'] for e in committed]}"
                assert committed == stored_events(store, run_id), f"{run_id}: the stream is not every committed event once, in order"
                assert committed[-1]["type"] == "result" and committed[-1]["data"]["answer"] == "fleet done"
                assert events[-1] == {"type": "end", "data": {"status": "finished"}}
                calls = [e["data"]["toolUseId"] for e in committed if e["type"] == "tool_call_end"]
                assert calls == ["t-first", "t-second"], (run_id, calls)
        finally:
            store.close()

        log = effects(gate_dir)
        counts = Counter(key for key, _, _ in log)
        assert set(counts) == {f"{r}/{t}" for r in ids for t in ("t-first", "t-second")}  # every call ran
        decided = [(run_id, e["data"]) for run_id in ids for e in seen[run_id] if e["type"] == "in_doubt"]
        reruns = {f"{run_id}/{data['toolUseId']}" for run_id, data in decided if data["action"] == "rerun"}
        twice = {key for key, count in counts.items() if count > 1}
        assert twice <= reruns, f"side effects ran twice outside in-doubt re-runs: {sorted(twice - reruns)}"
        assert all(count <= 2 for count in counts.values()), counts
        assert {key.split("/")[0] for key in reruns} == {r for r in ids if home[r] is doomed}  # exactly the killed server's runs
        assert {f"{r}/t-second" for r in ids if home[r] is doomed} <= twice  # each was inside its tool: re-run, same key
        assert survivor.process is not None
        for key in twice:  # once by the killed process, once by the survivor
            assert sorted(pid for k, _, pid in log if k == key) == sorted([doomed_pid, survivor.process.pid]), key
    finally:
        doomed.stop()
        survivor.stop()
