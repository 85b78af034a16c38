"""`EffectScope`: a tool call run outside a driver (as a Temporal activity runs it) gets a scope
of its own, closed when the call ends."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tether import Agent, ToolContext, tool
from tether.effects import EffectScope, TransactionUnavailableError
from tether.loop.state import RunState
from tether.loop.tool_call import call_tool
from tether.types import ToolUse

from .conftest import Recorder


def test_a_call_outside_a_driver_has_its_own_scope(recorder: Recorder) -> None:
    clients: list[httpx.AsyncClient] = []
    errors: list[str] = []

    @tool
    async def ship(parcel: str, context: ToolContext) -> str:
        """Ship a parcel."""
        await context.http.post(f"{recorder.url}/shipments", json={"parcel": parcel})
        clients.append(context.http)
        try:
            context.transaction()
        except TransactionUnavailableError as exc:
            errors.append(str(exc))
        return "shipped"

    agent = Agent(tools=[ship])
    use: ToolUse = {"toolUseId": "s1", "name": "ship", "input": {"parcel": "p"}}
    outcome = asyncio.run(call_tool(agent.host(), RunState(run_id="run-7"), use))  # how a Temporal activity runs a call
    assert outcome.result is not None and outcome.result["status"] == "success"
    assert recorder.keys("POST") == ["run-7/s1"]
    assert clients[0].is_closed  # the call's own scope closed with the call
    assert "'s1'" in errors[0] and "Temporal activity" in errors[0]


def test_a_scope_without_transactions_names_why() -> None:
    async def check() -> Any:
        scope = EffectScope(unavailable="no store here")
        with pytest.raises(TransactionUnavailableError, match="tool call 't9': no store here"):
            scope.transaction("t9")
        assert await scope.end_call("t9", None) is None
        await scope.aclose()  # nothing was opened: nothing to close

    asyncio.run(check())
