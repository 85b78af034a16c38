"""A failed served run goes on: ``POST /runs/{id}/retry`` resumes it from its last stored step
(the recorded tool call is not made again), the scan never retries a failed run by itself, and the chat
page offers a Retry button (in Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .conftest import ServerProcess
from .test_app import BASE, error_of, events, wait_status


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(registry_module.AGENTS, store, scan_interval=0.05, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def effects(gate: Path) -> list[str]:
    log = gate / "effects.log"
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


def test_a_failed_run_is_retried_from_its_last_step_without_running_its_tool_again(client: TestClient, gate_dir: Path) -> None:
    (gate_dir / "fail-once").write_text("")
    assert client.post("/agents/flaky/runs", json={"prompt": "go", "run_id": "f1"}).status_code == 202
    failed = wait_status(client, "f1", "failed")
    assert failed["agent"] == "flaky" and failed["answer"] == "calling effect"
    assert effects(gate_dir) == ["f1/t-flaky"]
    assert client.portal.call(client.app.state.runs.scan) == []  # type: ignore[attr-defined,union-attr]  # the scan leaves a failed run
    assert client.get("/runs/f1").json()["status"] == "failed"
    refused = client.post("/agents/flaky/runs", json={"prompt": "again", "run_id": "f1"})
    assert "/runs/{id}/retry" in error_of(refused, 409)

    retried = client.post("/runs/f1/retry", headers={"Idempotency-Key": "retry-f1"})
    assert retried.status_code == 202 and retried.json() == {"run_id": "f1", "events": "/runs/f1/events"}
    run = wait_status(client, "f1", "finished")
    again = client.post("/runs/f1/retry", headers={"Idempotency-Key": "retry-f1"})  # a client's copy: nothing new
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert run["answer"] == "recovered" and run["turns"] == 1
    assert effects(gate_dir) == ["f1/t-flaky"]  # the recorded tool call is not made again
    seen = events(client, "f1")
    results = [e["data"]["status"] for e in seen if e["type"] == "result"]
    assert results == ["failed", "finished"]
    assert [e["data"]["toolUseId"] for e in seen if e["type"] == "tool_call_end"] == ["t-flaky"]


def test_only_a_failed_stopped_stalled_or_paused_run_is_retried(client: TestClient, store: SQLiteStore) -> None:
    assert error_of(client.post("/runs/nope/retry"), 404) == "no run 'nope'"
    assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "c1"}).status_code == 202
    wait_status(client, "c1", "finished")
    before = store.head("c1")
    assert "c1' is finished: only a failed, stopped, stalled or paused run is retried" in error_of(client.post("/runs/c1/retry"), 409)
    assert client.post("/agents/asker/runs", json={"prompt": "deploy?", "run_id": "a1"}).status_code == 202
    wait_status(client, "a1", "interrupted")
    assert "answer its interrupts" in error_of(client.post("/runs/a1/retry"), 409)
    assert error_of(client.post("/runs/a%20b/retry"), 400).startswith("run_id")
    assert store.head("c1") == before


def test_the_page_shows_a_failed_run_and_its_retry_button_finishes_it(server: ServerProcess, gate_dir: Path, tmp_path: Path) -> None:
    from tests.inspector.browser import chromium

    from .test_page import committed_ids, send_prompt, shot, watch

    server.start()
    (gate_dir / "fail-once").write_text("")
    with chromium() as context:
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems = watch(page)
        send_prompt(page, server.url, "flaky", "go")
        page.locator(".note.error", has_text="the run failed").wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()
        assert page.locator("#run-status").text_content() == "failed"
        assert "ModelDown: the model is down" in (page.locator(".note.error").text_content() or "")
        retry = page.locator("#retry")
        assert retry.is_visible()
        run_id = page.locator("#run-id").text_content()
        assert run_id and effects(gate_dir) == [f"{run_id}/t-flaky"]
        shot(page, tmp_path, "failed")

        retry.click()
        page.locator(".msg.assistant .text", has_text="recovered").wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()
        assert page.locator("#run-status").text_content() == "finished"
        assert retry.is_hidden()
        shot(page, tmp_path, "retried")
        assert page.locator(".msg.assistant .text").all_text_contents() == ["calling effect", "recovered"]
        assert page.locator('.tool[data-tool-use-id="t-flaky"] .result').all_text_contents() == ["effect 1 done"]
        assert page.eval_on_selector_all("#log-list li", "items => items.map(item => item.dataset.id)") == committed_ids(server.url, run_id)
        assert effects(gate_dir) == [f"{run_id}/t-flaky"]  # the recorded tool call was not made again
        assert problems == []


def test_a_paused_run_goes_on_with_retry(store: SQLiteStore) -> None:
    """A served agent with checkpointing pauses at each checkpoint (status ``paused``); nothing but
    ``POST /runs/{id}/retry`` goes on with it (it was refused: a served paused run was a dead end).
    Found by ``resume_contract(runtime="serve")`` on ``examples/checkpoints_interrupts.py``."""
    from tether import Agent, tool
    from tether.models.scripted import ScriptedModel

    @tool
    def look() -> str:
        """Look."""
        return "seen"

    def pausing() -> Agent:
        call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "look", "input": {}}}]}
        return Agent(model=ScriptedModel([call, "done"], stateful=True), tools=[look], checkpointing=["after_model"])

    app = create_app({"pausing": pausing}, store, scan_interval=0.05, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        assert client.post("/agents/pausing/runs", json={"prompt": "go", "run_id": "p1"}).status_code == 202
        wait_status(client, "p1", "paused")
        assert client.post("/runs/p1/retry").status_code == 202
        assert wait_status(client, "p1", "finished")["answer"] == "done"
