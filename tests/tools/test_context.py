"""`ToolContext`: the tool use, the agent, the invocation state and a stable idempotency key."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, ScriptedModel, ToolContext, tool

from ..conftest import call


def test_context_fields_in_a_run() -> None:
    seen: list[ToolContext] = []

    @tool
    def capture(value: int, context: ToolContext) -> int:
        seen.append(context)
        return value

    agent = Agent(model=ScriptedModel([call("capture", {"value": 1}, tool_use_id="tu-1"), "done"]), tools=[capture])
    agent("go", invocation_state={"request": "r-1"})
    context = seen[0]
    assert context.agent is agent
    assert context.tool_use == {"toolUseId": "tu-1", "name": "capture", "input": {"value": 1}}
    assert context.invocation_state == {"request": "r-1"}


def test_invocation_state_defaults_to_an_empty_dict_and_can_carry_non_json() -> None:
    seen: list[Any] = []
    marker = object()

    @tool
    def capture(context: ToolContext) -> str:
        seen.append(context.invocation_state)
        return ""

    agent = Agent(model=ScriptedModel([call("capture"), "done", call("capture"), "done"]), tools=[capture])
    agent("go")
    agent("go", invocation_state={"client": marker})
    assert seen[0] == {}
    assert seen[1]["client"] is marker


def test_idempotency_key() -> None:
    use: Any = {"toolUseId": "tu-7", "name": "x", "input": {}}
    assert ToolContext(tool_use=use, agent=Agent()).idempotency_key == "tu-7"
    assert ToolContext(tool_use=use, agent=Agent(), run_id="run-1").idempotency_key == "run-1/tu-7"


def test_interrupt_needs_a_raiser() -> None:
    use: Any = {"toolUseId": "tu-7", "name": "x", "input": {}}
    with pytest.raises(RuntimeError, match="cannot raise interrupts"):
        ToolContext(tool_use=use, agent=Agent()).interrupt("approve")
