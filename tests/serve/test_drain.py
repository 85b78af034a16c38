"""A graceful shutdown (:mod:`tether.serve.drain`) with real server processes: SIGTERM while a
tool runs lets the tool finish, hands the run over at its next step (``stopped``, *handed over*,
never *cancelled*), and the next server finishes it with nothing run twice; the logs say so, with
no ERROR and no traceback."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
from starlette.testclient import TestClient

from tests.inspector.browser import chromium
from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .conftest import ServerProcess, read_sse
from .test_app import BASE
from .test_page import committed_ids, shot, watch
from .test_restart import wait_for, wait_status


def log_lines(server: ServerProcess) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.log.read_text().splitlines() if line.startswith("{")]


def test_sigterm_inside_a_tool_lets_it_finish_and_hands_the_run_over(server: ServerProcess) -> None:
    server.start("--grace", "60", "--log-format", "json")
    url = server.url
    assert httpx.post(f"{url}/agents/worker/runs", json={"prompt": "go", "run_id": "h1"}).status_code == 202
    wait_for(server.gate / "entered-slow")
    streamed: list[list[dict[str, Any]]] = []

    def listen() -> None:
        with httpx.stream("GET", f"{url}/runs/h1/events", timeout=60) as response:
            streamed.append(read_sse(response))

    listener = threading.Thread(target=listen)
    listener.start()
    wait_for_line(server, lambda line: line.get("path") == "/runs/h1/events", present=False)
    assert server.process is not None
    first_pid = server.process.pid
    server.process.send_signal(signal.SIGTERM)
    wait_for_line(server, lambda line: line.get("event") == "drain.started")
    assert server.process.poll() is None  # the tool still runs: the server waits for it
    (server.gate / "release").write_text("")  # the tool returns within the grace period
    assert server.process.wait(60) in (0, -signal.SIGTERM)
    listener.join(30)
    assert not listener.is_alive() and len(streamed) == 1
    assert [e for e in streamed[0] if e["type"] == "end"] == []  # no end: the client reconnects to the next server
    store = SQLiteStore(server.store)
    try:
        steps = store.history("h1")
    finally:
        store.close()
    assert steps[-1].status == "stopped" and (steps[-1].stop_reason or "").startswith("handed over")
    lines = log_lines(server)
    assert {"event": "run.handed_over", "run_id": "h1"}.items() <= next(x for x in lines if x.get("event") == "run.handed_over").items()
    first_log = server.log.read_text()
    assert "Traceback" not in first_log and '"level": "error"' not in first_log and "ERROR" not in first_log

    server.start("--log-format", "json")
    run = wait_status(url, "h1", "finished")
    assert run["answer"] == "all done"
    assert (server.gate / "calls.log").read_text().split() == ["slow", "h1/t-slow"]  # nothing run twice
    with httpx.stream("GET", f"{url}/runs/h1/events", timeout=20) as response:
        events = read_sse(response)
    assert "in_doubt" not in [e["type"] for e in events]
    assert "cancel" not in json.dumps(events).lower()  # the page renders these: it never says cancelled
    taken = next(x for x in log_lines(server) if x.get("event") == "run.taken_over")
    assert taken["run_id"] == "h1" and taken["old_owner"].endswith(f":{first_pid}")


RECORD = """() => {
  window.__seen = [];
  const note = () => window.__seen.push(document.body.innerText);
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  note();
}"""
"""Record every text the page shows, as it changes (a status shown for a moment included)."""


def test_the_page_follows_a_hand_over_and_never_says_cancelled(server: ServerProcess, artifacts: Path) -> None:
    server.start("--grace", "60", "--log-format", "json")
    with chromium() as context:
        page = context.new_page()
        page.set_default_timeout(30_000)
        problems = watch(page)
        page.goto(server.url + "/")
        page.evaluate(RECORD)
        page.evaluate("window.__sameDocument = true")
        page.select_option("#agent", "worker")
        page.fill("#prompt", "go")
        page.click("#send")
        page.locator('.tool[data-tool-use-id="t-slow"] .input').wait_for()
        wait_for(server.gate / "entered-slow")
        run_id = page.locator("#run-id").text_content()
        assert run_id and page.locator('#conn[data-state="live"]').count() == 1

        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)  # inside the tool: the server waits for it
        wait_for_line(server, lambda line: line.get("event") == "drain.started")
        (server.gate / "release").write_text("")
        assert server.process.wait(60) in (0, -signal.SIGTERM)
        page.locator("#run-status", has_text="handed over").wait_for()  # the status says so, not "stopped"
        page.locator('#conn[data-state="reconnecting"]').wait_for()  # no end: the page waits for the next server
        assert page.locator("#retry").is_hidden()  # nothing for the user to do: the next server goes on
        assert page.locator('.tool[data-tool-use-id="t-slow"] .result').all_text_contents() == ["slow done"]
        shot(page, artifacts, "1-handed-over")

        server.start()  # the same port and store: it takes the run over, the page reconnects with its last id
        page.locator('#conn[data-state="closed"]').wait_for()
        assert page.locator("#run-status").text_content() == "finished"
        shot(page, artifacts, "2-finished")
        assert page.evaluate("window.__sameDocument") is True  # no reload
        assert page.locator(".msg.assistant:not(.live) .text").all_text_contents()[-1] == "all done"
        assert page.eval_on_selector_all("#log-list li", "items => items.map(item => item.dataset.id)") == committed_ids(server.url, run_id)
        seen = page.evaluate("window.__seen")
    assert any("handed over" in text for text in seen)
    assert [text for text in seen if "cancel" in text.lower()] == []  # never, not even for a moment
    assert (server.gate / "calls.log").read_text().split() == ["slow", f"{run_id}/t-slow"]  # the tool ran once
    assert problems == []


def wait_for_line(server: ServerProcess, wanted: Any, *, present: bool = True) -> None:
    import time

    deadline = time.monotonic() + 20
    while not any(wanted(line) for line in log_lines(server)):
        if not present:
            time.sleep(0.3)  # an open stream logs its line when it closes: give it a moment to connect
            return
        assert time.monotonic() < deadline, server.log.read_text()
        time.sleep(0.05)


def test_a_draining_server_refuses_new_work_with_503(store: SQLiteStore) -> None:
    app = create_app(registry_module.AGENTS, store)
    with TestClient(app, base_url=BASE) as client:
        assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "c1"}).status_code == 202
        wait_status_client(client, "c1", "finished")
        assert client.portal is not None
        client.portal.call(app.state.runs.begin_drain)  # as a SIGTERM does, in the event loop
        for response in (
            client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "c2"}),
            client.post("/agents/chat/runs", json={"prompt": "again", "run_id": "c1"}),
        ):
            assert response.status_code == 503 and response.headers["retry-after"] == "5"
            assert "shutting down" in response.json()["error"]["message"]
        assert [run.run_id for run in store.list_runs()] == ["c1"] and store.head("c1")["turns"] == 1  # type: ignore[index]


def wait_status_client(client: TestClient, run_id: str, wanted: str) -> None:
    import time

    deadline = time.monotonic() + 20
    while client.get(f"/runs/{run_id}").json()["status"] != wanted:
        assert time.monotonic() < deadline
        time.sleep(0.05)
