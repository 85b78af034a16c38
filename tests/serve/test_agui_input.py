"""The AG-UI input (:mod:`tether.serve.agui_input`): bad input is a 4xx naming the problem with
nothing stored; fields the AG-UI models do not declare are stripped with a warning, not refused."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from ag_ui.core import ImageInputContent, InputContentUrlSource, RunAgentInput, TextInputContent, UserMessage
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from .test_agui import AGENTS, BASE, agui_input, check_lifecycle, error_of, post, read_agui


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    with TestClient(create_app(AGENTS, store, scan_interval=0.2, poll_interval=0.1), base_url=BASE) as client:
        yield client


def _body(**changes: Any) -> bytes:
    body = agui_input("th-bad", "r1")
    body.update(changes)
    return json.dumps({k: v for k, v in body.items() if v is not ...}).encode()


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "problem"),
    [
        ("POST", "/agents/chat/agui", b"{not json", {}, 400, "not valid JSON"),
        ("POST", "/agents/chat/agui", b"[]", {}, 400, "must be a JSON object"),
        ("POST", "/agents/chat/agui", _body(threadId=...), {}, 400, "not a RunAgentInput: threadId: Field required"),
        ("POST", "/agents/chat/agui", _body(messages="hi"), {}, 400, "not a RunAgentInput: messages"),
        ("POST", "/agents/chat/agui", _body(threadId="../etc"), {}, 400, "threadId: run_id '../etc' is invalid"),
        ("POST", "/agents/chat/agui", _body(messages=[]), {}, 400, "messages has no user message"),
        ("POST", "/agents/chat/agui", _body(messages=[{"id": "u", "role": "user", "content": " "}]), {}, 400, "is empty"),
        ("POST", "/agents/chat/agui", _body(resume=[{"interruptId": "i", "status": "maybe"}]), {}, 400, "resume.0.status"),
        ("POST", "/agents/chat/agui", _body(resume=[{"interruptId": "i", "status": "resolved"}]), {}, 404, "no run 'th-bad'"),
        ("POST", "/agents/nobody/agui", _body(), {}, 404, "unknown agent 'nobody'"),
        ("POST", "/agents/chat/agui", b'{"threadId": "' + b"x" * (1 << 20) + b'"}', {}, 413, "over the limit"),
        ("GET", "/agents/chat/agui/ghost", None, {}, 404, "no run 'ghost'"),
        ("GET", "/agents/nobody/agui/ghost", None, {}, 404, "unknown agent 'nobody'"),
        ("GET", "/agents/chat/agui/ghost", None, {"Last-Event-ID": "x.y"}, 400, "'x.y' is not one of this stream's ids"),
        ("DELETE", "/agents/chat/agui", None, {}, 405, "DELETE is not allowed"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_problem_and_stores_nothing(
    client: TestClient, store: SQLiteStore, method: str, path: str, body: bytes | None, headers: dict[str, str], status: int, problem: str
) -> None:
    response = client.request(method, path, content=body, headers={"Content-Type": "application/json", **headers})
    assert problem in error_of(response, status)
    assert store.list_runs() == []


def test_non_text_prompt_content_is_refused(client: TestClient, store: SQLiteStore) -> None:
    image = ImageInputContent(source=InputContentUrlSource(value="https://example.invalid/cat.png"))
    message = UserMessage(id="u", content=[TextInputContent(text="what is it?"), image])
    given = RunAgentInput(thread_id="th-img", run_id="r", messages=[message], tools=[], context=[], forwarded_props=None)
    response = client.post("/agents/chat/agui", json=given.model_dump(mode="json", by_alias=True))
    assert "messages[0].content[1] is 'image' content" in error_of(response, 400)
    assert store.list_runs() == []
    parts = UserMessage(id="u", content=[TextInputContent(text="hi")])
    given = RunAgentInput(thread_id="th-txt", run_id="r", messages=[parts], tools=[], context=[], forwarded_props=None)
    with client.stream("POST", "/agents/chat/agui", json=given.model_dump(mode="json", by_alias=True)) as response:
        assert read_agui(response.iter_lines())[-1]["result"]["answer"] == "hello there"


def test_a_thread_of_another_agent_is_refused(client: TestClient) -> None:
    post(client, "chat", agui_input("th-chat", "r1"))
    assert "not a run of agent 'asker'" in error_of(client.post("/agents/asker/agui", json=agui_input("th-chat", "r2")), 409)
    assert "is a run of agent 'chat', not of agent 'asker'" in error_of(client.get("/agents/asker/agui/th-chat"), 409)


def test_the_openapi_document_has_the_agui_endpoint(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths["/agents/{name}/agui"]) == {"post"} and set(paths["/agents/{name}/agui/{thread_id}"]) == {"get"}
    schema = paths["/agents/{name}/agui"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {field.alias or name for name, field in RunAgentInput.model_fields.items() if field.is_required()}


def test_unknown_fields_are_stripped_with_a_warning_not_refused(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    body = agui_input("th-u", "r1")
    body["futureField"] = {"x": 1}
    body["messages"][0]["mood"] = "cheerful"
    with caplog.at_level(logging.WARNING, logger="tether.serve.agui_input"):
        events = post(client, "chat", body)
    check_lifecycle(events)
    assert events[-1]["result"]["answer"] == "hello there"
    (warning,) = [r for r in caplog.records if "unknown fields" in r.getMessage()]
    assert "futureField" in warning.getMessage() and "messages.0.mood" in warning.getMessage()
