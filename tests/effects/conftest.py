"""A real HTTP server on loopback that records every request's method, path, headers and body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Seen:
    """One request the server answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Recorder:
    """The server's address and what it saw."""

    url: str
    seen: list[Seen] = field(default_factory=list)

    def keys(self, method: str = "POST") -> list[str | None]:
        """The ``Idempotency-Key`` of each request with ``method``, in order (None: no header)."""
        return [s.headers.get("idempotency-key") for s in self.seen if s.method == method]


def serve(recorder: Recorder) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorder.seen.append(Seen(self.command, self.path, headers, body))
            reply = json.dumps({"ok": True, "key": headers.get("idempotency-key")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    host, port = server.server_address[:2]
    recorder.url = f"http://{host!s}:{port}"
    return server


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A recording server on 127.0.0.1 (a free port), stopped after the test."""
    recorder = Recorder("")
    server = serve(recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
