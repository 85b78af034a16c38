"""What a failed served run says over HTTP: ``GET /runs/{id}`` and ``GET /runs`` name its failure
(the stop reason the turn recorded, and the error split into its type and message), as the
OpenAPI document describes; a finished run has no error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .test_app import BASE, wait_status


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(registry_module.AGENTS, store, scan_interval=0.05, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def test_a_failed_run_shows_its_stop_reason_and_error(client: TestClient, gate_dir: Path) -> None:
    (gate_dir / "fail-once").write_text("")
    assert client.post("/agents/flaky/runs", json={"prompt": "go", "run_id": "f1"}).status_code == 202
    failed = wait_status(client, "f1", "failed")
    assert failed["stop_reason"] == "ModelDown: the model is down"
    assert failed["error"] == {"type": "ModelDown", "message": "the model is down"}
    (listed,) = client.get("/runs", params={"status": "failed"}).json()["runs"]
    assert listed["run_id"] == "f1" and listed["stop_reason"] == "ModelDown: the model is down"
    assert listed["error"] == failed["error"]

    assert client.post("/runs/f1/retry").status_code == 202
    finished = wait_status(client, "f1", "finished")
    assert finished["stop_reason"] == "end_turn" and finished["error"] is None  # the retry went on: no failure now
    assert client.get("/runs").json()["runs"][0]["error"] is None


def test_the_openapi_document_describes_the_stop_reason_and_the_error(client: TestClient) -> None:
    run = client.get("/openapi.json").json()["components"]["schemas"]["Run"]["properties"]
    assert run["stop_reason"]["type"] == ["string", "null"]
    error = run["error"]
    assert error["type"] == ["object", "null"] and set(error["properties"]) == {"type", "message"}
