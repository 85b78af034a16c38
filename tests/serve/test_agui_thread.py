"""AG-UI 1.0 beyond the event stream: a fresh client rebuilds a thread from ``MESSAGES_SNAPSHOT``
and ``STATE_SNAPSHOT``, a reconnect without an id goes to the latest AG-UI run, client
(front-end) tools run in the client and survive a restart, client ``state`` goes into the run,
unknown input fields are stripped with a warning, and interrupt ids do not repeat across threads.

In process (Starlette's TestClient) on SQLite; ``test_agui_client.py`` runs the official
``@ag-ui/client`` against a real server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import AssistantMessage, ResumeEntry, RunAgentInput, Tool, ToolMessage, UserMessage
from starlette.testclient import TestClient

from tether import Agent
from tether.durable import SQLiteStore
from tether.models.scripted import ScriptedModel
from tether.serve import create_app

from .registry_module import approve
from .test_agui import AGENTS, BASE, check_lifecycle, error_of, kinds, post, reconnect

COLOR_TOOL = Tool(
    name="pick_color",
    description="Ask the user for a color",
    parameters={"type": "object", "properties": {"shade": {"type": "string"}}, "required": ["shade"]},
)


def mixed() -> Agent:
    """One reply that asks a human (``approve``) and calls the client's ``pick_color`` at once."""
    uses = [
        {"toolUse": {"toolUseId": "t-ok", "name": "approve", "input": {"what": "paint"}}},
        {"toolUse": {"toolUseId": "t-pick", "name": "pick_color", "input": {"shade": "cold"}}},
    ]
    return Agent(model=ScriptedModel([{"role": "assistant", "content": uses}, "both done"], stateful=True), tools=[approve])


def make_client(store: SQLiteStore) -> TestClient:
    app = create_app({**AGENTS, "mixed": mixed}, store, scan_interval=0.2, poll_interval=0.1)
    return TestClient(app, base_url=BASE)


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    with make_client(store) as client:
        yield client


def agui_body(thread: str, run: str, messages: list[Any], **fields: Any) -> dict[str, Any]:
    given = RunAgentInput(
        thread_id=thread,
        run_id=run,
        messages=messages,
        tools=fields.pop("tools", []),
        context=fields.pop("context", []),
        forwarded_props=fields.pop("forwarded_props", {}),
        state=fields.pop("state", {}),
        resume=fields.pop("resume", None),
    )
    body = given.model_dump(mode="json", by_alias=True, exclude_none=True)
    body.update(fields)
    return body


def snapshots(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The messages and the state a connection opened with."""
    assert kinds(events[:3]) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"], kinds(events[:3])
    return events[1]["messages"], events[2]["snapshot"]


# -- 1 and 2: snapshots, and a reconnect without an id -----------------------------------------


def test_a_fresh_client_rebuilds_a_finished_turn_and_finds_the_pending_interrupt(client: TestClient) -> None:
    post(client, "helper", agui_body("th-h", "r1", [UserMessage(id="c-1", content="hello")]))
    second = post(client, "helper", agui_body("th-h", "r2", [UserMessage(id="c-2", content="release?")]), whole=True)
    messages, _ = snapshots(second)
    assert messages == [  # the finished turn, then the prompt the client sent (its own id)
        {"id": "c-1", "role": "user", "content": "hello"},  # the ids the client gave its prompts
        {"id": "th-h/1", "role": "assistant", "content": "hi there"},
        {"id": "c-2", "role": "user", "content": "release?"},
    ]
    assert second[-1]["outcome"]["type"] == "interrupt"
    # a reloaded front end: no id, no runId; the latest AG-UI run (r2), not the thread's first
    fresh = reconnect(client, "helper", "th-h", None, whole=True)
    check_lifecycle(fresh)
    messages, state = snapshots(fresh)
    assert messages == [
        {"id": "c-1", "role": "user", "content": "hello"},
        {"id": "th-h/1", "role": "assistant", "content": "hi there"},
        {"id": "c-2", "role": "user", "content": "release?"},
    ]
    assert state == {}
    assert fresh[0]["runId"] == "r2" and fresh[0]["_id"] == "3"  # the step the first turn ended at
    assert "hi there" not in [e.get("delta") for e in fresh]  # the first AG-UI run is not replayed
    assert kinds(fresh)[3:] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS"] + [
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert fresh[-1]["runId"] == "r2"
    (question,) = fresh[-1]["outcome"]["interrupts"]
    assert question["id"] == second[-1]["outcome"]["interrupts"][0]["id"] and question["toolCallId"] == "t-helper"
    answer = [ResumeEntry(interrupt_id=question["id"], status="resolved", payload="yes")]
    third = post(client, "helper", agui_body("th-h", "r3", [], resume=answer), whole=True)
    messages, _ = snapshots(third)
    assert messages[-1] == {
        "id": "th-h/3",
        "role": "assistant",
        "content": "calling approve",
        "toolCalls": [{"id": "t-helper", "type": "function", "function": {"name": "approve", "arguments": '{"what": "release"}'}}],
    }
    assert third[-1]["result"]["answer"] == "released"
    # at rest again: the latest AG-UI run is r3; its snapshot holds the approval's tool message
    latest = reconnect(client, "helper", "th-h", None, whole=True)
    messages, _ = snapshots(latest)
    assert latest[0]["runId"] == "r3" and messages[-1]["role"] == "assistant" and len(messages) == 4
    results = [e for e in latest if e["type"] == "TOOL_CALL_RESULT"]
    assert [(e["toolCallId"], e["content"]) for e in results] == [("t-helper", "approved: yes")]
    whole_thread = reconnect(client, "helper", "th-h", "0", whole=True)  # an explicit id: from there, as before
    assert snapshots(whole_thread)[0] == [{"id": "c-1", "role": "user", "content": "hello"}] and whole_thread[0]["runId"] == "r1"


def test_a_reconnect_mid_run_snapshots_what_came_before_its_id(client: TestClient, gate_dir: Any) -> None:
    (gate_dir / "release").write_text("")
    full = post(client, "worker", agui_body("th-w", "r1", [UserMessage(id="u", content="go")]))
    result = next(e for e in full if e["type"] == "TOOL_CALL_RESULT")
    rest = reconnect(client, "worker", "th-w", result["_id"], whole=True)
    messages, _ = snapshots(rest)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["toolCalls"][0]["id"] == "t-slow" and messages[2] == {
        "id": result["messageId"],
        "role": "tool",
        "content": "slow done",
        "toolCallId": "t-slow",
    }
    assert [e.get("delta") for e in rest if e["type"] == "TEXT_MESSAGE_CONTENT"] == ["all done"]


# -- 3: client (front-end) tools ------------------------------------------------------------------


def test_a_client_tool_call_ends_the_run_and_its_tool_message_continues_it_after_a_restart(store: SQLiteStore) -> None:
    prompt = UserMessage(id="u1", content="paint it")
    with make_client(store) as client:
        first = post(client, "painter", agui_body("th-p", "r1", [prompt], tools=[COLOR_TOOL]))
        check_lifecycle(first)
        assert kinds(first) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"] + [
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "RUN_FINISHED",
        ]
        assert first[4]["toolCallName"] == "pick_color" and json.loads(first[5]["delta"]) == {"shade": "warm"}
        assert first[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["t-color"]}  # the client runs the tool
        assert first[-1]["result"]["status"] == "interrupted"
        assert client.get("/runs/th-p").json()["status"] == "interrupted"
    with make_client(store) as client:  # another server process: the pending call is in the store
        call = AssistantMessage(id=first[1]["messageId"], content="calling pick_color", tool_calls=[])
        answer = ToolMessage(id="tm-1", tool_call_id="t-color", content="teal")
        body = agui_body("th-p", "r2", [prompt, call, answer], tools=[], state={"palette": "autumn"})  # a resume keeps the stored tools
        second = post(client, "painter", body, whole=True)
        check_lifecycle(second)
        messages, _ = snapshots(second)
        assert [m["id"] for m in messages] == ["u1", "th-p/1"]  # the client's own tool message comes back as ours
        assert [(e["toolCallId"], e["content"]) for e in second if e["type"] == "TOOL_CALL_RESULT"] == [("t-color", "teal")]
        assert second[-1]["outcome"] == {"type": "success"} and second[-1]["result"]["answer"] == "painted teal"
        again = post(client, "painter", body, whole=True)  # a retried request: the first one's AG-UI run, nothing run again
        assert [e for e in again if e["type"] == "TOOL_CALL_RESULT"] == [e for e in second if e["type"] == "TOOL_CALL_RESULT"]
        assert client.get("/runs/th-p").json()["turns"] == 1
    stored = store.head("th-p")
    assert stored is not None and stored["state"]["tether.serve"]["clientTools"][0]["name"] == "pick_color"
    assert stored["state"]["palette"] == "autumn"  # the answering input's state, merged by the resume


def test_a_tool_message_that_answers_nothing_pending_is_refused(client: TestClient, store: SQLiteStore) -> None:
    post(client, "painter", agui_body("th-q", "r1", [UserMessage(id="u1", content="paint")], tools=[COLOR_TOOL]))
    steps = len(store.history("th-q"))
    stray = agui_body("th-q", "r2", [ToolMessage(id="tm", tool_call_id="t-other", content="x")])
    assert "waits for answers to" in error_of(client.post("/agents/painter/agui", json=stray), 400)
    twice = agui_body("th-q", "r2", [UserMessage(id="u", content="hi")], tools=[COLOR_TOOL, COLOR_TOOL])
    assert "a name is declared twice" in error_of(client.post("/agents/painter/agui", json=twice), 400)
    assert len(store.history("th-q")) == steps


def test_a_client_tool_call_beside_a_question_for_a_human_is_answered_with_it(client: TestClient) -> None:
    first = post(client, "mixed", agui_body("th-m", "r1", [UserMessage(id="u", content="paint?")], tools=[COLOR_TOOL]))
    outcome = first[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    assert sorted((item["reason"], item["toolCallId"]) for item in outcome["interrupts"]) == [
        ("approve", "t-ok"),
        ("tether.client_tool", "t-pick"),
    ]
    human = next(item for item in outcome["interrupts"] if item["reason"] == "approve")
    alone = agui_body("th-m", "r2", [], resume=[ResumeEntry(interrupt_id=human["id"], status="resolved", payload="yes")])
    assert "waits for answers to" in error_of(client.post("/agents/mixed/agui", json=alone), 400)  # the tool's result is missing too
    both = agui_body(
        "th-m",
        "r2",
        [ToolMessage(id="tm", tool_call_id="t-pick", content="navy")],
        resume=[ResumeEntry(interrupt_id=human["id"], status="resolved", payload="yes")],
    )
    second = post(client, "mixed", both)
    check_lifecycle(second)
    assert sorted((e["toolCallId"], e["content"]) for e in second if e["type"] == "TOOL_CALL_RESULT") == [
        ("t-ok", "approved: yes"),
        ("t-pick", "navy"),
    ]
    assert second[-1]["result"]["answer"] == "both done"


def test_a_client_tool_cannot_take_the_name_of_a_server_tool(client: TestClient, gate_dir: Any, caplog: pytest.LogCaptureFixture) -> None:
    (gate_dir / "release").write_text("")
    shadow = Tool(name="slow", description="the client's slow", parameters={"type": "object"})
    with caplog.at_level(logging.WARNING, logger="tether.serve.clientturn"):
        events = post(client, "worker", agui_body("th-sh", "r1", [UserMessage(id="u", content="go")], tools=[shadow, COLOR_TOOL]))
    assert [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["slow done"]  # the server's tool ran
    assert events[-1]["outcome"] == {"type": "success"} and events[-1]["result"]["answer"] == "all done"
    assert [r.getMessage() for r in caplog.records] == ["client tool 'slow' is left out: the agent has a tool of that name"]
    head = client.get("/runs/th-sh").json()
    assert head["status"] == "finished"


# -- 4: state, context, forwardedProps (unknown fields: test_agui_input.py) ----------------------------------------------


def test_client_state_is_merged_into_the_agent_state_with_the_turn(client: TestClient, store: SQLiteStore) -> None:
    body = agui_body(
        "th-s",
        "r1",
        [UserMessage(id="u", content="remember")],
        state={"items": ["bread"], "theme": "dark"},
        context=[{"description": "page", "value": "/orders"}],
        forwarded_props={"tenant": "acme"},
    )
    events = post(client, "keeper", body)
    check_lifecycle(events)
    first_step = store.history("th-s")[0].head["state"]
    assert first_step["theme"] == "dark" and first_step["items"] == ["bread"]  # recorded by the turn's first write
    recorded = first_step["tether.serve"]["agui"]
    assert recorded == {"context": [{"description": "page", "value": "/orders"}], "forwardedProps": {"tenant": "acme"}}
    head = store.head("th-s")
    assert head is not None and head["state"]["items"] == ["bread", "milk", "eggs"] and head["state"]["theme"] == "dark"
    fresh = reconnect(client, "keeper", "th-s", None, whole=True)
    assert snapshots(fresh)[1] == {}  # the state before the turn: its first step brings the client's
    first_delta = next(e for e in fresh if e["type"] == "STATE_DELTA")["delta"]
    assert {"op": "add", "path": "/theme", "value": "dark"} in first_delta
    own = agui_body("th-s", "r2", [UserMessage(id="u2", content="more")], state={"tether.serve": {}})
    assert "state.tether.serve" in error_of(client.post("/agents/keeper/agui", json=own), 400)
    bad = agui_body("th-s", "r2", [UserMessage(id="u2", content="more")])
    bad["state"] = [1]
    assert "state must be a JSON object" in error_of(client.post("/agents/keeper/agui", json=bad), 400)
    assert store.head("th-s") == head


# -- 5: interrupt ids ----------------------------------------------------------------------------


def test_interrupt_ids_do_not_repeat_across_threads(client: TestClient) -> None:
    ids = []
    for thread in ("th-i1", "th-i2"):
        (question,) = post(client, "asker", agui_body(thread, "r1", [UserMessage(id="u", content="deploy?")]))[-1]["outcome"]["interrupts"]
        assert question["id"].startswith(f"{thread}/")
        ids.append(question["id"])
    assert ids[0] != ids[1]
    assert client.get("/runs/th-i1").json()["interrupts"][0]["id"] == client.get("/runs/th-i2").json()["interrupts"][0]["id"]  # Tether's
    assert "unknown interrupt id" in error_of(
        client.post("/agents/asker/agui", json=agui_body("th-i1", "r2", [], resume=[ResumeEntry(interrupt_id=ids[1], status="resolved")])),
        400,
    )
