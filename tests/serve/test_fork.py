"""``POST /runs/{id}/fork``: a served run forked at a past step into a new run at rest, which a
client goes on with by retry (paused) or by answering its interrupts; bad requests are refused
with nothing stored changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .test_app import BASE, error_of, wait_status
from .test_hostile import rows


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(registry_module.AGENTS, store, scan_interval=60, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def calls(gate: Path) -> list[str]:
    log = gate / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_run_forked_mid_turn_is_paused_and_a_retry_finishes_it(client: TestClient, store: SQLiteStore, gate_dir: Path) -> None:
    (gate_dir / "release").write_text("")
    assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "w1"}).status_code == 202
    original = wait_status(client, "w1", "finished")
    history = store.history("w1")
    assert calls(gate_dir) == ["slow w1/t-slow"]

    forked = client.post("/runs/w1/fork", json={"at": 1, "run_id": "w1-a"})
    assert forked.status_code == 201, forked.text
    assert forked.json() == {
        "run_id": "w1-a",
        "status": "paused",
        "forked_from": {"run_id": "w1", "step": 1},
        "events": "/runs/w1-a/events",
    }
    assert client.get("/runs/w1-a").json()["status"] == "paused"
    assert calls(gate_dir) == ["slow w1/t-slow"]  # nothing executed
    assert client.post("/runs/w1-a/retry").status_code == 202
    fork = wait_status(client, "w1-a", "finished")
    assert fork["answer"] == original["answer"] == "all done" and fork["agent"] == "worker"
    assert calls(gate_dir) == ["slow w1/t-slow", "slow w1-a/t-slow"]  # the fork's own call, under its own key

    last = client.post("/runs/w1/fork", json={"at": original["steps"]})  # the default id; the step the turn ended at
    assert last.status_code == 201 and last.json()["run_id"] == "w1.fork-1" and last.json()["status"] == "finished"
    assert client.get("/runs/w1.fork-1").json()["answer"] == "all done"
    assert store.history("w1") == history  # the original is only read


def test_a_fork_of_a_question_waits_for_its_answer(client: TestClient) -> None:
    assert client.post("/agents/asker/runs", json={"prompt": "go", "run_id": "q1"}).status_code == 202
    asked = wait_status(client, "q1", "interrupted")
    forked = client.post("/runs/q1/fork", json={"at": asked["steps"], "run_id": "q1-a"})
    assert forked.status_code == 201 and forked.json()["status"] == "interrupted"
    (pending,) = client.get("/runs/q1-a").json()["interrupts"]
    assert pending["name"] == "approve"
    assert client.post("/runs/q1-a/interrupts", json={"responses": {pending["id"]: "yes"}}).status_code == 202
    assert wait_status(client, "q1-a", "finished")["answer"] == "deployed"
    assert client.get("/runs/q1").json()["status"] == "interrupted"  # the original still waits for its own answer


def test_bad_forks_are_refused_and_change_nothing(client: TestClient, store: SQLiteStore, tmp_path: Path, gate_dir: Path) -> None:
    assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "c1"}).status_code == 202
    steps = wait_status(client, "c1", "finished")["steps"]
    assert client.post("/agents/pipeline/runs", json={"prompt": "hi", "run_id": "g1"}).status_code == 202
    wait_status(client, "g1", "finished")
    before = rows(tmp_path / "runs.db")

    assert error_of(client.post("/runs/nope/fork", json={"at": 1}), 404) == "no run 'nope'"
    for at in (None, 0, steps + 1, "1", True, 1.0):
        assert f"not a step of run 'c1': send an int from 1 to {steps}" in error_of(client.post("/runs/c1/fork", json={"at": at}), 400)
    assert "run_id 'a/b' is invalid" in error_of(client.post("/runs/c1/fork", json={"at": 1, "run_id": "a/b"}), 400)
    assert "unknown field 'edit'" in error_of(client.post("/runs/c1/fork", json={"at": 1, "edit": {}}), 400)
    assert "exists already" in error_of(client.post("/runs/c1/fork", json={"at": 1, "run_id": "g1"}), 409)
    assert "not an agent run of this server" in error_of(client.post("/runs/g1/fork", json={"at": 1}), 409)
    assert rows(tmp_path / "runs.db") == before

    assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "w2"}).status_code == 202
    wait_status(client, "w2", "running")
    assert "is running" in error_of(client.post("/runs/w2/fork", json={"at": 1}), 409)
    (gate_dir / "release").write_text("")
    wait_status(client, "w2", "finished")
    assert [run.run_id for run in store.list_runs() if "fork" in run.run_id] == []
