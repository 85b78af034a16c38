"""The hostile-input sweep of :mod:`tests.serve.test_hostile` over the A2A endpoint and the
agent card (and the Host check over the endpoints that sweep left out: metrics, the OpenAPI
document, AG-UI): malformed Host headers and foreign Origins are refused before A2A sees them, a lone
surrogate in a message's text is a 400; every answer is JSON, nothing is stored, nothing logs a
traceback or an error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app

from . import registry_module
from .test_app import BASE
from .test_hostile import BAD_HOSTS, BAD_ORIGINS, SURROGATE, no_fault_logged, refused, rows

A2A = {"A2A-Version": "1.0", "content-type": "application/json"}


def send(text: bytes, message_id: str = "h-1") -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "'
        + message_id.encode()
        + b'", "role": "ROLE_USER", "parts": [{"text": '
        + text
        + b"}]}}}"
    )


def test_hostile_requests_to_a2a_are_refused_in_json_and_change_nothing(
    tmp_path: Path, store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with TestClient(create_app(registry_module.AGENTS, store, scan_interval=60), base_url=BASE, raise_server_exceptions=False) as client:
        answered = client.post("/agents/chat/a2a", content=send(b'"hi"', "h-0"), headers=A2A)
        assert answered.status_code == 200 and answered.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        before = rows(tmp_path / "runs.db")

        for body in [send(SURROGATE), send(b'"ok ' + SURROGATE[1:-1] + b' ok"'), send(b'"hi"', "\\udc80")]:
            response = client.post("/agents/chat/a2a", content=body, headers=A2A)
            refused(response)
            assert "surrogate" in response.json()["error"]["message"]
        left_out = [("GET", "/metrics"), ("GET", "/openapi.json"), ("POST", "/agents/chat/agui"), ("GET", "/agents/chat/agui/f1")]
        for method, path in [("POST", "/agents/chat/a2a"), ("GET", "/agents/chat/a2a/.well-known/agent-card.json"), *left_out]:
            for host in BAD_HOSTS:
                response = client.request(method, path, content=send(b'"hi"', "h-2"), headers={**A2A, "host": host})
                assert response.status_code == 421, (host, response.text)
                refused(response)
        for origin in BAD_ORIGINS:
            response = client.post("/agents/chat/a2a", content=send(b'"hi"', "h-3"), headers={**A2A, "origin": origin})
            assert response.status_code == 403, (origin, response.text)
            refused(response)
        assert rows(tmp_path / "runs.db") == before
    no_fault_logged(caplog)
