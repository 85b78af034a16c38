"""Two server processes on one PostgreSQL store: a run executes in one of them (its lease), and
when that one is SIGKILLed inside a tool, the other takes the run over by itself and finishes it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from .conftest import ServerProcess, read_sse
from .test_restart import wait_for, wait_status


def url_of(conninfo: str) -> str:
    fields = dict(re.findall(r"(\w+)=(\S+)", conninfo))
    return f"postgresql://{fields['user']}@/{fields['dbname']}?host={fields['host']}&port={fields['port']}"


def test_a_second_server_takes_over_the_run_of_a_killed_one(tmp_path: Path, gate_dir: Path, pg_conninfo: str) -> None:
    store = url_of(pg_conninfo)
    first, second = ServerProcess(tmp_path, gate_dir, store), ServerProcess(tmp_path, gate_dir, store)
    try:
        first.start()
        second.start()
        assert httpx.post(f"{first.url}/agents/worker/runs", json={"prompt": "go", "run_id": "p1"}).status_code == 202
        wait_for(gate_dir / "entered-slow")
        (gate_dir / "entered-slow").unlink()
        run = httpx.get(f"{second.url}/runs/p1").json()
        assert run["status"] == "running"  # the other process sees the live owner's lease
        assert httpx.post(f"{second.url}/runs/p1/cancel").status_code == 409  # and does not execute it
        first.kill()
        wait_for(gate_dir / "entered-slow")  # the second server took the stalled run over: the tool runs again
        (gate_dir / "release").write_text("")
        assert wait_status(second.url, "p1", "finished")["answer"] == "all done"
        assert (gate_dir / "calls.log").read_text().split() == ["slow", "p1/t-slow", "slow", "p1/t-slow"]  # one in-doubt re-run
        with httpx.stream("GET", f"{second.url}/runs/p1/events", timeout=20) as response:
            kinds = [e["type"] for e in read_sse(response)]
        assert kinds.count("in_doubt") == 1 and kinds[-2:] == ["result", "end"]
    finally:
        first.stop()
        second.stop()
