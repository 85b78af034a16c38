"""An MCP tool of a durable Strands agent can read its call's idempotency key: the request's
``_meta`` carries ``tether/idempotencyKey`` (``<run_id>/<toolUseId>``, the same when a call in
doubt runs again), next to the client's own ``meta``; a call no Tether run records carries none."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters, stdio_client
from strands import Agent
from strands.tools.mcp import MCPClient

from tether.strands._mcp import META_KEY
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS, answered, open_store

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

SCRIPT: list[dict[str, Any]] = [{"tools": [("tu-1", "charge", {"amount": 3}), ("tu-2", "charge", {"amount": 4})]}, {"text": "done"}]


def client(**options: Any) -> MCPClient:
    server = StdioServerParameters(command=sys.executable, args=[str(PROGRAMS / "mcp_key_server.py")])
    return MCPClient(lambda: stdio_client(server), **options)


def seen(agent: Agent) -> dict[str, dict[str, Any]]:
    """What the server read of each call: toolUseId -> the ``_meta`` it answered with."""
    return {
        block["toolResult"]["toolUseId"]: json.loads(block["toolResult"]["content"][0]["text"])
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    }


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_the_server_reads_the_idempotency_key(executor: str, tmp_path: Path) -> None:
    from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor

    store = str(tmp_path / "runs.db")
    with client(meta={"app/trace": "t-7"}) as mcp:
        chosen = ConcurrentToolExecutor() if executor == "concurrent" else SequentialToolExecutor()
        manager = TetherSessionManager("m", store=store)
        agent = Agent(
            model=ScriptModel(SCRIPT), tools=mcp.list_tools_sync(), tool_executor=chosen, callback_handler=None, session_manager=manager
        )
        agent("charge")
        manager.close()
    run_id = "strands.m.default"
    assert seen(agent) == {
        "tu-1": {"app/trace": "t-7", "tether/idempotencyKey": f"{run_id}/tu-1"},
        "tu-2": {"app/trace": "t-7", "tether/idempotencyKey": f"{run_id}/tu-2"},
    }
    stored = open_store(store).load(run_id)
    assert stored is not None and answered(stored.messages) == {"tu-1", "tu-2"}


def test_a_call_no_run_records_carries_no_key() -> None:
    with client() as mcp:
        agent = Agent(model=ScriptModel(SCRIPT), tools=mcp.list_tools_sync(), callback_handler=None)
        agent("charge")
        direct = mcp.call_tool_sync("tu-9", "charge", {"amount": 1})
    assert seen(agent) == {"tu-1": {}, "tu-2": {}}
    assert json.loads(direct["content"][0]["text"]) == {}


def test_a_call_in_doubt_sends_the_same_key_again(tmp_path: Path) -> None:
    """Killed when the batch's tools are done and their message is not stored yet (a copy of the
    store taken then, as in ``test_write_path``), the same call finishes the turn: the call in
    doubt goes to the server again with the key it had."""
    from strands.hooks import AfterToolsEvent
    from strands.tools.executors import SequentialToolExecutor

    store, crashed = tmp_path / "runs.db", tmp_path / "crashed.db"
    run_id = "strands.m.default"
    with client() as mcp:
        manager = TetherSessionManager("m", store=str(store))
        agent = Agent(
            model=ScriptModel(SCRIPT),
            tools=mcp.list_tools_sync(),
            tool_executor=SequentialToolExecutor(),
            callback_handler=None,
            session_manager=manager,
        )

        def snapshot(event: AfterToolsEvent) -> None:
            with sqlite3.connect(store) as source, sqlite3.connect(crashed) as copy:
                source.backup(copy)

        agent.hooks.add_callback(AfterToolsEvent, snapshot)
        agent("charge")
        manager.close()
        first = seen(agent)

        manager = TetherSessionManager("m", store=str(crashed))
        resumed = Agent(
            model=ScriptModel(SCRIPT),
            tools=mcp.list_tools_sync(),
            tool_executor=SequentialToolExecutor(),
            callback_handler=None,
            session_manager=manager,
        )
        resumed("charge")
        manager.close()
    steps = open_store(str(crashed)).history(run_id)
    assert [marker["toolUseId"] for step in steps if step.position == "resumed" for marker in step.in_doubt] == ["tu-2"]
    assert seen(resumed) == first == {"tu-1": {META_KEY: f"{run_id}/tu-1"}, "tu-2": {META_KEY: f"{run_id}/tu-2"}}
