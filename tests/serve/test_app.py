"""The API in process (Starlette's TestClient, the app's lifespan included): every endpoint,
the security defaults and bad input (a 4xx JSON error naming the problem, nothing stored changed)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.multiagent import GraphBuilder
from tether.serve import RunManager, create_app

from . import registry_module
from .conftest import read_sse

BASE = "http://127.0.0.1:8000"
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
"""The keys of an OpenAPI path item that are operations (the others are shared fields)."""


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(registry_module.AGENTS, store, scan_interval=0.2, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def wait_status(client: TestClient, run_id: str, wanted: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        run: dict[str, Any] = client.get(f"/runs/{run_id}").json()
        if run["status"] == wanted:
            return run
        assert time.monotonic() < deadline, f"run {run_id} stayed {run['status']}"
        time.sleep(0.02)


def events(client: TestClient, run_id: str, **headers: str) -> list[dict[str, Any]]:
    with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        return read_sse(response)


def error_of(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    message: str = response.json()["error"]["message"]
    return message


def test_a_run_streams_its_events_and_takes_a_new_turn(client: TestClient) -> None:
    started = client.post("/agents/chat/runs", json={"prompt": "hi"})
    assert started.status_code == 202
    run_id = started.json()["run_id"]
    assert started.json()["events"] == f"/runs/{run_id}/events"
    assert wait_status(client, run_id, "finished")["answer"] == "hello there"
    seen = events(client, run_id)
    assert [e["type"] for e in seen] == ["status", "message", "message", "status", "result", "end"]
    assert [e["id"] for e in seen[:-1]] == ["1.0", "1.1", "2.0", "3.0", "3.1"]
    assert seen[1]["data"] == {"seq": 0, "role": "user", "content": [{"text": "hi"}]}
    assert seen[4]["data"]["answer"] == "hello there" and seen[4]["data"]["status"] == "finished"
    assert [e["id"] for e in events(client, run_id, **{"Last-Event-ID": "2.0"}) if "id" in e] == ["3.0", "3.1"]
    assert [e["id"] for e in events(client, run_id, **{"Last-Event-ID": "2"}) if "id" in e] == ["3.0", "3.1"]
    with client.stream("GET", f"/runs/{run_id}/events?after=3.0") as response:
        assert [e["type"] for e in read_sse(response)] == ["result", "end"]
    again = client.post("/agents/chat/runs", json={"prompt": "more", "run_id": run_id})
    assert again.status_code == 202
    run = wait_status(client, run_id, "finished")
    assert run["answer"] == "again" and run["turns"] == 2 and run["agent"] == "chat"


def test_an_interrupt_is_answered_over_http_and_a_bad_answer_changes_nothing(client: TestClient, store: SQLiteStore) -> None:
    assert client.post("/agents/asker/runs", json={"prompt": "deploy?", "run_id": "ask-1"}).status_code == 202
    run = wait_status(client, "ask-1", "interrupted")
    (question,) = run["interrupts"]
    assert question["name"] == "approve" and question["reason"] == {"what": "deploy"}
    seen = events(client, "ask-1")
    assert [e["type"] for e in seen][-3:] == ["interrupt", "result", "end"]
    steps = len(store.history("ask-1"))
    url = "/runs/ask-1/interrupts"
    assert "unknown interrupt id 'nope'" in error_of(client.post(url, json={"responses": {"nope": "yes"}}), 400)
    assert "has no response" in error_of(client.post(url, json={"responses": [{"interruptId": question["id"]}]}), 400)
    assert "answer every pending interrupt" in error_of(client.post(url, json={"responses": []}), 400)
    assert "responses is missing" in error_of(client.post(url, json={}), 400)
    assert "responses must be" in error_of(client.post(url, json={"responses": 3}), 400)
    assert len(store.history("ask-1")) == steps and client.get("/runs/ask-1").json()["status"] == "interrupted"
    answered = client.post(url, json={"responses": [{"interruptId": question["id"], "response": "yes"}]})
    assert answered.status_code == 202
    assert wait_status(client, "ask-1", "finished")["answer"] == "deployed"
    assert "waits for no answer" in error_of(client.post(url, json={"responses": {question["id"]: "yes"}}), 409)
    tool_end = [e for e in events(client, "ask-1") if e["type"] == "tool_call_end"]
    assert tool_end[-1]["data"]["content"] == [{"text": "approved: yes"}]


def test_list_get_delete_and_paging(client: TestClient) -> None:
    for n in range(3):
        assert client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": f"c{n}"}).status_code == 202
        wait_status(client, f"c{n}", "finished")
    page = client.get("/runs?status=finished&limit=2").json()
    assert [r["run_id"] for r in page["runs"]] == ["c0", "c1"] and page["total"] == 3 and page["next_offset"] == 2
    assert [r["run_id"] for r in client.get("/runs?limit=2&offset=2").json()["runs"]] == ["c2"]
    assert client.get("/runs?status=interrupted").json()["runs"] == []
    assert client.delete("/runs/c1").json() == {"deleted": ["c1"]}
    assert "no run 'c1'" in error_of(client.get("/runs/c1"), 404)
    assert "no run 'c1'" in error_of(client.delete("/runs/c1"), 404)
    assert [r["run_id"] for r in client.get("/runs").json()["runs"]] == ["c0", "c2"]


def test_cancel_stops_a_running_run(client: TestClient, gate_dir: Path) -> None:
    assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "w1"}).status_code == 202
    deadline = time.monotonic() + 20
    while not (gate_dir / "entered-slow").exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert client.get("/runs/w1").json()["status"] == "running"
    assert "is running" in error_of(client.post("/agents/worker/runs", json={"prompt": "again", "run_id": "w1"}), 409)
    assert "is running" in error_of(client.delete("/runs/w1"), 409)
    assert client.post("/runs/w1/cancel").status_code == 202
    (gate_dir / "release").write_text("")
    run = wait_status(client, "w1", "finished")
    assert run["stop_reason"] == "cancelled"
    assert "not executing" in error_of(client.post("/runs/w1/cancel"), 409)


def test_a_running_graph_run_is_not_cancelled(store: SQLiteStore, gate_dir: Path) -> None:
    """Cancel goes through the Runnable protocol: a graph refuses it (409), and its run goes on."""

    def slow_graph() -> Any:
        builder = GraphBuilder()
        builder.add_node(registry_module.worker(), "work")
        return builder.build()

    with TestClient(create_app({"slow-graph": slow_graph}, store, scan_interval=0.2, poll_interval=0.1), base_url=BASE) as client:
        assert client.post("/agents/slow-graph/runs", json={"prompt": "go", "run_id": "g-slow"}).status_code == 202
        deadline = time.monotonic() + 20
        while not (gate_dir / "entered-slow").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert "run 'g-slow': a graph run cannot be cancelled" in error_of(client.post("/runs/g-slow/cancel"), 409)
        (gate_dir / "release").write_text("")
        assert wait_status(client, "g-slow", "finished")["agent"] == "slow-graph"


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "problem"),
    [
        ("POST", "/agents/chat/runs", b"{not json", 400, "not valid JSON"),
        ("POST", "/agents/chat/runs", b"[1]", 400, "must be a JSON object"),
        ("POST", "/agents/chat/runs", b"", 400, "body is empty"),
        ("POST", "/agents/chat/runs", b'{"prompt": ""}', 400, "prompt is missing"),
        ("POST", "/agents/chat/runs", b'{"prompt": "x", "model": "gpt"}', 400, "unknown field 'model'"),
        ("POST", "/agents/chat/runs", b'{"prompt": "x", "run_id": "../etc"}', 400, "run_id '../etc' is invalid"),
        ("POST", "/agents/nobody/runs", b'{"prompt": "x"}', 404, "unknown agent 'nobody'"),
        ("POST", "/agents/chat/runs", b'{"prompt": [{"bogus": 1}]}', 400, "bogus"),
        ("POST", "/agents/chat/runs", b'{"prompt": 5}', 400, "prompt is missing"),
        ("POST", "/agents/chat/runs", b'{"prompt": "' + b"x" * (1 << 20) + b'"}', 413, "over the limit"),
        ("GET", "/runs/ghost", None, 404, "no run 'ghost'"),
        ("GET", "/runs/ghost/events", None, 404, "no run 'ghost'"),
        ("GET", "/runs/x/events?after=abc", None, 400, "'abc' is not one of this stream's ids"),
        ("POST", "/runs/ghost/interrupts", b'{"responses": {}}', 404, "no run 'ghost'"),
        ("POST", "/runs/ghost/cancel", None, 404, "no run 'ghost'"),
        ("DELETE", "/runs/ghost", None, 404, "no run 'ghost'"),
        ("GET", "/runs?status=lost", None, 400, "'lost' is not a run status"),
        ("GET", "/runs?limit=0", None, 400, "limit='0'"),
        ("GET", "/nowhere", None, 404, "no endpoint '/nowhere'"),
        ("PUT", "/runs/x", None, 405, "PUT is not allowed"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_problem_and_stores_nothing(
    client: TestClient, store: SQLiteStore, method: str, path: str, body: bytes | None, status: int, problem: str
) -> None:
    response = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert problem in error_of(response, status)
    assert store.list_runs() == []


def test_a_run_not_started_by_this_server_is_not_answered(client: TestClient, store: SQLiteStore) -> None:
    agent = registry_module.asker()
    agent.store = store
    agent("deploy?", run_id="cli-run")  # interrupted, with no serve marker
    assert client.get("/runs/cli-run").json()["agent"] is None
    question = client.get("/runs/cli-run").json()["interrupts"][0]["id"]
    answered = client.post("/runs/cli-run/interrupts", json={"responses": {question: "y"}})
    assert "not a run of this server's agents" in error_of(answered, 409)
    assert "not a run of agent 'asker'" in error_of(client.post("/agents/asker/runs", json={"prompt": "x", "run_id": "cli-run"}), 409)


def test_the_host_header_is_checked(store: SQLiteStore) -> None:
    app = create_app(registry_module.AGENTS, store)
    with TestClient(app, base_url="http://attacker.example:8000") as client:
        assert "does not answer to Host 'attacker.example:8000'" in error_of(client.get("/runs"), 421)
    with TestClient(app, base_url="http://localhost:9999") as client:
        assert client.get("/runs").status_code == 200
    proxied = create_app(registry_module.AGENTS, store, allowed_hosts=["agents.example.com"])
    with TestClient(proxied, base_url="https://agents.example.com") as client:
        assert client.get("/runs").status_code == 200


def test_a_token_is_required_on_every_endpoint(store: SQLiteStore) -> None:
    app = create_app(registry_module.AGENTS, store, token="s3cret")
    with TestClient(app, base_url=BASE) as client:
        for method, path in [("GET", "/runs"), ("GET", "/openapi.json"), ("POST", "/agents/chat/runs"), ("GET", "/runs/x/events")]:
            response = client.request(method, path, json={"prompt": "x"})
            assert "bearer token" in error_of(response, 401)
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/runs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert store.list_runs() == []


def test_cors_is_off_unless_an_origin_is_given(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store), base_url=BASE) as client:
        assert "access-control-allow-origin" not in client.get("/runs", headers={"Origin": "https://app.example"}).headers
    with TestClient(create_app(registry_module.AGENTS, store, cors="https://app.example"), base_url=BASE) as client:
        allowed = client.get("/runs", headers={"Origin": "https://app.example"})
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        assert "access-control-allow-origin" not in client.get("/runs", headers={"Origin": "https://other.example"}).headers


def test_a_cross_site_page_cannot_change_anything(store: SQLiteStore, gate_dir: Path) -> None:
    """A page of another site can make the browser send a simple POST (text/plain, no preflight)
    to a loopback server with no token: refused by the Origin check and by the content type."""
    with TestClient(create_app(registry_module.AGENTS, store), base_url=BASE) as client:
        evil = {"Origin": "https://evil.example", "Content-Type": "text/plain"}
        assert "cross-site request from Origin 'https://evil.example'" in error_of(
            client.post("/agents/chat/runs", content=b'{"prompt": "x"}', headers=evil), 403
        )
        assert "cross-site" in error_of(client.post("/runs/x/cancel", headers={"Origin": "null"}), 403)
        assert "cross-site" in error_of(client.delete("/runs/x", headers={"Origin": "http://127.0.0.1:9"}), 403)
        plain = client.post("/agents/chat/runs", content=b'{"prompt": "x"}', headers={"Content-Type": "text/plain"})
        assert "Content-Type: application/json (got 'text/plain')" in error_of(plain, 415)
        assert store.list_runs() == []
        assert client.get("/runs", headers={"Origin": "https://evil.example"}).status_code == 200  # reads: CORS decides
        own = client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "same-origin"}, headers={"Origin": BASE})
        assert own.status_code == 202, own.text  # the chat page itself
    with TestClient(create_app(registry_module.AGENTS, store, cors="https://app.example"), base_url=BASE) as client:
        listed = client.post("/agents/chat/runs", json={"prompt": "hi", "run_id": "cors"}, headers={"Origin": "https://app.example"})
        assert listed.status_code == 202, listed.text


def test_openapi_document_lists_every_endpoint(client: TestClient) -> None:
    """The document lists exactly the app's own routes, path and method (``HEAD`` is Starlette's
    echo of each ``GET``; the document does not describe itself), so a route the document misses
    fails, and so does a documented endpoint no route serves."""
    document = client.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    app: Starlette = client.app  # type: ignore[assignment]
    served = {
        (route.path, method.lower())
        for route in app.routes
        if isinstance(route, Route) and route.path != "/openapi.json"
        for method in route.methods or ()
        if method != "HEAD"
    }
    documented = {(path, method) for path, item in document["paths"].items() for method in item if method in HTTP_METHODS}
    assert served  # the app has routes to compare with
    assert documented == served
    name, key = document["paths"]["/agents/{name}/runs"]["post"]["parameters"]
    assert key["name"] == "Idempotency-Key" and key["in"] == "header"
    assert name["schema"]["enum"] == ["asker", "chat", "deployer", "flaky", "helper", "painter", "payer", "pipeline", "typist", "worker"]


def test_a_run_stopped_by_a_shutdown_is_resumed_by_the_next_server(store: SQLiteStore, gate_dir: Path) -> None:
    seen: list[str] = []

    def release_once_stopped() -> None:  # the loop's close waits for the blocked tool thread: free it once the run is stopped
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            statuses = {run.run_id: run.status for run in store.list_runs()}
            if statuses.get("s1") == "stopped":
                seen.append("stopped")
                break
            time.sleep(0.02)
        (gate_dir / "release").write_text("")

    app = create_app(registry_module.AGENTS, store, scan_interval=0.2, grace=0.2)  # the tool outlasts the grace period
    with TestClient(app, base_url=BASE) as client:
        assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "s1"}).status_code == 202
        deadline = time.monotonic() + 20
        while not (gate_dir / "entered-slow").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        threading.Thread(target=release_once_stopped, daemon=True).start()
    assert seen == ["stopped"]  # the shutdown cancelled the run at its last step
    stopped = store.history("s1")[-1]
    assert stopped.status == "stopped"
    assert stopped.stop_reason is not None and stopped.stop_reason.startswith("handed over") and "cancel" not in stopped.stop_reason
    calls: list[str] = []

    def broken() -> Any:
        calls.append("built")
        raise RuntimeError("this factory is broken")

    async def scan_twice() -> list[list[str]]:
        manager = RunManager({"worker": broken}, store)
        return [await manager.scan(), await manager.scan()]

    assert asyncio.run(scan_twice()) == [[], []]
    assert calls == ["built"]  # a resume that failed is not tried again at every scan while the run is unchanged
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=0.2), base_url=BASE) as client:
        run = wait_status(client, "s1", "finished")
        assert run["answer"] == "all done"
        decisions = [e["data"] for e in events(client, "s1") if e["type"] == "in_doubt"]
        assert decisions == [{"toolUseId": "t-slow", "name": "slow", "action": "rerun"}]


def test_a_connected_client_gets_live_deltas_without_ids_before_the_committed_message(client: TestClient, gate_dir: Path) -> None:
    assert client.post("/agents/typist/runs", json={"prompt": "type", "run_id": "d1"}).status_code == 202

    def flush_after_a_delta(event: dict[str, Any]) -> bool:
        if event["type"] == "tool_call_start":
            (gate_dir / "release").write_text("")  # the next reply begins while this client listens
        if event["type"] == "text_delta":
            (gate_dir / "flush").write_text("")  # the reply was in flight until this client saw a piece of it
        return False

    with client.stream("GET", "/runs/d1/events") as response:
        seen = read_sse(response, until=flush_after_a_delta)
    deltas = [e for e in seen if e["type"] == "text_delta"]
    assert deltas and all("id" not in e for e in deltas)
    assert "".join(e["data"]["text"] for e in deltas) == "typed it"
    final = next(i for i, e in enumerate(seen) if e["type"] == "message" and e["data"]["content"] == [{"text": "typed it"}])
    assert seen.index(deltas[-1]) < final
    assert [e for e in seen if "id" in e] == [e for e in events(client, "d1") if "id" in e]  # the replay is the committed part


def test_a_delta_is_never_sent_after_the_committed_message_that_supersedes_it(client: TestClient, gate_dir: Path) -> None:
    """A model that replies at once commits its message while its deltas still wait in the
    stream's queue: those are dropped, not sent after the message."""
    assert client.post("/agents/worker/runs", json={"prompt": "go", "run_id": "d2"}).status_code == 202

    def release_at_the_tool(event: dict[str, Any]) -> bool:
        if event["type"] == "tool_call_start":
            (gate_dir / "release").write_text("")
        return False

    with client.stream("GET", "/runs/d2/events") as response:
        seen = read_sse(response, until=release_at_the_tool)
    final = next(i for i, e in enumerate(seen) if e["type"] == "message" and e["data"]["content"] == [{"text": "all done"}])
    assert [e for e in seen[final:] if e["type"] == "text_delta"] == []


def test_a_graph_runs_as_a_served_run(client: TestClient, store: SQLiteStore) -> None:
    assert client.post("/agents/pipeline/runs", json={"prompt": "write", "run_id": "g1"}).status_code == 202
    run = wait_status(client, "g1", "finished")
    assert run["agent"] == "pipeline"  # matched by the spec its state keeps
    kinds = [e["type"] for e in events(client, "g1")]
    assert kinds[0] == "status" and kinds[-2:] == ["result", "end"]
    assert [r["run_id"] for r in client.get("/runs").json()["runs"]] == ["g1"]  # its node runs are nested, not listed
    assert any(summary.parent_run_id == "g1" for summary in store.list_runs())


async def test_two_concurrent_starts_of_one_run_id_start_it_once(store: SQLiteStore, gate_dir: Path) -> None:
    import httpx

    app = create_app(registry_module.AGENTS, store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        body = {"prompt": "go", "run_id": "twice"}
        try:
            answers = await asyncio.gather(*(client.post("/agents/worker/runs", json=body) for _ in range(2)))
            assert sorted(response.status_code for response in answers) == [202, 409], [r.text for r in answers]
            assert (await client.get("/runs/twice")).json()["status"] == "running"
            assert (await client.post("/runs/twice/cancel")).status_code == 202  # the server still knows it executes the run
        finally:
            (gate_dir / "release").write_text("")  # never leave the tool thread blocked
        while (await client.get("/runs/twice")).json()["status"] != "finished":
            await asyncio.sleep(0.02)
    assert (gate_dir / "calls.log").read_text().split() == ["slow", "twice/t-slow"]


def test_a_resume_the_servers_code_cannot_make_is_a_409_and_writes_nothing(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=0.2), base_url=BASE) as client:
        assert client.post("/agents/asker/runs", json={"prompt": "deploy?", "run_id": "old-code"}).status_code == 202
        (question,) = wait_status(client, "old-code", "interrupted")["interrupts"]
    before = store.head("old-code")

    @registry_module.tool
    def approve(what: str, urgent: bool) -> str:
        """A new version of the tool: its input changed, so the pending call cannot go on."""
        return what

    def asker() -> Any:
        return registry_module.Agent(model=registry_module.ScriptedModel(["deployed"], stateful=True), tools=[approve])

    with TestClient(create_app({**registry_module.AGENTS, "asker": asker}, store, scan_interval=0.2), base_url=BASE) as client:
        refused = client.post("/runs/old-code/interrupts", json={"responses": {question["id"]: "yes"}})
        assert "cannot resume with this agent's code" in error_of(refused, 409)
        assert client.post("/runs/old-code/retry").status_code == 409
    assert store.head("old-code") == before
