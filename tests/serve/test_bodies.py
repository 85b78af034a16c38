"""Request bodies: a lone surrogate (``"\\ud800"``, valid JSON text that no store can hold) is a
400 naming the field, on every endpoint that takes a body, and nothing is stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .test_app import BASE, error_of, wait_status

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client(store: SQLiteStore) -> Iterator[TestClient]:
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=0.2), base_url=BASE) as client:
        yield client


def test_a_lone_surrogate_is_a_400_naming_the_field_and_nothing_is_stored(client: TestClient, store: SQLiteStore) -> None:
    raw = b'{"prompt": "hi \\ud800"}'  # the JSON text a client sends: an escaped lone surrogate
    assert error_of(client.post("/agents/chat/runs", content=raw, headers=JSON), 400).startswith("prompt holds a lone surrogate")
    nested = b'{"prompt": [{"text": "ok"}, {"text": "\\udfff"}]}'
    assert error_of(client.post("/agents/chat/runs", content=nested, headers=JSON), 400).startswith("prompt[1].text holds a lone surrogate")
    agui = b'{"threadId": "t1", "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "\\ud83d"}]}'
    message = error_of(client.post("/agents/chat/agui", content=agui, headers=JSON), 400)
    assert message.startswith("messages[0].content holds a lone surrogate")
    assert store.list_runs() == []

    assert client.post("/agents/asker/runs", json={"prompt": "deploy?", "run_id": "s1"}).status_code == 202
    (question,) = wait_status(client, "s1", "interrupted")["interrupts"]
    before = store.head("s1")
    answer = b'{"responses": {"%s": "yes \\udc00"}}' % question["id"].encode()
    assert error_of(client.post("/runs/s1/interrupts", content=answer, headers=JSON), 400).startswith(
        f"responses.{question['id']} holds a lone surrogate"
    )
    assert store.head("s1") == before
    assert client.post("/agents/chat/runs", json={"prompt": "a \U0001f600 pair is fine"}).status_code == 202
