"""Fixtures and helpers of the MCP tests: the toolbox MCP server (tests/mcp_sources/servers/toolbox.py) over stdio and over
HTTP on loopback, and its call log (one JSON line per ``tools/call``, written server-side)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.mcp import MCPServerHTTP, MCPServerStdio

TOOLBOX = Path(__file__).parent / "servers" / "toolbox.py"


class CallLog:
    """The server's record of the calls it received."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def tools(self) -> list[str]:
        return [entry["tool"] for entry in self.entries()]

    def pids(self) -> set[int]:
        return {int(entry["pid"]) for entry in self.entries()}


@pytest.fixture
def call_log(tmp_path: Path) -> CallLog:
    return CallLog(tmp_path / "calls.jsonl")


@pytest.fixture
def stdio_server(call_log: CallLog) -> Callable[..., MCPServerStdio]:
    """``stdio_server(mode="", **options)``: an MCPServerStdio running the toolbox."""

    def make(mode: str = "", **options: Any) -> MCPServerStdio:
        options.setdefault("startup_timeout", 20)
        options.setdefault("call_timeout", 20)
        return MCPServerStdio(sys.executable, [str(TOOLBOX), "--log", str(call_log.path)], env={"TOOLBOX_MODE": mode}, **options)

    return make


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_url(call_log: CallLog) -> Iterator[str]:
    """The toolbox served over streamable HTTP on 127.0.0.1 (a subprocess, waited for by polling)."""
    yield from serve_http(call_log)


@pytest.fixture
def http_json_url(call_log: CallLog) -> Iterator[str]:
    """As ``http_url``, answering with plain JSON bodies instead of event streams."""
    yield from serve_http(call_log, "--json-response")


def serve_http(call_log: CallLog, *options: str, script: Path = TOOLBOX) -> Iterator[str]:
    """Serve ``script`` (a test MCP server taking ``--http PORT --log FILE``) on loopback."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(script), "--http", str(port), "--log", str(call_log.path), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the HTTP toolbox exited: {proc.stderr.read() if proc.stderr else ''}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the HTTP toolbox did not listen within 30 s") from None
                time.sleep(0.05)  # polling for readiness, not synchronising on time
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()


@pytest.fixture
def http_server(http_url: str) -> Callable[..., MCPServerHTTP]:
    return http_maker(http_url)


@pytest.fixture
def http_json_server(http_json_url: str) -> Callable[..., MCPServerHTTP]:
    return http_maker(http_json_url)


def http_maker(url: str) -> Callable[..., MCPServerHTTP]:
    def make(**options: Any) -> MCPServerHTTP:
        options.setdefault("startup_timeout", 20)
        options.setdefault("call_timeout", 20)
        return MCPServerHTTP(url, **options)

    return make
