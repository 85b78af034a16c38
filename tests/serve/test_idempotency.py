"""Consume-once at the HTTP edge: a request sent again with its client key (``Idempotency-Key``;
AG-UI ``runId``) starts nothing and gets the first request's run and stream; the same key with
another body is a 422 that stores nothing. In process, then eight concurrent copies of one
request spread over two real servers on one PostgreSQL store: one turn, one side effect, and the
key still holds after a server restart."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.hooks import BeforeInvocation
from tether.serve import create_app
from tether.serve.idempotency import KEPT, RequestKey, recorded, run_id_for

from . import registry_module
from .conftest import ServerProcess
from .test_agui import agui_input, check_lifecycle, kinds, post
from .test_app import BASE, error_of, wait_status
from .test_restart import wait_status as wait_remote
from .test_retry import effects
from .test_takeover import url_of


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(registry_module.AGENTS, store, scan_interval=0.2, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def test_the_same_agui_input_posted_twice_runs_one_turn(client: TestClient, store: SQLiteStore, gate_dir: Path) -> None:
    given = agui_input("th-once", "r1", "go")
    first = post(client, "flaky", given)
    check_lifecycle(first)
    again = post(client, "flaky", given)  # a client's retry: the same runId and message
    check_lifecycle(again)
    assert kinds(again) == kinds(first) and again[-1] == first[-1]  # the first AG-UI run, streamed again
    assert again[-1]["result"]["answer"] == "recovered" and again[0]["_id"] == first[0]["_id"] == "0"
    assert effects(gate_dir) == ["th-once/t-flaky"]  # the tool ran once
    assert client.get("/runs/th-once").json()["turns"] == 1
    before = store.head("th-once")
    other = client.post("/agents/flaky/agui", json=agui_input("th-once", "r1", "something else"))
    assert "'agui:r1' was used for another request" in error_of(other, 422)
    assert store.head("th-once") == before  # nothing stored
    second = post(client, "chat", agui_input("th-chat", "r1", "hi"))  # a key is scoped to its thread
    assert second[-1]["result"]["answer"] == "hello there"


def test_an_idempotency_key_makes_a_new_run_and_its_answers_consume_once(client: TestClient, store: SQLiteStore) -> None:
    key = {"Idempotency-Key": "order-42"}
    first = client.post("/agents/asker/runs", json={"prompt": "deploy?"}, headers=key)
    assert first.status_code == 202 and "idempotent-replayed" not in first.headers
    run_id = first.json()["run_id"]
    assert run_id == run_id_for("order-42")
    run = wait_status(client, run_id, "interrupted")
    again = client.post("/agents/asker/runs", json={"prompt": "deploy?"}, headers=key)
    assert again.status_code == 202 and again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    before = store.head(run_id)
    other = client.post("/agents/asker/runs", json={"prompt": "other"}, headers=key)
    assert "'order-42' was used for another request" in error_of(other, 422)
    assert "'order-42' was used for another" in error_of(client.post("/agents/chat/runs", json={"prompt": "deploy?"}, headers=key), 422)
    assert store.head(run_id) == before

    (question,) = run["interrupts"]
    answer, answer_key = {"responses": {question["id"]: "yes"}}, {"Idempotency-Key": "answer-1"}
    assert client.post(f"/runs/{run_id}/interrupts", json=answer, headers=answer_key).status_code == 202
    assert wait_status(client, run_id, "finished")["answer"] == "deployed"
    repeat = client.post(f"/runs/{run_id}/interrupts", json=answer, headers=answer_key)
    assert repeat.status_code == 202 and repeat.headers["idempotent-replayed"] == "true"
    changed = {"responses": {question["id"]: "no"}}
    refused = client.post(f"/runs/{run_id}/interrupts", json=changed, headers=answer_key)
    assert "'answer-1' was used for another request" in error_of(refused, 422)
    assert "waits for no answer" in error_of(client.post(f"/runs/{run_id}/interrupts", json=answer), 409)  # no key: refused as before
    assert client.get(f"/runs/{run_id}").json()["turns"] == 1
    too_long = client.post("/agents/chat/runs", json={"prompt": "x"}, headers={"Idempotency-Key": "x" * 300})
    assert "Idempotency-Key must be" in error_of(too_long, 400)


def test_a_run_keeps_its_last_keys() -> None:
    from tether import Agent
    from tether.models.scripted import ScriptedModel
    from tether.serve.idempotency import Duplicate, KeyRecorder
    from tether.serve.registry import SERVE_KEY

    agent = Agent(model=ScriptedModel([]))
    for n in range(KEPT + 2):
        KeyRecorder(RequestKey(f"k{n}", "d")).before(BeforeInvocation(agent))
    head = {"state": agent.state.get()}
    assert recorded(head, "k0") is None and recorded(head, "k1") is None and recorded(head, f"k{KEPT + 1}") == {"digest": "d", "after": 0}
    assert len(agent.state.get(SERVE_KEY)["requests"]) == KEPT
    with pytest.raises(Duplicate):
        KeyRecorder(RequestKey("k5", "d")).before(BeforeInvocation(agent))


def test_eight_copies_on_two_servers_on_postgresql_run_one_turn(tmp_path: Path, gate_dir: Path, pg_conninfo: str) -> None:
    store = url_of(pg_conninfo)
    servers = [ServerProcess(tmp_path, gate_dir, store), ServerProcess(tmp_path, gate_dir, store)]
    try:
        for server in servers:
            server.start()
        key = {"Idempotency-Key": "pay-7f3a"}

        def send(index: int) -> httpx.Response:
            url = servers[index % 2].url
            return httpx.post(f"{url}/agents/flaky/runs", json={"prompt": "go"}, headers=key, timeout=60)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(send, range(8)))
        assert [a.status_code for a in answers] == [202] * 8, [a.text for a in answers]
        assert {a.json()["run_id"] for a in answers} == {run_id_for("pay-7f3a")}
        assert sum("idempotent-replayed" not in a.headers for a in answers) == 1  # one request started the turn
        run_id = answers[0].json()["run_id"]
        run = wait_remote(servers[1].url, run_id, "finished")
        assert run["turns"] == 1 and run["answer"] == "recovered"
        assert effects(gate_dir) == [f"{run_id}/t-flaky"]  # one side effect

        servers[0].stop()  # the key is in the store: a restarted server knows it
        servers[0].start()
        repeat = httpx.post(f"{servers[0].url}/agents/flaky/runs", json={"prompt": "go"}, headers=key, timeout=30)
        assert repeat.status_code == 202 and repeat.headers["idempotent-replayed"] == "true"
        other = httpx.post(f"{servers[1].url}/agents/flaky/runs", json={"prompt": "go twice"}, headers=key, timeout=30)
        assert other.status_code == 422 and other.headers["content-type"] == "application/json"
        assert other.json()["error"]["status"] == 422
        assert httpx.get(f"{servers[0].url}/runs/{run_id}").json()["turns"] == 1
        assert effects(gate_dir) == [f"{run_id}/t-flaky"]
    finally:
        for server in servers:
            server.stop()


def test_eight_concurrent_copies_on_one_server_run_one_turn(client: TestClient, gate_dir: Path) -> None:
    key = {"Idempotency-Key": "one-server"}

    def send(_: int) -> tuple[int, str, bool]:
        response = client.post("/agents/flaky/runs", json={"prompt": "go"}, headers=key)
        return response.status_code, response.json()["run_id"], "idempotent-replayed" in response.headers

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(send, range(8)))
    run_id = run_id_for("one-server")
    assert sorted(answers) == [(202, run_id, False)] + [(202, run_id, True)] * 7
    assert wait_status(client, run_id, "finished")["turns"] == 1
    assert effects(gate_dir) == [f"{run_id}/t-flaky"]


def test_a_key_names_a_new_graph_run_and_nothing_else_of_it(client: TestClient, store: SQLiteStore) -> None:
    key = {"Idempotency-Key": "pipe-1"}
    first = client.post("/agents/pipeline/runs", json={"prompt": "write"}, headers=key)
    assert first.status_code == 202 and first.json()["run_id"] == run_id_for("pipe-1")
    run_id = first.json()["run_id"]
    wait_status(client, run_id, "finished")
    before = store.head(run_id)
    again = client.post("/agents/pipeline/runs", json={"prompt": "write"}, headers=key)
    assert again.status_code == 202 and again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    turn = client.post("/agents/pipeline/runs", json={"prompt": "more", "run_id": run_id}, headers={"Idempotency-Key": "pipe-2"})
    assert "whose runs keep no request keys" in error_of(turn, 400)
    assert store.head(run_id) == before


async def test_a_repeat_that_takes_the_lease_after_the_first_finds_its_key_and_writes_nothing(store: SQLiteStore) -> None:
    from tether.serve import RunManager
    from tether.serve.idempotency import Duplicate, digest

    manager = RunManager(registry_module.AGENTS, store)
    request = RequestKey("k-race", digest({"prompt": "hi"}))
    await manager._start("chat", "hi", "race-1", request)  # the first request
    while manager.executing("race-1"):
        await asyncio.sleep(0.01)
    before = store.head("race-1")
    with pytest.raises(Duplicate) as caught:  # a copy that missed the record, then got the lease after the first turn
        await manager._start("chat", "hi", "race-1", request)
    assert caught.value.record == {"digest": request.digest, "after": 0}
    assert store.head("race-1") == before  # refused under the lease, before anything was written
    assert await manager.start_run("chat", "hi", "race-1", request) == {"digest": request.digest, "after": 0}


async def test_an_answer_that_loses_the_race_to_another_process_is_a_conflict_not_a_client_mistake(store: SQLiteStore) -> None:
    """Two processes check one interrupted run, both see it waiting; the first's answer finishes
    it; the second's launch then finds nothing interrupted. That is a 409 (the run moved on), not
    the 400 a prompt the client got wrong would be. Found by ``resume_contract(runtime="serve")``."""
    from tether.errors import RequestError
    from tether.serve import RunManager
    from tether.serve.events import interrupts_of

    manager = RunManager(registry_module.AGENTS, store)
    await manager._start("asker", "deploy?", "race-answer", None)
    while manager.executing("race-answer"):
        await asyncio.sleep(0.01)
    checked = store.head("race-answer")  # what the losing process checked
    assert checked is not None
    (question,) = interrupts_of(checked)
    blocks = [{"interruptResponse": {"interruptId": question["id"], "response": "yes"}}]
    await manager._launch("race-answer", "asker", blocks, resume=True, head=checked)  # the winner
    while manager.executing("race-answer"):
        await asyncio.sleep(0.01)
    finished = store.head("race-answer")
    with pytest.raises(RequestError) as caught:
        await manager._launch("race-answer", "asker", blocks, resume=True, head=checked)  # the loser, after its check
    assert caught.value.status == 409 and "changed while this request was handled" in str(caught.value)
    assert store.head("race-answer") == finished  # nothing written


async def test_a_keyed_copy_that_loses_the_race_for_a_new_run_gets_the_first_requests_run(store: SQLiteStore) -> None:
    """A keyed copy that checked before the first copy created the run, then launched after the
    first turn began, is answered with the first request's run (it was a 400 "unfinished turn")."""
    from tether.errors import RequestError
    from tether.serve import RunManager
    from tether.serve.idempotency import digest

    manager, other = RunManager(registry_module.AGENTS, store), RunManager(registry_module.AGENTS, store)
    request = RequestKey("k-new", digest({"agent": "asker", "run_id": "race-new", "prompt": "deploy?"}))
    await manager._start("asker", "deploy?", "race-new", request)  # the first copy: the run waits for its answer
    while manager.executing("race-new"):
        await asyncio.sleep(0.01)
    before = store.head("race-new")
    with pytest.raises(RequestError) as caught:  # the second copy's launch, as if it had checked before the run existed
        await other._launch("race-new", "asker", "deploy?", resume=False, request=request, head=None)
    assert caught.value.status == 409 and store.head("race-new") == before  # a conflict, nothing written
    # ... which the key's path turns into the first request's run:
    assert await other._once("race-new", request, lambda: other._launch("race-new", "asker", "deploy?", resume=False, request=request)) == {
        "digest": request.digest,
        "after": 0,
    }
