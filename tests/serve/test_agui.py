"""The AG-UI endpoint: every event it sends parses as the ``ag-ui-protocol`` model of its type
(no unknown field), every connection is a well-formed AG-UI run (the official client's
``verifyEvents`` rules), and a reconnect with ``Last-Event-ID`` gets exactly the rest.

Runs with text, tools, an interrupt answered through AG-UI, agent state and an error, in
process (Starlette's TestClient); one run through a real uvicorn server killed inside a tool."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    BaseEvent,
    ResumeEntry,
    RunAgentInput,
    UserMessage,
)
from ag_ui.core import events as agui_events
from starlette.testclient import TestClient

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.models.scripted import ScriptedModel
from tether.serve import create_app
from tether.serve.agui import AguiTranslator, message_id, state_patch
from tether.serve.events import Cursor
from tether.tools.context import ToolContext

from . import registry_module
from .conftest import ServerProcess, read_sse

BASE = "http://127.0.0.1:8000"
MODELS: dict[str, type[BaseEvent]] = {
    model.model_fields["type"].default.value: model
    for model in vars(agui_events).values()
    if isinstance(model, type) and issubclass(model, BaseEvent) and model is not BaseEvent
}
"""The ``ag_ui.core`` model class of every AG-UI event type."""


# -- agents of these tests (besides the shared registry) -------------------------------------


class DownModel(ScriptedModel):
    """A model whose every call fails."""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        raise RuntimeError("the model is down")
        yield  # pragma: no cover


@tool
def remember(item: str, tool_context: ToolContext) -> str:
    """Add an item to the agent's list."""
    items = tool_context.agent.state.get("items") or []
    tool_context.agent.state.set("items", [*items, item])
    tool_context.agent.state.set("count", len(items) + 1)
    return f"remembered {item}"


def _calls(*items: str) -> list[Any]:
    uses = [{"toolUse": {"toolUseId": f"t-{item}", "name": "remember", "input": {"item": item}}} for item in items]
    return [{"role": "assistant", "content": [use]} for use in uses]


def broken() -> Agent:
    return Agent(model=DownModel([]))


def keeper() -> Agent:
    return Agent(model=ScriptedModel([*_calls("milk", "eggs"), "noted"], stateful=True), tools=[remember])


AGENTS = {**registry_module.AGENTS, "broken": broken, "keeper": keeper}


# -- reading and checking AG-UI streams -------------------------------------------------------


def validated(data: str) -> dict[str, Any]:
    """One SSE data line: parsed by the ``ag_ui.core`` model of its ``type``, with no field
    the model does not declare (the models accept unknown fields: a typo would pass)."""
    payload: dict[str, Any] = json.loads(data)
    model = MODELS[payload["type"]]
    parsed = model.model_validate(payload)
    known = {field.alias or name for name, field in model.model_fields.items()}
    assert set(payload) <= known, f"{payload['type']} has unknown fields {set(payload) - known}"
    assert parsed.model_dump(mode="json", by_alias=True) == payload
    return payload


def read_agui(lines: Iterator[str], *, until: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """The AG-UI events of an SSE stream, each validated, with ``_id`` the SSE id it carried."""
    events: list[dict[str, Any]] = []
    ident: str | None = None
    for line in lines:
        if line == "":
            continue
        if line.startswith(":") or line.startswith("retry:"):
            continue
        key, _, value = line.partition(": ")
        if key == "id":
            ident = value
            continue
        assert key == "data", line
        event = validated(value)
        if ident is not None:
            event["_id"] = ident
            ident = None
        events.append(event)
        if until is not None and until(event):
            break
    return events


def check_lifecycle(events: list[dict[str, Any]]) -> None:
    """The rules of the official client's ``verifyEvents``: RUN_STARTED first; a message's or
    tool call's events between its START and END; nothing after RUN_FINISHED or RUN_ERROR;
    no message or tool call open at RUN_FINISHED."""
    assert events and events[0]["type"] == "RUN_STARTED", events[:1]
    messages: set[str] = set()
    calls: set[str] = set()
    for i, event in enumerate(events):
        kind = event["type"]
        assert kind != "RUN_STARTED" or i == 0
        assert i == len(events) - 1 or kind not in ("RUN_FINISHED", "RUN_ERROR"), "an event after the end"
        if kind == "TEXT_MESSAGE_START":
            assert event["messageId"] not in messages
            messages.add(event["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            assert event["messageId"] in messages, event
            assert kind == "TEXT_MESSAGE_END" or event["delta"]
            if kind == "TEXT_MESSAGE_END":
                messages.discard(event["messageId"])
        elif kind == "TOOL_CALL_START":
            assert event["toolCallId"] not in calls
            calls.add(event["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            assert event["toolCallId"] in calls, event
            if kind == "TOOL_CALL_END":
                calls.discard(event["toolCallId"])
        elif kind == "RUN_FINISHED":
            assert not messages and not calls, (messages, calls)


def agui_input(thread: str, run: str, text: str | None = "hi", resume: list[ResumeEntry] | None = None) -> dict[str, Any]:
    """A RunAgentInput built with the ag_ui models, as a client sends it."""
    messages = [UserMessage(id=f"{run}-u", content=text)] if text is not None else []
    given = RunAgentInput(thread_id=thread, run_id=run, messages=messages, tools=[], context=[], forwarded_props={}, resume=resume)
    return given.model_dump(mode="json", by_alias=True)


def strip(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in event.items() if key != "_id"} for event in events]


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    app = create_app(AGENTS, store, scan_interval=0.2, poll_interval=0.1)
    with TestClient(app, base_url=BASE) as client:
        yield client


def without_snapshots(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A connection's events without the two snapshots every connection opens with (checked
    there: ``MESSAGES_SNAPSHOT`` then ``STATE_SNAPSHOT``, right after ``RUN_STARTED``)."""
    assert kinds(events[1:3]) == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"], kinds(events[:3])
    return [events[0], *events[3:]]


def post(
    client: TestClient,
    agent: str,
    body: dict[str, Any],
    until: Callable[[dict[str, Any]], bool] | None = None,
    *,
    whole: bool = False,
) -> list[dict[str, Any]]:
    """The AG-UI events of a POST (without its opening snapshots unless ``whole``)."""
    with client.stream("POST", f"/agents/{agent}/agui", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_agui(response.iter_lines(), until=until)
    return events if whole else without_snapshots(events)


def reconnect(
    client: TestClient, agent: str, thread: str, last_id: str | None, *, whole: bool = False, **params: str
) -> list[dict[str, Any]]:
    """The AG-UI events of a reconnect after ``last_id`` (None: no id; without its opening snapshots unless ``whole``)."""
    headers = {} if last_id is None else {"Last-Event-ID": last_id}
    with client.stream("GET", f"/agents/{agent}/agui/{thread}", headers=headers, params=params) as response:
        assert response.status_code == 200, response.read()
        events = read_agui(response.iter_lines())
    return events if whole else without_snapshots(events)


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def error_of(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    message: str = response.json()["error"]["message"]
    return message


# -- runs --------------------------------------------------------------------------------------


def test_a_text_run_and_a_second_turn_on_the_same_thread(client: TestClient) -> None:
    first = post(client, "chat", agui_input("th-1", "r1"))
    check_lifecycle(first)
    assert kinds(first) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert first[0] == {"type": "RUN_STARTED", "threadId": "th-1", "runId": "r1", "protocolVersion": "1.0", "_id": "0"}
    reply = message_id("th-1", 1)
    assert [e.get("messageId") for e in first[1:4]] == [reply] * 3 and first[1]["role"] == "assistant"
    assert first[2]["delta"] == "hello there"
    assert "_id" not in first[1] and "_id" not in first[2] and first[3]["_id"] == "2.0"  # the group's id is on its last event
    assert first[4]["outcome"] == {"type": "success"} and first[4]["runId"] == "r1"
    assert first[4]["result"] == {"status": "finished", "answer": "hello there", "stopReason": "end_turn"}
    second = post(client, "chat", agui_input("th-1", "r2", "more"))
    check_lifecycle(second)
    assert second[0]["_id"] == "3"  # the new AG-UI run starts after the first turn's last step
    assert [e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT"] == ["again"]
    assert second[-1]["runId"] == "r2" and second[-1]["result"]["answer"] == "again"
    assert client.get("/runs/th-1").json()["turns"] == 2


def test_a_run_with_tool_calls_and_their_results(client: TestClient, gate_dir: Path) -> None:
    (gate_dir / "release").write_text("")
    events = post(client, "worker", agui_input("th-tools", "r1", "go"))
    check_lifecycle(events)
    assert kinds(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    start, args, end, result = events[4:8]
    assert start["toolCallId"] == "t-slow" and start["toolCallName"] == "slow"
    assert start["parentMessageId"] == events[1]["messageId"] == message_id("th-tools", 1)
    assert json.loads(args["delta"]) == {"what": "report"} and end["toolCallId"] == "t-slow"
    assert result == {
        "type": "TOOL_CALL_RESULT",
        "messageId": f"{message_id('th-tools', 2)}/t-slow",
        "toolCallId": "t-slow",
        "content": "slow done",
        "role": "tool",
        "_id": result["_id"],
    }
    assert events[9]["delta"] == "all done" and events[9]["messageId"] == message_id("th-tools", 3)


def test_an_interrupt_finishes_the_run_and_is_answered_through_agui(client: TestClient, store: SQLiteStore) -> None:
    first = post(client, "asker", agui_input("th-ask", "r1", "deploy?"))
    check_lifecycle(first)
    assert kinds(first)[-4:] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]
    outcome = first[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (question,) = outcome["interrupts"]
    assert question["reason"] == "approve" and question["toolCallId"] == "t-approve"
    assert question["metadata"] == {"reason": {"what": "deploy"}} and "message" not in question
    steps = len(store.history("th-ask"))
    tether_id = client.get("/runs/th-ask").json()["interrupts"][0]["id"]
    assert question["id"] == f"th-ask/{steps}/{tether_id}"  # the thread and the step: unique per AG-UI run and thread
    url = "/agents/asker/agui"
    wrong = client.post(url, json=agui_input("th-ask", "r2", None, [ResumeEntry(interrupt_id="nope", status="resolved", payload="yes")]))
    assert "unknown interrupt id 'nope'" in error_of(wrong, 400)
    twice = [ResumeEntry(interrupt_id=question["id"], status="resolved", payload=p) for p in ("yes", "no")]
    assert "answered twice" in error_of(client.post(url, json=agui_input("th-ask", "r2", None, twice)), 400)
    assert "a new prompt needs a finished turn" in error_of(client.post(url, json=agui_input("th-ask", "r2", "hello?")), 409)
    other = client.post(
        "/agents/chat/agui", json=agui_input("th-ask", "r2", None, [ResumeEntry(interrupt_id=question["id"], status="resolved")])
    )
    assert "is a run of agent 'asker', not of agent 'chat'" in error_of(other, 409)
    assert len(store.history("th-ask")) == steps and client.get("/runs/th-ask").json()["status"] == "interrupted"
    answer = [ResumeEntry(interrupt_id=question["id"], status="resolved", payload="yes")]
    second = post(client, "asker", agui_input("th-ask", "r2", None, answer))
    check_lifecycle(second)
    assert second[0]["runId"] == "r2" and second[0]["_id"] == str(steps)
    assert kinds(second) == [
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert second[1]["toolCallId"] == "t-approve" and second[1]["content"] == "approved: yes"  # against the original call
    assert second[-1]["outcome"] == {"type": "success"} and second[-1]["result"]["answer"] == "deployed"


def test_a_cancelled_resume_answers_the_interrupt_with_the_cancelled_marker(client: TestClient) -> None:
    (question,) = post(client, "asker", agui_input("th-no", "r1", "deploy?"))[-1]["outcome"]["interrupts"]
    events = post(client, "asker", agui_input("th-no", "r2", None, [ResumeEntry(interrupt_id=question["id"], status="cancelled")]))
    check_lifecycle(events)
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["approved: {'cancelled': True}"]


def test_a_call_in_doubt_after_a_shutdown_is_an_interrupt_answered_through_agui(store: SQLiteStore, gate_dir: Path) -> None:
    def release_once_stopped() -> None:  # the loop's close waits for the blocked tool thread: free it once the run is stopped
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and {r.run_id: r.status for r in store.list_runs()}.get("th-pay") != "stopped":
            time.sleep(0.02)
        (gate_dir / "release").write_text("")

    app = create_app(AGENTS, store, scan_interval=0.2, poll_interval=0.1, grace=0.2)  # the tool outlasts the grace period
    with TestClient(app, base_url=BASE) as client:
        seen = post(client, "payer", agui_input("th-pay", "r1", "charge 5"), until=lambda e: e["type"] == "TOOL_CALL_END")
        deadline = time.monotonic() + 20
        while not (gate_dir / "entered-charge").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        threading.Thread(target=release_once_stopped, daemon=True).start()
    with TestClient(create_app(AGENTS, store, scan_interval=0.2, poll_interval=0.1), base_url=BASE) as client:
        rest = reconnect(client, "payer", "th-pay", seen[-1]["_id"], runId="r1")  # the new server resumed the stopped turn
        check_lifecycle(rest)
        assert kinds(rest) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"], rest
        assert rest[1]["value"] == {"toolUseId": "t-charge", "name": "charge", "action": "interrupt"}
        (question,) = rest[-1]["outcome"]["interrupts"]
        assert question["reason"] == "tether.in_doubt" and question["toolCallId"] == "t-charge"
        assert (
            question["responseSchema"]["type"] == ["string", "object"]
            and question["metadata"]["reason"]["idempotency_key"] == "th-pay/t-charge"
        )
        cancel = [ResumeEntry(interrupt_id=question["id"], status="cancelled")]
        assert "cannot be cancelled" in error_of(client.post("/agents/payer/agui", json=agui_input("th-pay", "r2", None, cancel)), 400)
        assert client.get("/runs/th-pay").json()["status"] == "interrupted"
        rerun = [ResumeEntry(interrupt_id=question["id"], status="resolved", payload="rerun")]
        events = post(client, "payer", agui_input("th-pay", "r2", None, rerun))
    check_lifecycle(events)
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["charge done"], events
    assert events[-1]["outcome"] == {"type": "success"} and events[-1]["result"]["answer"] == "charged"
    assert (gate_dir / "calls.log").read_text().split() == ["charge", "th-pay/t-charge", "charge", "th-pay/t-charge"]


def test_a_graph_runs_through_agui(client: TestClient) -> None:
    events = post(client, "pipeline", agui_input("th-graph", "r1", "write"))
    check_lifecycle(events)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "success"}
    assert [e for e in events if e["type"].startswith("STATE_")] == []  # a graph's own state (tether.graph) is Tether's
    assert post(client, "pipeline", agui_input("th-graph-2", "r1", "write"), whole=True)[2]["snapshot"] == {}


def test_a_failed_run_ends_with_run_error(client: TestClient) -> None:
    events = post(client, "broken", agui_input("th-err", "r1"))
    check_lifecycle(events)
    assert kinds(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "tether.failed" and "RuntimeError: the model is down" in events[-1]["message"]
    assert client.get("/runs/th-err").json()["status"] == "failed"


def test_agent_state_is_a_snapshot_then_json_patch_deltas(client: TestClient) -> None:
    events = post(client, "keeper", agui_input("th-state", "r1", "remember"))
    check_lifecycle(events)
    states = [e for e in events if e["type"].startswith("STATE_")]
    assert [e["type"] for e in states] == ["STATE_DELTA", "STATE_DELTA"]  # after the opening snapshot ({})
    assert states[0]["delta"] == [
        {"op": "add", "path": "/items", "value": ["milk"]},
        {"op": "add", "path": "/count", "value": 1},
    ]  # the Tether keys (tether.serve) are left out
    assert states[1]["delta"] == [
        {"op": "replace", "path": "/items", "value": ["milk", "eggs"]},
        {"op": "replace", "path": "/count", "value": 2},
    ]
    assert events.index(states[0]) > kinds(events).index("TOOL_CALL_RESULT")  # the state changed with the result
    again = post(client, "keeper", agui_input("th-state", "r2", "and?"), whole=True)
    check_lifecycle(again)
    assert again[2] == {"type": "STATE_SNAPSHOT", "snapshot": {"items": ["milk", "eggs"], "count": 2}}  # the state it starts from


def test_the_sse_stream_it_reads_has_the_state_and_the_delta_offsets(client: TestClient, gate_dir: Path) -> None:
    """The one event source the translation reads (``/runs/{id}/events`` shows it): ``state``
    when the agent state changes, without Tether's keys; live deltas with their ``offset``."""
    post(client, "keeper", agui_input("th-sse", "r1", "remember"))
    with client.stream("GET", "/runs/th-sse/events") as response:
        seen = read_sse(response)
    assert [e["data"]["state"] for e in seen if e["type"] == "state"] == [
        {"items": ["milk"], "count": 1},
        {"items": ["milk", "eggs"], "count": 2},
    ]
    assert all("id" in e for e in seen if e["type"] == "state")
    assert client.post("/agents/typist/runs", json={"prompt": "type", "run_id": "th-off"}).status_code == 202

    def steer(event: dict[str, Any]) -> bool:
        if event["type"] == "tool_call_start":
            (gate_dir / "release").write_text("")
        if event["type"] == "text_delta":
            (gate_dir / "flush").write_text("")
        return False

    with client.stream("GET", "/runs/th-off/events") as response:
        deltas = [e["data"] for e in read_sse(response, until=steer) if e["type"] == "text_delta"]
    assert "".join(d["text"] for d in deltas) == "typed it"
    assert [d["offset"] for d in deltas] == [sum(len(d["text"]) for d in deltas[:i]) for i in range(len(deltas))]


# -- reconnects ----------------------------------------------------------------------------------


def test_a_reconnect_after_any_id_gets_exactly_the_rest(client: TestClient, gate_dir: Path) -> None:
    (gate_dir / "release").write_text("")
    full = post(client, "worker", agui_input("th-re", "r1", "go"))
    ids = [(i, e["_id"]) for i, e in enumerate(full) if "_id" in e]
    assert len(ids) >= 5
    for position, last_id in ids[:-1]:  # after the final id the client has the whole run
        rest = reconnect(client, "worker", "th-re", last_id, runId="r1")
        check_lifecycle(rest)
        assert rest[0] == {"type": "RUN_STARTED", "threadId": "th-re", "runId": "r1", "protocolVersion": "1.0", "_id": last_id}
        assert strip(rest[1:]) == strip(full[position + 1 :]), last_id
        assert [e.get("_id") for e in rest[1:]] == [e.get("_id") for e in full[position + 1 :]]
    with client.stream("GET", f"/agents/worker/agui/th-re?after={ids[2][1]}&runId=r1") as response:
        assert strip(without_snapshots(read_agui(response.iter_lines()))[1:]) == strip(full[ids[2][0] + 1 :])  # ?after= as well
    with client.stream("GET", f"/agents/worker/agui/th-re?after={ids[2][1]}") as response:
        assert {e["runId"] for e in read_agui(response.iter_lines()) if "runId" in e} == {f"th-re@{ids[2][1]}"}  # no runId given


def test_a_reconnect_with_nothing_after_its_id_is_a_run_error(client: TestClient) -> None:
    events = post(client, "chat", agui_input("th-rest", "r1"))
    after_all = reconnect(client, "chat", "th-rest", events[-1]["_id"], runId="r1")
    check_lifecycle(after_all)
    assert kinds(after_all) == ["RUN_STARTED", "RUN_ERROR"] and after_all[-1]["code"] == "tether.at_rest"
    assert "run 'th-rest' is finished and nothing follows event 3.1" in after_all[-1]["message"]


def test_a_cancelled_turn_finishes_with_the_cancelled_outcome(client: TestClient, gate_dir: Path) -> None:
    def cancel_in_the_tool(event: dict[str, Any]) -> bool:
        if event["type"] == "TOOL_CALL_END":
            assert client.post("/runs/th-cancel/cancel").status_code == 202
            (gate_dir / "release").write_text("")
        return False

    events = post(client, "worker", agui_input("th-cancel", "r1", "go"), until=cancel_in_the_tool)
    check_lifecycle(events)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert events[-1]["result"]["stopReason"] == "cancelled"


def test_a_client_that_drops_mid_run_reconnects_to_the_rest(client: TestClient, gate_dir: Path) -> None:
    seen = post(client, "worker", agui_input("th-drop", "r1", "go"), until=lambda e: e["type"] == "TOOL_CALL_END")
    assert client.get("/runs/th-drop").json()["status"] == "running"  # the run goes on without its client
    (gate_dir / "release").write_text("")
    rest = reconnect(client, "worker", "th-drop", seen[-1]["_id"], runId="r1")
    check_lifecycle(rest)
    assert kinds(rest) == [
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    whole = reconnect(client, "worker", "th-drop", "0", runId="r1")
    assert strip(seen) + strip(rest[1:]) == strip(whole)


def test_live_text_streams_into_the_message_it_is_committed_as(client: TestClient, gate_dir: Path) -> None:
    def steer(event: dict[str, Any]) -> bool:
        if event["type"] == "TOOL_CALL_END":
            (gate_dir / "release").write_text("")  # the reply begins while this client listens
        if event["type"] == "TEXT_MESSAGE_CONTENT" and "_id" not in event and event["delta"] == "typed it":
            (gate_dir / "flush").write_text("")  # held in flight until this client saw it live
        return False

    events = post(client, "typist", agui_input("th-live", "r1", "type"), until=steer)
    check_lifecycle(events)
    reply = message_id("th-live", 3)
    tail = [e for e in events if e.get("messageId") == reply]
    assert kinds(tail) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert tail[1]["delta"] == "typed it" and "_id" not in tail[1]  # live: no id
    assert "_id" in tail[2]  # committed: the END carries the message's id, nothing sent twice
    replay = reconnect(client, "typist", "th-live", "0", runId="r1")
    assert strip(replay) == strip(events)  # the replay has the same events, the reply whole


def test_a_reconnect_while_a_reply_streams_gets_it_once_whole(client: TestClient, gate_dir: Path) -> None:
    def live_text(event: dict[str, Any]) -> bool:
        if event["type"] == "TOOL_CALL_END":
            (gate_dir / "release").write_text("")
        return event["type"] == "TEXT_MESSAGE_CONTENT" and "_id" not in event and event["delta"] == "typed it"

    seen = post(client, "typist", agui_input("th-mid", "r1", "type"), until=live_text)
    last_id = next(e["_id"] for e in reversed(seen) if "_id" in e)
    provisional = seen[[i for i, e in enumerate(seen) if "_id" in e][-1] + 1 :]
    assert kinds(provisional) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]  # dropped by the client on reconnect
    (gate_dir / "flush").write_text("")
    rest = reconnect(client, "typist", "th-mid", last_id, runId="r1")
    check_lifecycle(rest)
    texts = [e for e in rest if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert [e["delta"] for e in texts] == ["typed it"] and kinds(rest)[-1] == "RUN_FINISHED"


def test_a_connection_that_joins_a_reply_midway_sends_it_only_once_committed() -> None:
    translator = AguiTranslator("t", "r", Cursor(3))
    assert kinds([f.event.model_dump(by_alias=True) for f in translator.start()]) == ["RUN_STARTED"]
    assert translator.feed({"type": "text_delta", "data": {"text": "lo th", "offset": 3}}) == []  # began before this connection
    frames = translator.feed(
        {"type": "message", "id": "4.0", "data": {"seq": 5, "role": "assistant", "content": [{"text": "hello there"}]}}
    )
    assert [(f.event.model_dump(by_alias=True)["type"], f.id) for f in frames] == [
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", None),
        ("TEXT_MESSAGE_END", "4.0"),
    ]
    assert frames[1].event.model_dump(by_alias=True)["delta"] == "hello there"
    # a reply that streams from its start, loses a piece, then is committed: the rest follows the streamed text
    assert [
        f.event.model_dump(by_alias=True)["type"] for f in translator.feed({"type": "text_delta", "data": {"text": "ab", "offset": 0}})
    ] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
    ]
    assert translator.feed({"type": "text_delta", "data": {"text": "X", "offset": 5}}) == []
    frames = translator.feed({"type": "message", "id": "6.0", "data": {"seq": 6, "role": "assistant", "content": [{"text": "abcdef"}]}})
    assert [f.event.model_dump(by_alias=True).get("delta") for f in frames] == ["cdef", None]
    assert {f.event.model_dump(by_alias=True)["messageId"] for f in frames} == {"t/6"}
    # a retried call: what streamed is not the start of the committed text: ended as it is, then the reply
    translator.feed({"type": "text_delta", "data": {"text": "first try", "offset": 0}})
    frames = translator.feed({"type": "message", "id": "8.0", "data": {"seq": 7, "role": "assistant", "content": [{"text": "second"}]}})
    dumped = [f.event.model_dump(by_alias=True) for f in frames]
    assert [(d["type"], d["messageId"]) for d in dumped] == [
        ("TEXT_MESSAGE_END", "t/7"),
        ("TEXT_MESSAGE_START", "t/7/again"),
        ("TEXT_MESSAGE_CONTENT", "t/7/again"),
        ("TEXT_MESSAGE_END", "t/7/again"),
    ]
    assert dumped[2]["delta"] == "second" and frames[-1].id == "8.0"


def test_state_patch_is_json_patch_of_the_top_level_keys() -> None:
    old = {"a": 1, "gone": True, "x/y": [1], "t~": 0}
    new = {"a": 2, "x/y": [1], "t~": 1, "new": {"k": None}}
    assert state_patch(old, new) == [
        {"op": "remove", "path": "/gone"},
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "replace", "path": "/t~0", "value": 1},
        {"op": "add", "path": "/new", "value": {"k": None}},
    ]
    assert state_patch(new, new) == []


# -- a real server ----------------------------------------------------------------------------------


def test_a_real_server_killed_inside_a_tool_and_a_client_reconnecting_with_its_last_id(server: ServerProcess, gate_dir: Path) -> None:
    server.start()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        with http.stream("POST", "/agents/worker/agui", json=agui_input("th-real", "r1", "go")) as response:
            assert response.status_code == 200
            seen = without_snapshots(read_agui(response.iter_lines(), until=lambda e: e["type"] == "TOOL_CALL_END"))
        deadline = time.monotonic() + 20
        while not (gate_dir / "entered-slow").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        server.kill()  # inside the tool
        (gate_dir / "release").write_text("")
        server.start()  # resumes the stalled run: the idempotent tool runs again with the same key
        headers = {"Last-Event-ID": seen[-1]["_id"]}
        with http.stream("GET", "/agents/worker/agui/th-real", headers=headers, params={"runId": "r1"}) as response:
            rest = without_snapshots(read_agui(response.iter_lines()))
    check_lifecycle(rest)
    assert kinds(rest) == [
        "RUN_STARTED",
        "CUSTOM",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert rest[1]["name"] == "tether.in_doubt" and rest[1]["value"] == {"toolUseId": "t-slow", "name": "slow", "action": "rerun"}
    assert rest[2]["content"] == "slow done" and rest[-1]["result"]["answer"] == "all done"
    check_lifecycle(seen + rest[1:])  # what the client holds: one well-formed run, nothing twice
    assert (gate_dir / "calls.log").read_text().split() == ["slow", "th-real/t-slow", "slow", "th-real/t-slow"]
