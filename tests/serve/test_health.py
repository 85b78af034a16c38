"""``/healthz`` (the process is up) and ``/readyz`` (the store answers; 503 JSON with
``Retry-After`` otherwise), served to probes without the token or the Host check."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tether.durable import SQLiteStore
from tether.errors import StoreError
from tether.serve import create_app

from . import registry_module
from .test_app import BASE


class Outage:
    """A store that can be cut off: while ``down`` every call fails as a lost database does."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.store, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise StoreError("could not connect to the database (connection refused)")
            return attribute(*args, **kwargs)

        return call


def test_readyz_says_whether_the_store_answers(store: SQLiteStore) -> None:
    outage = Outage(store)
    app = create_app(registry_module.AGENTS, outage, scan_interval=60)  # type: ignore[arg-type]
    with TestClient(app, base_url=BASE) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").json() == {"status": "ready"}
        outage.down = True
        response = client.get("/readyz")
        assert response.status_code == 503 and response.headers["retry-after"] == "5"
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["status"] == 503 and "the store is unreachable (StoreError: could not connect" in error["message"]
        assert client.get("/healthz").status_code == 200  # the process is still up
        outage.down = False
        assert client.get("/readyz").status_code == 200


def test_probes_need_no_token_and_no_host_name(store: SQLiteStore) -> None:
    app = create_app(registry_module.AGENTS, store, token="s3cret", allowed_hosts=["agents.example.com"])
    with TestClient(app, base_url="http://10.0.0.7:8000") as client:  # a probe by the pod's address
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/runs").status_code == 421  # everything else keeps both checks
        assert client.post("/healthz").status_code == 421  # a probe reads: only GET and HEAD pass by address
    with TestClient(app, base_url="https://agents.example.com") as client:
        assert client.get("/runs").status_code == 401
        paths = client.get("/openapi.json", headers={"Authorization": "Bearer s3cret"}).json()["paths"]
        assert paths["/readyz"]["get"]["security"] == [] and "503" in paths["/readyz"]["get"]["responses"]
