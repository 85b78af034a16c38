"""Hostile input over every endpoint: lone surrogates, malformed Host and Origin headers, odd
paths, queries and headers, slow headers and bodies, clients that vanish mid-body, a store outage
during an open stream. Every answer is a 4xx (or a 503 for the outage) in JSON, nothing logs a
traceback or an error, and no stored row changes."""

from __future__ import annotations

import contextlib
import logging
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .conftest import ServerProcess, read_sse
from .test_agui import agui_input, post
from .test_app import BASE
from .test_health import Outage
from .test_restart import wait_for

SURROGATE = b'"\\ud800"'  # valid JSON, no valid text: the escape as a client sends it


def rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the SQLite store at ``path``."""
    with sqlite3.connect(path) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {table: sorted(db.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr) for table in tables}


def refused(response: httpx.Response, *allowed: int) -> None:
    """A refusal: a 4xx (or one of ``allowed``) as ``{"error": {"status", "message"}}``."""
    assert 400 <= response.status_code < 500 or response.status_code in allowed, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    assert response.json()["error"]["status"] == response.status_code


def no_fault_logged(caplog: pytest.LogCaptureFixture) -> None:
    faults = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert faults == [], [r.getMessage() for r in faults]


ENDPOINTS = [
    ("GET", "/runs/{run}"),
    ("DELETE", "/runs/{run}"),
    ("GET", "/runs/{run}/events"),
    ("GET", "/runs/{run}/view"),
    ("POST", "/runs/{run}/interrupts"),
    ("POST", "/runs/{run}/cancel"),
    ("POST", "/runs/{run}/retry"),
    ("POST", "/runs/{run}/compensate"),
    ("POST", "/runs/{run}/fork"),
    ("GET", "/agents/asker/agui/{run}"),
]
BAD_IDS = ["%ED%A0%80", "%F0%28", "%2E%2E", "a%00b", "x" * 200, "%20", "a%0Ab"]
BAD_HOSTS = ["127.0.0.1:80@evil.example", "evil.example", "[::1", "127.0.0.1:99999", "localhost:80/x", "127.0.0.1 evil", "127.0.0.1:8o"]
BAD_ORIGINS = ["null", "http://evil.example", "http://127.0.0.1:8000@evil.example", "javascript:alert(1)", "http://127.0.0.1:9"]


def test_hostile_requests_are_4xx_json_log_no_fault_and_change_nothing(
    tmp_path: Path, store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    app = create_app(registry_module.AGENTS, store, scan_interval=60)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
        assert client.post("/agents/asker/runs", json={"prompt": "go", "run_id": "q1"}).status_code == 202
        assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "f1"}).status_code == 202
        deadline = time.monotonic() + 20
        while {r.run_id: r.status for r in store.list_runs()} != {"q1": "interrupted", "f1": "finished"}:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        before = rows(tmp_path / "runs.db")
        (pending,) = client.get("/runs/q1").json()["interrupts"]
        json_headers = {"content-type": "application/json"}

        # lone surrogates, in every body that reaches a run
        for path, body in [
            ("/agents/chat/runs", b'{"prompt": ' + SURROGATE + b"}"),
            ("/agents/chat/runs", b'{"prompt": "hi", "run_id": ' + SURROGATE + b"}"),
            ("/agents/chat/runs", b'{"prompt": [{"text": ' + SURROGATE + b"}]}"),
            ("/agents/chat/runs", b'{"prompt": "hi", ' + SURROGATE + b": 1}"),
            ("/runs/q1/interrupts", b'{"responses": {"' + pending["id"].encode() + b'": ' + SURROGATE + b"}}"),
            ("/runs/q1/interrupts", b'{"responses": {' + SURROGATE + b': "yes"}}'),
            ("/runs/f1/fork", b'{"at": 1, "run_id": ' + SURROGATE + b"}"),
        ]:
            refused(client.post(path, content=body, headers=json_headers))
        agui = agui_input("f1", "r-hostile", "PLACEHOLDER")
        raw = httpx.Request("POST", "http://x", json=agui).content.replace(b'"PLACEHOLDER"', SURROGATE)
        refused(client.post("/agents/chat/agui", content=raw, headers=json_headers))

        # malformed bodies and media types
        for body, headers in [
            (b"{", json_headers),
            (b"[]", json_headers),
            (b'{"prompt": "hi"}', {"content-type": "text/plain"}),
            (b"\xff\xfe", json_headers),
            (b'{"prompt": "hi", "extra": 1}', json_headers),
            (b"[" * 100_000, json_headers),
        ]:
            refused(client.post("/agents/chat/runs", content=body, headers=headers))
            refused(client.post("/agents/chat/agui", content=body, headers=headers))

        # odd run ids in every path that takes one
        for method, template in ENDPOINTS:
            for bad in BAD_IDS:
                refused(client.request(method, template.format(run=bad), json={"responses": {}}))

        # odd queries and headers
        for path, headers in [
            ("/runs?status=%ED%A0%80", {}),
            ("/runs?limit=-1", {}),
            ("/runs?offset=1e9", {}),
            ("/runs/f1/events?after=%ED%A0%80", {}),
            ("/runs/f1/events?after=1.2.3", {}),
            ("/runs/f1/events", {"last-event-id": b"\xff\xfe"}),
        ]:
            refused(client.get(path, headers=headers))
        for key in [b"\xe9t\xe9", b"x" * 300, b"a\tb", b""]:
            refused(client.post("/agents/chat/runs", json={"prompt": "hi"}, headers={"idempotency-key": key}))

        # malformed Host headers (DNS rebinding, smuggled user info) on every endpoint, and foreign Origins
        for method, template in [*ENDPOINTS, ("GET", "/runs"), ("POST", "/agents/chat/runs"), ("GET", "/"), ("GET", "/agents")]:
            for host in BAD_HOSTS:
                response = client.request(method, template.format(run="f1"), headers={"host": host}, json={"prompt": "hi"})
                assert response.status_code == 421, (host, response.text)
                refused(response)
        for origin in BAD_ORIGINS:
            for method, template in [("POST", "/agents/chat/runs"), ("POST", "/runs/q1/interrupts"), ("DELETE", "/runs/f1")]:
                response = client.request(method, template.format(run="f1"), headers={"origin": origin}, json={"prompt": "hi"})
                assert response.status_code == 403, (origin, response.text)
                refused(response)
        assert rows(tmp_path / "runs.db") == before
    no_fault_logged(caplog)


def test_a_store_outage_during_a_stream_is_an_error_event_and_new_work_a_503(
    tmp_path: Path, store: SQLiteStore, gate_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    outage = Outage(store)
    app = create_app(registry_module.AGENTS, outage, scan_interval=60, poll_interval=0.05)  # type: ignore[arg-type]
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client, released(gate_dir):
        assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "o1"}).status_code == 202
        wait_for(gate_dir / "entered-slow")
        before = rows(tmp_path / "runs.db")

        def cut(event: dict[str, Any]) -> bool:
            if event["type"] == "tool_call_start":
                outage.down = True  # the database goes away while the stream is open
            return False

        with client.stream("GET", "/runs/o1/events") as response:
            streamed = read_sse(response, until=cut)  # to the stream's close
        assert [e["type"] for e in streamed][-2:] == ["tool_call_start", "error"]
        assert streamed[-1]["data"]["status"] == 503 and "reconnect" in streamed[-1]["data"]["message"]
        for response in (
            client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "o2"}),
            client.post("/agents/chat/runs", json={"prompt": "hi"}, headers={"idempotency-key": "k1"}),
            client.get("/runs/o1"),
            client.get("/runs"),
            client.post("/runs/o1/retry"),
            client.delete("/runs/o1"),
        ):
            refused(response, 503)
            if response.status_code == 503:
                assert response.headers["retry-after"] == "5"
        assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "o2"}).status_code == 503
        outage.down = False
        assert rows(tmp_path / "runs.db") == before
        (gate_dir / "release").write_text("")
        deadline = time.monotonic() + 20
        while client.get("/runs/o1").json()["status"] != "finished":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    no_fault_logged(caplog)


def test_a_store_outage_during_an_agui_stream_is_a_run_error_event_not_a_traceback(
    store: SQLiteStore, gate_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The AG-UI stream of a run whose store goes away ends with RUN_ERROR (``http.503``): the
    response had started, so no status can be sent, and nothing is logged as a server fault."""
    caplog.set_level(logging.INFO)
    outage = Outage(store)
    app = create_app(registry_module.AGENTS, outage, scan_interval=60, poll_interval=0.05)  # type: ignore[arg-type]
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client, released(gate_dir):

        def cut(event: dict[str, Any]) -> bool:
            if event["type"] == "TOOL_CALL_START":
                outage.down = True  # the database goes away while the stream is open
            return False

        events = post(client, "worker", agui_input("ag-out", "r1", "go"), until=cut)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "http.503", events[-1]
        assert "reconnect" in events[-1]["message"]
        outage.down = False
    no_fault_logged(caplog)


def test_slow_headers_slow_bodies_and_vanishing_clients_hold_nothing(server: ServerProcess) -> None:
    server.start("--header-timeout", "1", "--body-timeout", "1")
    before = rows(Path(server.store))
    slow: list[socket.socket] = []
    answers: list[bytes] = []
    try:
        for _ in range(4):  # a bounded slowloris: a few sockets sending their headers a byte at a time
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
            sock.sendall(b"GET /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(sock)
        bodies = []  # a few slow bodies: the headers say 100 bytes, 10 come
        for path in ("/agents/chat/runs", "/agents/chat/agui"):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
            head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            sock.sendall(head.encode() + b'{"prompt":')
            bodies.append(sock)
        for sock in [*slow, *bodies]:
            answers.append(read_all(sock))
        for path in ("/agents/chat/runs", "/runs/x/interrupts", "/agents/chat/agui"):  # clients that vanish mid-body
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
            head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            sock.sendall(head.encode() + b'{"prompt":')
            sock.close()
    finally:
        for sock in slow:
            sock.close()
    for answer in answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and answer.count(b"HTTP/1.1") == 1, answer  # one answer, then closed
        assert b'"status": 408' in body or b'"status":408' in body
    assert httpx.get(f"{server.url}/runs").status_code == 200  # the server still serves
    assert rows(Path(server.store)) == before
    server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log and "ERROR" not in log and "level=error" not in log, log


@contextlib.contextmanager
def released(gate: Path) -> Iterator[None]:
    """The blocked tool is released when the block ends, failed or not (the server's close waits for it)."""
    try:
        yield
    finally:
        (gate / "release").write_text("")


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)
