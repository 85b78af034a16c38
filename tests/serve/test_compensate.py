"""``POST /runs/{id}/compensate`` on a real server (uvicorn in a subprocess): the failed booking's
three effects are undone newest first, once each; the stream shows the unwinding; a repeat with
the same ``Idempotency-Key`` undoes nothing and answers the stored report; a run that is running,
compensated already, unknown or of no agent gets a JSON 4xx and nothing is stored."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tether.durable import SQLiteStore

from .conftest import ServerProcess, read_sse

RUN = "trip-1"
REVERSED = [f"{RUN}/charge/undo", f"{RUN}/hotel/undo", f"{RUN}/flight/undo"]


def provider(gate: Path) -> dict[str, Any]:
    path = gate / "provider.json"
    return json.loads(path.read_text()) if path.exists() else {"effects": {}, "undone": {}, "attempts": []}


def wait_status(url: str, run_id: str, wanted: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] == wanted:
            return run
        assert time.monotonic() < deadline, f"run {run_id} stayed {run['status']}"
        time.sleep(0.05)


def error_of(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    message: str = response.json()["error"]["message"]
    return message


def test_a_served_run_is_compensated_once_by_key_and_its_stream_shows_it(tmp_path: Path, gate_dir: Path) -> None:
    server = ServerProcess(tmp_path, gate_dir, tmp_path / "runs.db", registry="registry_module:BOOKING")
    server.start()
    try:
        url = server.url
        assert httpx.post(f"{url}/agents/booker/runs", json={"prompt": "book", "run_id": RUN}).status_code == 202
        wait_status(url, RUN, "failed")
        assert sorted(provider(gate_dir)["effects"]) == sorted(key.removesuffix("/undo") for key in REVERSED)

        first = httpx.post(f"{url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "undo-1"}, timeout=30)
        assert first.status_code == 200, first.text
        report = first.json()
        assert (report["run_id"], report["status"], report["trigger"]) == (RUN, "compensated", "requested")
        assert [(u["toolUseId"], u["outcome"]) for u in report["undos"]] == [(i, "undone") for i in ("charge", "hotel", "flight")]
        assert report["events"] == f"/runs/{RUN}/events"
        assert provider(gate_dir)["attempts"] == REVERSED

        again = httpx.post(f"{url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "undo-1"}, timeout=30)
        assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
        assert again.json() == report
        assert "compensated already" in error_of(httpx.post(f"{url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "undo-2"}), 409)
        assert "compensated already" in error_of(httpx.post(f"{url}/runs/{RUN}/compensate"), 409)
        assert provider(gate_dir)["attempts"] == REVERSED  # nothing undone twice
        assert httpx.get(f"{url}/runs/{RUN}").json()["status"] == "compensated"

        with httpx.stream("GET", f"{url}/runs/{RUN}/events", timeout=30) as response:
            seen = read_sse(response)
        steps = [e["data"] for e in seen if e["type"] == "compensation"]
        assert [(s["position"], s.get("toolUseId")) for s in steps] == [
            ("unwind", None),
            ("undo", "charge"),
            ("undo", "hotel"),
            ("undo", "flight"),
            ("unwound", None),
        ]
        assert [p["toolUseId"] for p in steps[0]["plan"]] == ["charge", "hotel", "flight"]
        statuses = [e["data"]["status"] for e in seen if e["type"] == "status"]
        assert statuses[-2:] == ["compensating", "compensated"]
        assert seen[-1]["type"] == "end"

        store = SQLiteStore(tmp_path / "runs.db")
        try:
            assert [s.position for s in store.history(RUN)].count("unwind") == 1
            before = store.head(RUN)
        finally:
            store.close()

        assert error_of(httpx.post(f"{url}/runs/nope/compensate"), 404) == "no run 'nope'"
        assert "run_id" in error_of(httpx.post(f"{url}/runs/bad%20id/compensate"), 400)
        assert "Idempotency-Key" in error_of(httpx.post(f"{url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "x" * 300}), 400)

        # a graph run: its nodes' nested runs unwind (a key is refused: graph runs keep none)
        assert httpx.post(f"{url}/agents/pipeline/runs", json={"prompt": "write", "run_id": "g1"}).status_code == 202
        wait_status(url, "g1", "finished")
        assert "keep no request keys" in error_of(httpx.post(f"{url}/runs/g1/compensate", headers={"Idempotency-Key": "k"}), 400)
        graph = httpx.post(f"{url}/runs/g1/compensate", timeout=30)
        assert graph.status_code == 200, graph.text
        assert [(u["toolUseId"], u["run_id"], u["outcome"]) for u in graph.json()["undos"]] == [
            ("editor:1", "g1.editor:1", "undone"),
            ("writer:1", "g1.writer:1", "undone"),
        ]
        assert httpx.get(f"{url}/runs/g1").json()["status"] == "compensated"

        assert httpx.post(f"{url}/agents/worker/runs", json={"prompt": "go", "run_id": "w1"}).status_code == 202
        deadline = time.monotonic() + 30
        while not (gate_dir / "entered-slow").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert "running" in error_of(httpx.post(f"{url}/runs/w1/compensate", headers={"Idempotency-Key": "undo-w"}, timeout=60), 409)
        (gate_dir / "release").write_text("")
        wait_status(url, "w1", "finished")
        store = SQLiteStore(tmp_path / "runs.db")
        try:
            assert store.head(RUN) == before  # the refused requests stored nothing
            assert "compensation" not in (store.head("w1") or {})
        finally:
            store.close()
    finally:
        server.stop()


def test_a_server_killed_mid_unwinding_leaves_it_to_the_repeated_request(tmp_path: Path, gate_dir: Path) -> None:
    """The first request's server dies inside the hotel's undo; the client sends the request again
    (same key) to a new server on the store: the unwinding goes on there, each effect undone once."""
    (gate_dir / "hang-undo").write_text("")
    server = ServerProcess(tmp_path, gate_dir, tmp_path / "runs.db", registry="registry_module:BOOKING")
    server.start()
    try:
        assert httpx.post(f"{server.url}/agents/booker/runs", json={"prompt": "book", "run_id": RUN}).status_code == 202
        wait_status(server.url, RUN, "failed")
        with pytest.raises(httpx.HTTPError):  # the server dies while the request waits
            with ThreadPoolExecutor(1) as pool:
                pending = pool.submit(httpx.post, f"{server.url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "u"}, timeout=60)
                deadline = time.monotonic() + 30
                while not (gate_dir / "entered-undo").exists():
                    assert time.monotonic() < deadline
                    time.sleep(0.02)
                server.kill()
                pending.result()
        assert provider(gate_dir)["attempts"] == REVERSED[:1]  # the charge was refunded; the hotel's undo is in doubt
        server.start()
        assert httpx.get(f"{server.url}/runs/{RUN}").json()["status"] == "compensating"
        again = httpx.post(f"{server.url}/runs/{RUN}/compensate", headers={"Idempotency-Key": "u"}, timeout=30)
        assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true", again.text
        report = again.json()
        assert report["status"] == "compensated"
        assert [(u["toolUseId"], u["outcome"], u["attempts"]) for u in report["undos"]] == [
            ("charge", "undone", 1),
            ("hotel", "undone", 2),  # in doubt: run again, with the same undo key
            ("flight", "undone", 1),
        ]
        assert provider(gate_dir)["attempts"] == REVERSED  # each effect undone once
    finally:
        server.stop()
