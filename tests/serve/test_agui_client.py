"""The official AG-UI client (``@ag-ui/client`` 1.0's ``HttpAgent``, under node, installed from
``tests/serve/node/package-lock.json`` by ``scripts/test``) against a real ``tether serve``
(uvicorn, SQLite): a fresh client rebuilds a thread with a finished turn and a pending interrupt
from ``MESSAGES_SNAPSHOT`` and answers it; a front-end tool round trip, also across a server
SIGKILL between the call and its result; an input with unknown fields runs, with a warning in
the server's log.

The node side is ``tests/serve/node/agui_client.mjs``."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import ServerProcess
from .test_agui import agui_input, read_agui

NODE_DIR = Path(__file__).parent / "node"
SCRIPT = NODE_DIR / "agui_client.mjs"


@pytest.fixture
def server(tmp_path: Path, gate_dir: Path) -> Iterator[ServerProcess]:
    """A real ``tether serve`` of the shared registry that logs warnings (see ``logged_registry.py``)."""
    proc = ServerProcess(tmp_path, gate_dir, tmp_path / "runs.db", registry="logged_registry:AGENTS")
    try:
        yield proc
    finally:
        proc.stop()


def run_client(server: ServerProcess, scenario: str, thread: str, given: Any = None) -> dict[str, Any]:
    """One scenario of ``agui_client.mjs`` against ``server`` (``given``: JSON for its stdin): what the client holds, as JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: these tests run the official @ag-ui/client under node")
    if not (NODE_DIR / "node_modules" / "@ag-ui" / "client" / "package.json").is_file():
        pytest.fail(f"@ag-ui/client is not installed in {NODE_DIR}: run scripts/test (npm ci there)")
    command = [node, str(SCRIPT), server.url, scenario, thread]
    stdin = "" if given is None else json.dumps(given)
    done = subprocess.run(command, cwd=NODE_DIR, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"node failed ({done.returncode}):\n{done.stderr}\nserver log:\n{server.log.read_text()}"
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def post_turn(http: httpx.Client, agent: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with http.stream("POST", f"/agents/{agent}/agui", json=body) as response:
        assert response.status_code == 200, response.read()
        return read_agui(response.iter_lines())


def test_a_fresh_official_client_rebuilds_a_finished_turn_and_a_pending_interrupt(server: ServerProcess) -> None:
    server.start()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        post_turn(http, "helper", agui_input("th-node", "r1", "hello"))
        asked = post_turn(http, "helper", agui_input("th-node", "r2", "release?"))
    assert asked[-1]["outcome"]["type"] == "interrupt"
    reply = run_client(server, "rebuild", "th-node")
    rebuilt = reply["rebuilt"]
    assert [(m["role"], m.get("content")) for m in rebuilt["messages"]] == [
        ("user", "hello"),
        ("assistant", "hi there"),  # the finished turn, from MESSAGES_SNAPSHOT
        ("user", "release?"),
        ("assistant", "calling approve"),  # the latest AG-UI run, replayed
    ]
    assert rebuilt["messages"][-1]["toolCalls"][0]["id"] == "t-helper"
    (pending,) = rebuilt["pendingInterrupts"]
    assert pending["id"] == asked[-1]["outcome"]["interrupts"][0]["id"] and pending["toolCallId"] == "t-helper"
    assert reply["reconnect"]["types"][:3] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    assert [f["outcome"] for f in reply["reconnect"]["finished"]] == ["interrupt"]
    # the rebuilt client answers the interrupt: the run finishes
    assert [f["outcome"] for f in reply["answered"]["finished"]] == ["success"] and "error" not in reply["answered"]
    assert [m.get("content") for m in reply["messages"]][-2:] == ["approved: yes", "released"]
    assert reply["pendingInterrupts"] == []


def test_a_front_end_tool_round_trip_with_the_official_client(server: ServerProcess) -> None:
    server.start()
    reply = run_client(server, "tool", "th-node-tool")
    (first,) = reply["first"]["finished"]
    assert first["outcome"] == "success" and first["pendingToolCallIds"] == ["t-color"]
    assert [call["function"]["name"] for call in reply["calls"]] == ["pick_color"]
    assert [f["outcome"] for f in reply["second"]["finished"]] == ["success"]
    assert [(m["role"], m.get("content")) for m in reply["messages"]] == [
        ("user", "paint it"),
        ("assistant", "calling pick_color"),
        ("tool", "teal"),  # the client's result, once (the snapshot replaced the client's copy with the server's)
        ("assistant", "painted teal"),
    ]
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/runs/th-node-tool").json()["status"] == "finished"


def test_a_pending_front_end_call_survives_a_server_kill(server: ServerProcess) -> None:
    server.start()
    held = run_client(server, "ask", "th-node-kill")
    assert held["first"]["finished"][-1]["pendingToolCallIds"] == ["t-color"]
    server.kill()  # the call waits in the store, not in the process
    server.start()
    reply = run_client(server, "answer", "th-node-kill", held)  # another client process, another server process
    assert [f["outcome"] for f in reply["second"]["finished"]] == ["success"]
    assert [(m["role"], m.get("content")) for m in reply["messages"]][-2:] == [("tool", "teal"), ("assistant", "painted teal")]


def test_unknown_fields_from_the_official_client_are_warned_not_fatal(server: ServerProcess) -> None:
    server.start()
    reply = run_client(server, "unknown", "th-node-new")
    assert [f["outcome"] for f in reply["run"]["finished"]] == ["success"] and "error" not in reply["run"]
    assert reply["messages"][-1]["content"] == "hello there"
    log = server.log.read_text()
    assert "unknown fields ignored: futureField, messages.0.mood" in log, log
