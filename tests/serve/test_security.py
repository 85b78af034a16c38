"""The gate's strict ``Host`` parsing: only a well-formed host names the server."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.serve import create_app
from tether.serve.security import LOOPBACK_NAMES, host_allowed, parse_host

from . import registry_module
from .test_app import BASE, error_of


@pytest.mark.parametrize(
    "header",
    [
        "127.0.0.1:80@evil.example",
        "127.0.0.1@evil.example",
        "localhost:80:81",
        "127.0.0.1:99999",
        "127.0.0.1:",
        "localhost/path",
        "user@localhost",
        "::1",
        "[::1",
        "local host",
        "-localhost",
        "",
    ],
)
def test_a_malformed_host_is_refused_whatever_is_allowed(header: str) -> None:
    assert parse_host(header) is None
    assert not host_allowed(header, LOOPBACK_NAMES)
    assert not host_allowed(header, ["*"]) or header == ""  # no header at all: allowed only with "*"


def test_well_formed_hosts_match_by_name_or_name_and_port() -> None:
    assert parse_host("LocalHost:8000") == ("localhost", "8000")
    assert parse_host("[::1]:8000") == ("[::1]", "8000")
    assert parse_host("agents.example.com") == ("agents.example.com", None)
    assert host_allowed("127.0.0.1:8000", LOOPBACK_NAMES) and host_allowed("[::1]", LOOPBACK_NAMES)
    assert host_allowed("agents.example.com:443", ["agents.example.com:443"])
    assert not host_allowed("agents.example.com:444", ["agents.example.com:443"])
    assert not host_allowed("evil.example", LOOPBACK_NAMES) and host_allowed("evil.example", ["*"])


def test_the_server_refuses_a_host_with_userinfo(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store), base_url=BASE) as client:
        refused = client.get("/runs", headers={"Host": "127.0.0.1:80@evil.example"})
        assert "does not answer to Host '127.0.0.1:80@evil.example'" in error_of(refused, 421)
        posted = client.post("/agents/chat/runs", json={"prompt": "hi"}, headers={"Host": "127.0.0.1:80@evil.example"})
        assert posted.status_code == 421
        assert client.get("/runs", headers={"Host": "127.0.0.1:8000"}).status_code == 200
    assert store.list_runs() == []
