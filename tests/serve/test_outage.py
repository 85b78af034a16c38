"""A real store outage under a real ``tether serve``: its PostgreSQL server stops while a run is
inside a tool and a client follows the run's event stream, then comes back.

While the database is away: the open stream ends with an ``error`` event (status 503: reconnect
with your last id), new work and reads are ``503`` JSON with ``Retry-After``, ``/readyz`` says
the store is unreachable; nothing logs a traceback or an error. Once it is back: the run is
taken over and finished (its tool, idempotent, runs again with the same key: it was in doubt),
a client reconnecting with its last id gets exactly the rest, and the request refused during the
outage stored nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.durable.pg import PgServer, PgUnavailable

from .conftest import ServerProcess, read_sse
from .test_restart import wait_for, wait_status
from .test_takeover import url_of


@pytest.fixture
def own_pg() -> Iterator[PgServer]:
    """A PostgreSQL cluster of this test's own (it is stopped and started again mid-test)."""
    try:
        import psycopg  # noqa: F401

        server = PgServer().start()
    except (ImportError, PgUnavailable) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required under CI: {exc}")
        pytest.skip(f"no PostgreSQL here: {exc}")
    try:
        yield server
    finally:
        server.stop()


def pg_ctl(server: PgServer, action: str) -> None:
    """Stop the cluster abruptly (its data kept) or start it again with its options."""
    if action == "stop":
        server._run(str(server.bindir / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "-w", "stop")
    else:
        options = f"-k {server.root} -c listen_addresses= -p {server.port} -c max_connections={server.max_connections} -c fsync=off"
        server._run(
            str(server.bindir / "pg_ctl"), "-D", str(server.data), "-l", str(server.root / "server.log"), "-o", options, "-w", "start"
        )


def unreachable(response: httpx.Response) -> None:
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json") and response.headers["retry-after"]
    assert response.json()["error"]["status"] == 503


def test_a_postgresql_outage_during_a_stream_is_503s_then_the_run_goes_on(tmp_path: Path, gate_dir: Path, own_pg: PgServer) -> None:
    server = ServerProcess(tmp_path, gate_dir, url_of(own_pg.conninfo()))
    try:
        server.start("--log-format", "json")
        url = server.url
        assert httpx.post(f"{url}/agents/worker/runs", json={"prompt": "go", "run_id": "o1"}).status_code == 202
        wait_for(gate_dir / "entered-slow")
        streamed: list[list[dict[str, Any]]] = []

        def listen() -> None:
            with httpx.stream("GET", f"{url}/runs/o1/events", timeout=60) as response:
                streamed.append(read_sse(response, until=lambda event: event["type"] == "error"))

        listener = threading.Thread(target=listen)
        listener.start()
        time.sleep(0.5)  # connected: its committed events so far are sent
        pg_ctl(own_pg, "stop")  # the database goes away while the stream is open and the tool runs

        listener.join(30)
        assert not listener.is_alive() and len(streamed) == 1
        first = streamed[0]
        assert first[-1]["type"] == "error" and first[-1]["data"]["status"] == 503  # reconnect later with the last id
        unreachable(httpx.post(f"{url}/agents/chat/runs", json={"prompt": "hi", "run_id": "o2"}))
        unreachable(httpx.get(f"{url}/runs/o1"))
        unreachable(httpx.get(f"{url}/readyz"))
        assert httpx.get(f"{url}/healthz").status_code == 200  # the process itself is fine

        pg_ctl(own_pg, "start")
        (gate_dir / "release").write_text("")
        run = wait_status(url, "o1", "finished", timeout=60)
        assert run["answer"] == "all done"
        last = [event["id"] for event in first if "id" in event][-1]
        with httpx.stream("GET", f"{url}/runs/o1/events", headers={"last-event-id": last}, timeout=30) as response:
            rest = read_sse(response)
        with httpx.stream("GET", f"{url}/runs/o1/events", timeout=30) as response:
            whole = [event["id"] for event in read_sse(response) if "id" in event]
        seen = [event["id"] for event in first + rest if "id" in event]
        assert seen == whole  # nothing missing, nothing repeated
        assert rest[-1] == {"type": "end", "data": {"status": "finished"}}
        keys = (gate_dir / "calls.log").read_text().split()
        assert keys[0::2] == ["slow", "slow"] and keys[1] == keys[3] == "o1/t-slow"  # in doubt: run again, same key
        assert httpx.get(f"{url}/runs/o2").status_code == 404  # refused during the outage: nothing stored
        assert httpx.get(f"{url}/readyz").json() == {"status": "ready"}
    finally:
        server.stop()
    logged = server.log.read_text()
    assert "Traceback" not in logged, logged[-3000:]
    lines = [json.loads(line) for line in logged.splitlines() if line.startswith("{")]
    assert [line for line in lines if line.get("level") in ("error", "critical")] == [], logged[-3000:]
