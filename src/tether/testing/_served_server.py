"""One ``tether serve`` process of a served contract check, on loopback: started (optionally held
inside its N-th tool call, see :mod:`tether.testing._served_registry`), killed. Not a public API."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from ..errors import TetherError
from ._http import request
from ._procs import _Plan
from ._served_registry import FACTORY, HOLD, LOG


class _Server:
    """One ``tether serve`` process of the check, on loopback."""

    def __init__(self, plan: _Plan, store: str, log: Path, name: str) -> None:
        self.plan, self.store, self.starts_log = plan, store, log
        self.output = plan.workdir / f"server-{name}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, hold: str | None = None) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{port}"
        scratch = self.plan.workdir / "served" / "scratch"  # the agent's outside world (TETHER_CRASHTEST_SCRATCH, as for a child)
        scratch.mkdir(parents=True, exist_ok=True)
        env = {**self.plan.env, FACTORY: self.plan.factory, LOG: str(self.starts_log), "TETHER_CRASHTEST_SCRATCH": str(scratch)}
        # The factory imports as in the check's children, which put the parent's sys.path first.
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*self.plan.sys_path, *env.get("PYTHONPATH", "").split(os.pathsep)]))
        env.pop(HOLD, None)
        if hold is not None:
            env[HOLD] = hold
        command = [sys.executable, "-m", "tether", "--store", self.store, "serve", "tether.testing._served_registry:AGENTS"]
        command += ["--port", str(port), "--scan-interval", "0.3"]
        with open(self.output, "ab") as out:
            self.process = subprocess.Popen(command, cwd=os.getcwd(), env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.plan.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TetherError(f"resume contract: the server exited ({self.process.returncode}): {self.output.read_text()[-2000:]}")
            try:
                if request(self.url + "/healthz", timeout=1)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise TetherError(f"resume contract: the server did not answer in {self.plan.timeout:.0f} s; see {self.output}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
