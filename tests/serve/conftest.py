"""Fixtures of the serve tests: the registry module's folder, and a real server process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.durable.conftest import pg_conninfo, pg_server  # noqa: F401  (the PostgreSQL takeover test)
from tether.durable import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def gate_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the registry's blocking tools signal through (``$SERVE_TEST_DIR``)."""
    folder = tmp_path / "gate"
    folder.mkdir()
    monkeypatch.setenv("SERVE_TEST_DIR", str(folder))
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """``tether serve registry_module:AGENTS`` in a subprocess on loopback (started, killed, started again)."""

    def __init__(self, tmp_path: Path, gate: Path, store: Path | str, registry: str = "registry_module:AGENTS") -> None:
        self.tmp_path = tmp_path
        self.registry = registry
        self.gate = gate
        self.store = store
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tmp_path / f"server-{self.port}.log"

    def start(self, *extra: str) -> None:
        env = dict(os.environ, SERVE_TEST_DIR=str(self.gate), PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(HERE)]))
        command = [sys.executable, "-m", "tether", "--store", str(self.store), "serve", self.registry]
        command += ["--port", str(self.port), "--scan-interval", "0.5", *extra]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, cwd=self.tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/openapi.json", timeout=1).status_code in (200, 401):  # 401: it has a --token
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError(f"the server did not answer: {self.log.read_text()}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def server(tmp_path: Path, gate_dir: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path, gate_dir, tmp_path / "runs.db")
    try:
        yield proc
    finally:
        proc.stop()


def read_sse(response: httpx.Response, *, until: Any = None) -> list[dict[str, Any]]:
    """Parse an SSE stream into ``{"id"?, "type", "data"}`` events, until ``end`` (or ``until(event)``)."""
    import json

    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in response.iter_lines():
        if line == "":
            if "type" in current:
                current["data"] = json.loads(current["data"])
                events.append(current)
                if current["type"] == "end" or (until is not None and until(current)):
                    return events
            current = {}
        elif line.startswith(":") or line.startswith("retry:"):
            continue
        else:
            key, _, value = line.partition(": ")
            current[{"event": "type"}.get(key, key)] = value
    return events


@pytest.fixture
def artifacts(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Where this test's screenshots go: ``$TETHER_TEST_ARTIFACTS/<test>`` or tmp_path."""
    root = os.environ.get("TETHER_TEST_ARTIFACTS")
    folder = Path(root) / request.node.name if root else tmp_path / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def store(tmp_path: Path, gate_dir: Path) -> Iterator[SQLiteStore]:
    """The served tests' SQLite store (the gate directory of their tools made first)."""
    store = SQLiteStore(tmp_path / "runs.db")
    yield store
    store.close()
