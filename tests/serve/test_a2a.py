"""The A2A v1.0 endpoint, driven by the official ``a2a-sdk`` client against a real ``tether serve``
(and once by the official JavaScript SDK, ``@a2a-js/sdk`` under node: ``node/a2a_client.mjs``).

Every test starts the server as a subprocess (uvicorn on loopback, the shared registry module)
and talks to it only through ``a2a-sdk``'s client: the card it resolves, ``SendMessage``,
``SendStreamingMessage``, ``GetTask``, ``CancelTask``, ``SubscribeToTask``. A task is a durable
run: the tests read the run over the JSON API or the store to check what A2A said about it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError
from google.protobuf import json_format
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import MAX_BODY, create_app

from . import registry_module
from .conftest import ServerProcess
from .test_takeover import url_of

NODE_DIR = Path(__file__).resolve().parent / "node"


def _text(text: str, message_id: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id, context_id=context_id)
    return SendMessageRequest(message=message)


async def _client(server: ServerProcess, agent: str, *, streaming: bool) -> Any:
    config = ClientConfig(streaming=streaming, httpx_client=httpx.AsyncClient(timeout=60))
    return await create_client(f"{server.url}/agents/{agent}/a2a", client_config=config)


async def _collect(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    return [event async for event in stream]


def _state(event: StreamResponse) -> int | None:
    if event.HasField("task"):
        return event.task.status.state
    if event.HasField("status_update"):
        return event.status_update.status.state
    return None


def _event_id(event: StreamResponse) -> str | None:
    """The Tether event id an update encodes (its ``tether.event`` metadata)."""
    field = event.WhichOneof("payload")
    if field not in ("status_update", "artifact_update"):
        return None
    meta = json_format.MessageToDict(getattr(event, field).metadata)
    ident = (meta.get("tether") or {}).get("event")
    return str(ident) if ident is not None else None


def _cursor(task: Task) -> str | None:
    meta = json_format.MessageToDict(task.metadata)
    cursor = (meta.get("tether") or {}).get("cursor")
    return str(cursor) if cursor is not None else None


def _answers(task: Task) -> list[str]:
    return [part.text for artifact in task.artifacts for part in artifact.parts if part.text]


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


async def test_the_card_then_send_and_get_a_task_that_is_a_durable_run(server: ServerProcess) -> None:
    server.start()
    card = httpx.get(f"{server.url}/agents/chat/a2a/.well-known/agent-card.json").json()
    assert card["name"] == "chat"
    assert card["supportedInterfaces"] == [{"url": f"{server.url}/agents/chat/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    assert card["capabilities"]["streaming"] is True
    assert httpx.get(f"{server.url}/agents/nobody/a2a/.well-known/agent-card.json").status_code == 404

    client = await _client(server, "chat", streaming=False)
    try:
        (response,) = await _collect(client.send_message(_text("hi", "m-1")))
        task = response.task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.id == task.context_id
        assert _answers(task) == ["hello there"]
        assert [(m.role, m.parts[0].text) for m in task.history] == [(Role.ROLE_USER, "hi"), (Role.ROLE_AGENT, "hello there")]

        run = httpx.get(f"{server.url}/runs/{task.id}").json()  # the task is the run
        assert (run["status"], run["answer"], run["agent"]) == ("finished", "hello there", "chat")

        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got == task
        assert list((await client.get_task(GetTaskRequest(id=task.id, history_length=1))).history) == [task.history[-1]]

        # the same message again (a client's retry): the first one's task, no second turn
        (again,) = await _collect(client.send_message(_text("hi", "m-1")))
        assert again.task.id == task.id and _answers(again.task) == ["hello there"]
        assert httpx.get(f"{server.url}/runs/{task.id}").json()["turns"] == 1
        with pytest.raises(A2AError, match="another request"):  # the same id, another message
            await _collect(client.send_message(_text("bye", "m-1")))

        # the next message in the context: the run's next turn (the same conversation)
        (turn,) = await _collect(client.send_message(_text("more", "m-2", context_id=task.context_id)))
        assert turn.task.id == task.id and turn.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert _answers(turn.task) == ["hello there", "again"]
        assert [m.parts[0].text for m in turn.task.history] == ["hi", "hello there", "more", "again"]

        quick = _text("hello", "m-4")
        quick.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
        (started,) = await _collect(client.send_message(quick))  # at once: the task works (its run is in the server's hands)
        assert started.task.status.state == TaskState.TASK_STATE_WORKING and started.task.id != task.id
        await _until(lambda: httpx.get(f"{server.url}/runs/{started.task.id}").json()["status"] == "finished")
        assert _answers(await client.get_task(GetTaskRequest(id=started.task.id))) == ["hello there"]

        with pytest.raises(A2AError, match="no task"):
            await client.get_task(GetTaskRequest(id="nope"))
        with pytest.raises(A2AError, match=r"terminal|waits for no input"):  # a completed task takes no message
            await _collect(client.send_message(_text("x", "m-3", task_id=task.id)))
    finally:
        await client.close()


async def _until(check: Any) -> None:
    """Wait (without blocking the loop) until ``check()`` holds."""
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.02)


def _ids(events: list[StreamResponse]) -> list[str]:
    return [ident for ident in map(_event_id, events) if ident is not None]


def _once(events: list[StreamResponse]) -> bool:
    """Whether no update was sent twice (one Tether event may make a status and an artifact update)."""
    sent = [(event.WhichOneof("payload"), _event_id(event)) for event in events if _event_id(event) is not None]
    return len(set(sent)) == len(sent)


def _order(ident: str) -> tuple[int, int]:
    step, _, index = ident.partition(".")
    return int(step), int(index)


async def test_stream_a_task_then_cancel_one_inside_its_tool(server: ServerProcess, gate_dir: Path) -> None:
    server.start()
    client = await _client(server, "chat", streaming=True)
    try:
        events = await _collect(client.send_message(_text("hi", "s-1")))
        assert events[0].HasField("task") and events[0].task.status.state == TaskState.TASK_STATE_WORKING
        kinds = [event.WhichOneof("payload") for event in events]
        assert kinds == ["task", "status_update", "artifact_update", "status_update"]
        assert [_state(event) for event in events if event.HasField("status_update")] == [
            TaskState.TASK_STATE_WORKING,  # with the model's reply
            TaskState.TASK_STATE_COMPLETED,
        ]
        assert events[1].status_update.status.message.parts[0].text == "hello there"
        assert events[2].artifact_update.artifact.parts[0].text == "hello there"
        ids = _ids(events)
        assert ids == sorted(ids, key=_order) and _once(events)
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED and _answers(task) == ["hello there"]
        with pytest.raises(A2AError, match="terminal"):  # a task that ended has nothing to subscribe to
            await _collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))
    finally:
        await client.close()

    worker = await _client(server, "worker", streaming=True)
    try:
        streamed: list[StreamResponse] = []

        async def stream() -> None:
            async for event in worker.send_message(_text("report", "w-1")):
                streamed.append(event)

        streaming = asyncio.create_task(stream())
        await _until(lambda: (gate_dir / "entered-slow").exists() and streamed)
        task_id = streamed[0].task.id
        asked = await worker.cancel_task(CancelTaskRequest(id=task_id))  # asked inside the tool: the task still works
        assert asked.status.state == TaskState.TASK_STATE_WORKING and "cancellation requested" in asked.status.message.parts[0].text
        (gate_dir / "release").write_text("")  # the tool ends; the turn stops there, cancelled
        await streaming
        cancelled = await worker.get_task(GetTaskRequest(id=task_id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        assert _state(streamed[-1]) == TaskState.TASK_STATE_CANCELED
        run = httpx.get(f"{server.url}/runs/{task_id}").json()
        assert (run["status"], run["stop_reason"]) == ("finished", "cancelled")
        assert len((gate_dir / "calls.log").read_text().splitlines()) == 1
        with pytest.raises(A2AError, match="not working"):
            await worker.cancel_task(CancelTaskRequest(id=task_id))
    finally:
        await worker.close()


async def test_input_required_is_the_runs_interrupt_answered_by_the_next_message(server: ServerProcess) -> None:
    server.start()
    client = await _client(server, "asker", streaming=False)
    streaming = await _client(server, "asker", streaming=True)
    try:
        (first,) = await _collect(client.send_message(_text("deploy it", "a-1")))
        task = first.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        note = task.status.message
        (asked,) = json_format.MessageToDict(note.parts[1].data)["interrupts"]
        assert asked["name"] == "approve" and asked["reason"] == {"what": "deploy"}
        run = httpx.get(f"{server.url}/runs/{task.id}").json()
        assert run["status"] == "interrupted" and [item["id"] for item in run["interrupts"]] == [asked["id"]]
        assert (await client.get_task(GetTaskRequest(id=task.id))).status.state == TaskState.TASK_STATE_INPUT_REQUIRED

        with pytest.raises(A2AError, match="no task"):  # an answer to a task that is not there
            await _collect(client.send_message(_text("yes", "a-0", task_id="nope")))
        answer = _text("yes", "a-2", task_id=task.id)
        events = await _collect(streaming.send_message(answer))
        assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
        assert _state(events[-1]) == TaskState.TASK_STATE_COMPLETED
        done = await client.get_task(GetTaskRequest(id=task.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED and _answers(done) == ["deployed"]
        results = [json_format.MessageToDict(part.data) for message in done.history for part in message.parts if part.HasField("data")]
        assert [r["toolResult"]["content"] for r in results if "toolResult" in r] == [[{"text": "approved: yes"}]]

        (again,) = await _collect(client.send_message(answer))  # the answer sent again: the same task, nothing run twice
        assert again.task.id == task.id and _answers(again.task) == ["deployed"]
        assert httpx.get(f"{server.url}/runs/{task.id}").json()["steps"] == done_steps(server, task.id)
    finally:
        await client.close()
        await streaming.close()


def done_steps(server: ServerProcess, run_id: str) -> int:
    return int(httpx.get(f"{server.url}/runs/{run_id}").json()["steps"])


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_subscribe_after_a_server_kill_goes_on_where_the_task_it_sends_ends(
    tmp_path: Path, gate_dir: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    store = tmp_path / "runs.db" if kind == "sqlite" else url_of(request.getfixturevalue("pg_conninfo"))
    first, second = ServerProcess(tmp_path, gate_dir, store), ServerProcess(tmp_path, gate_dir, store)
    try:
        first.start()
        client = await _client(first, "worker", streaming=True)
        streamed: list[StreamResponse] = []

        async def stream() -> None:
            async for event in client.send_message(_text("report", "k-1")):
                streamed.append(event)

        streaming = asyncio.create_task(stream())
        await _until(lambda: (gate_dir / "entered-slow").exists() and len(streamed) >= 2)
        first.kill()  # kill -9 inside the tool
        with pytest.raises(Exception):  # noqa: B017  (the stream breaks: how depends on the transport)
            await streaming
        await client.close()
        task_id = streamed[0].task.id
        (gate_dir / "entered-slow").unlink()

        second.start()  # takes the stalled run over at once: its tool runs again (idempotent), and blocks
        await _until(lambda: (gate_dir / "entered-slow").exists())
        client = await _client(second, "worker", streaming=True)
        subscribed: list[StreamResponse] = []

        async def subscribe() -> None:
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                subscribed.append(event)

        subscribing = asyncio.create_task(subscribe())
        await _until(lambda: bool(subscribed))
        (gate_dir / "release").write_text("")
        await subscribing
        snapshot = subscribed[0].task
        assert snapshot.status.state == TaskState.TASK_STATE_WORKING
        cursor = _cursor(snapshot)
        assert cursor is not None
        before, after = _ids(streamed), _ids(subscribed)
        assert all(_order(ident) <= _order(cursor) for ident in before)  # what the first stream saw is in the snapshot
        assert all(_order(ident) > _order(cursor) for ident in after)  # nothing repeated
        assert after == sorted(after, key=_order) and _once(subscribed)
        assert _state(subscribed[-1]) == TaskState.TASK_STATE_COMPLETED

        final = await client.get_task(GetTaskRequest(id=task_id))
        agent = [m for m in final.history if m.role == Role.ROLE_AGENT]
        seen = [m for m in snapshot.history if m.role == Role.ROLE_AGENT]
        seen += [
            e.status_update.status.message
            for e in subscribed[1:]
            if e.HasField("status_update") and e.status_update.status.HasField("message")
        ]
        assert seen == agent  # nothing missing: every reply is in the snapshot or came after it, once
        got = list(snapshot.artifacts) + [e.artifact_update.artifact for e in subscribed if e.HasField("artifact_update")]
        assert got == list(final.artifacts) and _answers(final) == ["all done"]
        keys = (gate_dir / "calls.log").read_text().split()
        assert len(keys) == 4 and keys[1] == keys[3]  # the tool ran again after the kill, with the same idempotency key
        await client.close()
    finally:
        first.stop()
        second.stop()


def test_bad_requests_are_protocol_errors_with_nothing_stored_and_no_traceback(
    store: SQLiteStore, gate_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(registry_module.AGENTS, store)
    headers = {"A2A-Version": "1.0"}

    def send(message: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}

    refused = {
        "params of the wrong shape": (send({"parts": 5}), -32602),
        "a file part": (send({"messageId": "f", "role": "ROLE_USER", "parts": [{"url": "file:///etc/passwd"}]}), -32005),
        "no parts": (send({"messageId": "e", "role": "ROLE_USER", "parts": []}), -32602),
        "no message id": (send({"role": "ROLE_USER", "parts": [{"text": "hi"}]}), -32602),
        "a context id that is no run id": (
            send({"messageId": "c", "role": "ROLE_USER", "parts": [{"text": "hi"}], "contextId": "../x"}),
            -32602,
        ),
        "an answer to no task": (send({"messageId": "t", "role": "ROLE_USER", "parts": [{"text": "hi"}], "taskId": "none"}), -32001),
        "a task id that is no run id": ({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "a/b"}}, -32602),
        "an unknown method": ({"jsonrpc": "2.0", "id": 7, "method": "Nope", "params": {}}, -32601),
    }
    with caplog.at_level(logging.DEBUG), TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for what, (body, code) in refused.items():
            response = client.post("/agents/chat/a2a", json=body, headers=headers)
            assert response.status_code == 200, what
            assert response.json()["error"]["code"] == code, (what, response.json())
        surrogate = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\\ud800"}}'
        response = client.post("/agents/chat/a2a", content=surrogate, headers={**headers, "content-type": "application/json"})
        assert response.status_code == 400 and "lone surrogate" in response.json()["error"]["message"]
        response = client.post("/agents/nobody/a2a", json=send({"messageId": "n", "parts": [{"text": "hi"}]}), headers=headers)
        assert response.status_code == 404
        response = client.post("/agents/chat/a2a", content=b"x" * (MAX_BODY + 1), headers={**headers, "content-type": "application/json"})
        assert response.status_code == 413
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []
    assert store.list_runs() == []


def test_a_failed_run_is_a_failed_task_and_a_retry_over_http_completes_it(store: SQLiteStore, gate_dir: Path) -> None:
    (gate_dir / "fail-once").write_text("")  # the flaky agent's model fails once, after its side effect
    app = create_app(registry_module.AGENTS, store)
    headers = {"A2A-Version": "1.0"}
    message = {"messageId": "f-1", "role": "ROLE_USER", "parts": [{"text": "go"}]}
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        sent = client.post(
            "/agents/flaky/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}, headers=headers
        )
        task = sent.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert client.get(f"/runs/{task['id']}").json()["status"] == "failed"
        assert client.post(f"/runs/{task['id']}/retry").status_code == 202
        deadline = time.monotonic() + 60
        while client.get(f"/runs/{task['id']}").json()["status"] != "finished":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        got = client.post(
            "/agents/flaky/a2a", json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}}, headers=headers
        )
        done = got.json()["result"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert [part["text"] for artifact in done["artifacts"] for part in artifact["parts"]] == ["recovered"]
    assert len((gate_dir / "effects.log").read_text().splitlines()) == 1  # the retry did not redo the recorded side effect


def test_the_official_javascript_client_sends_streams_gets_and_answers_input(server: ServerProcess) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: this test runs the official @a2a-js/sdk client under node")
    if not (NODE_DIR / "node_modules" / "@a2a-js" / "sdk" / "package.json").is_file():
        pytest.fail(f"@a2a-js/sdk is not installed in {NODE_DIR}: run scripts/test (npm ci --no-audit --no-fund there)")
    server.start()
    script = str(NODE_DIR / "a2a_client.mjs")
    done = subprocess.run([node, script], input=json.dumps({"url": server.url}), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"node failed ({done.returncode}):\n{done.stderr}"
    seen = json.loads(done.stdout)
    assert seen["sent"]["state"] == "TASK_STATE_COMPLETED" and seen["sent"]["answers"] == ["hello there"]
    assert seen["sent"]["id"] == seen["sent"]["context"]
    completed = ["statusUpdate", "TASK_STATE_COMPLETED"]
    assert seen["streamed"] == [["task", "TASK_STATE_WORKING"], ["statusUpdate", "TASK_STATE_WORKING"], ["artifactUpdate"], completed]
    assert seen["got"] == {"state": "TASK_STATE_COMPLETED", "answers": ["hello there", "again"], "history": 4}
    assert seen["asked"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    ((interrupt,),) = [item["interrupts"] for item in seen["asked"]["interrupts"]]
    assert interrupt["name"] == "approve" and interrupt["reason"] == {"what": "deploy"}
    assert seen["answered"] == {"state": "TASK_STATE_COMPLETED", "answers": ["deployed"]}
    run = httpx.get(f"{server.url}/runs/{seen['sent']['id']}").json()
    assert (run["status"], run["turns"]) == ("finished", 2)  # the streamed message was the run's next turn


async def test_one_message_sent_8_times_at_once_to_two_servers_on_postgresql_runs_once(
    tmp_path: Path, gate_dir: Path, pg_conninfo: str
) -> None:
    store = url_of(pg_conninfo)
    servers = [ServerProcess(tmp_path, gate_dir, store), ServerProcess(tmp_path, gate_dir, store)]
    (gate_dir / "release").write_text("")  # the worker's tool does not block
    clients: list[Any] = []
    try:
        for server in servers:
            server.start()
            clients.append(await _client(server, "worker", streaming=False))
        sends = [_collect(clients[i % 2].send_message(_text("report", "dup-1"))) for i in range(8)]
        tasks = [response.task for (response,) in await asyncio.gather(*sends)]
        assert len({task.id for task in tasks}) == 1
        assert {task.status.state for task in tasks} == {TaskState.TASK_STATE_COMPLETED}
        assert all(_answers(task) == ["all done"] for task in tasks)
        assert len((gate_dir / "calls.log").read_text().splitlines()) == 1  # one turn, one side effect
        assert httpx.get(f"{servers[0].url}/runs/{tasks[0].id}").json()["turns"] == 1
    finally:
        for client in clients:
            await client.close()
        for server in servers:
            server.stop()
