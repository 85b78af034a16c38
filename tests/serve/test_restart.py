"""A real ``tether serve`` process on loopback: SIGKILL it inside a tool, start it again on the
same SQLite store, and the runs finish by themselves; a client reconnecting with its
Last-Event-ID gets every committed event after it exactly once, in order."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from .conftest import ServerProcess, read_sse


def wait_for(path: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def wait_status(url: str, run_id: str, wanted: str, timeout: float = 20) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while True:
        run = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] == wanted:
            return dict(run)
        assert time.monotonic() < deadline, f"run {run_id} stayed {run['status']}, never {wanted}"
        time.sleep(0.05)


def test_killed_inside_a_tool_the_restarted_server_finishes_the_runs_and_streams_resume(server: ServerProcess) -> None:
    server.start()
    url = server.url
    assert httpx.post(f"{url}/agents/worker/runs", json={"prompt": "write the report", "run_id": "r1"}).status_code == 202
    assert httpx.post(f"{url}/agents/payer/runs", json={"prompt": "charge 5", "run_id": "r2"}).status_code == 202
    with httpx.stream("GET", f"{url}/runs/r1/events", timeout=20) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        first = read_sse(response, until=lambda event: event["type"] == "tool_call_start")
    wait_for(server.gate / "entered-slow")
    wait_for(server.gate / "entered-charge")
    assert [e["type"] for e in first] == ["status", "message", "message", "tool_call_start"]
    assert first[-1]["data"] == {"toolUseId": "t-slow", "name": "slow", "input": {"what": "report"}}
    last_id = first[-1]["id"]

    server.kill()  # inside both tools
    (server.gate / "release").write_text("")
    server.start()

    # r1: the idempotent tool is in doubt, runs again with the same key, and the run finishes by itself.
    with httpx.stream("GET", f"{url}/runs/r1/events", headers={"Last-Event-ID": last_id}, timeout=20) as response:
        after = read_sse(response)
    with httpx.stream("GET", f"{url}/runs/r1/events", timeout=20) as response:
        everything = read_sse(response)
    committed = [e for e in everything if "id" in e]
    ids = [e["id"] for e in committed]
    assert len(ids) == len(set(ids))
    position = ids.index(last_id)
    assert [e for e in after if "id" in e] == committed[position + 1 :]  # no gap, no duplicate, in order
    assert [e for e in first if "id" in e] + [e for e in after if "id" in e] == committed
    kinds = [e["type"] for e in after]
    assert "in_doubt" in kinds and kinds[-1] == "end"
    assert next(e for e in after if e["type"] == "in_doubt")["data"] == {"toolUseId": "t-slow", "name": "slow", "action": "rerun"}
    result = next(e for e in after if e["type"] == "result")["data"]
    assert result["status"] == "finished" and result["answer"] == "all done"
    assert next(e for e in after if e["type"] == "tool_call_end")["data"]["content"] == [{"text": "slow done"}]
    run = wait_status(url, "r1", "finished")
    assert run["answer"] == "all done" and run["agent"] == "worker"

    # r2: the non-idempotent tool is not re-run: the run waits for a decision, answered over HTTP.
    run = wait_status(url, "r2", "interrupted")
    (question,) = run["interrupts"]  # type: ignore[misc]
    assert question["name"] == "tether.in_doubt" and question["reason"]["idempotency_key"] == "r2/t-charge"
    calls = (server.gate / "calls.log").read_text().split("\n")
    assert calls.count("charge r2/t-charge") == 1 and calls.count("slow r1/t-slow") == 2  # one in-doubt re-run, same key
    answered = httpx.post(f"{url}/runs/r2/interrupts", json={"responses": {question["id"]: "already charged"}})
    assert answered.status_code == 202, answered.text
    run = wait_status(url, "r2", "finished")
    assert run["answer"] == "charged"
    assert (server.gate / "calls.log").read_text().split("\n").count("charge r2/t-charge") == 1  # the recorded answer, no re-run
    with httpx.stream("GET", f"{url}/runs/r2/events", timeout=20) as response:
        events = read_sse(response)
    kinds = [e["type"] for e in events]
    assert kinds.count("interrupt") == 1 and kinds[-2:] == ["result", "end"]
    decisions = [e["data"] for e in events if e["type"] == "in_doubt"]
    assert decisions[0] == {"toolUseId": "t-charge", "name": "charge", "action": "interrupt"}, decisions


def test_sigterm_closes_the_streams_and_the_next_server_resumes_the_stopped_run(server: ServerProcess) -> None:
    """A tool that outlasts the grace period: the run is handed over at its last stored step (the
    call in doubt for the next server, as after a crash)."""
    import signal
    import threading

    from tether.durable import SQLiteStore

    server.start("--grace", "0.5")
    url = server.url
    assert httpx.post(f"{url}/agents/worker/runs", json={"prompt": "go", "run_id": "t1"}).status_code == 202
    wait_for(server.gate / "entered-slow")
    streamed: list[list[dict[str, object]]] = []

    def listen() -> None:
        try:
            with httpx.stream("GET", f"{url}/runs/t1/events", timeout=60) as response:
                streamed.append(read_sse(response))
        except httpx.RemoteProtocolError:
            streamed.append([])  # the server closed the stream mid-way; a client reconnects with its last id

    listener = threading.Thread(target=listen)
    listener.start()
    time.sleep(0.3)  # let the stream connect (not a timing assertion: either way the run is stopped below)
    assert server.process is not None
    server.process.send_signal(signal.SIGTERM)
    listener.join(30)
    assert not listener.is_alive() and len(streamed) == 1  # the server closed the stream at shutdown
    store = SQLiteStore(server.store)
    try:
        deadline = time.monotonic() + 20
        while {run.run_id: run.status for run in store.list_runs()}.get("t1") != "stopped":
            assert time.monotonic() < deadline, "the shut-down server did not record the run as stopped"
            time.sleep(0.05)
    finally:
        store.close()
    (server.gate / "release").write_text("")  # the blocked tool thread lets the old process exit
    assert server.process.wait(30) in (0, -signal.SIGTERM)  # uvicorn ends by re-raising the signal it handled
    log = server.log.read_text()
    assert "ERROR" not in log and "Traceback" not in log and "event=run.handed_over run_id=t1" in log
    server.start()
    run = wait_status(url, "t1", "finished")
    assert run["answer"] == "all done"
