"""`loop/host.py`: the loop runs on any LoopHost; it needs no Agent."""

from __future__ import annotations

import threading

import pytest

from tether import ConfigurationError, ScriptedModel, SlidingWindowConversationManager
from tether._prompt import normalize_prompt
from tether.hooks import HookRegistry, MessageAdded
from tether.invocation import InvocationOptions, invoke_stream
from tether.loop import CoreConfig, DriverOptions, Host, LocalDriver, LoopCore, RunState
from tether.models import tool_call
from tether.tools import SequentialToolExecutor, ToolRegistry
from tether.tools.decorator import FunctionTool


def bare_host(model: ScriptedModel | None, tools: ToolRegistry, owner: object) -> Host:
    return Host(
        owner=owner,
        name="bare",
        hooks=HookRegistry(),
        model_or_none=model,
        tools=tools,
        tool_executor=SequentialToolExecutor(),
        conversation_manager=SlidingWindowConversationManager(),
    )


async def test_an_invocation_runs_on_a_plain_host(add_tool: FunctionTool) -> None:
    owner = object()  # whatever hooks and tool contexts should call "the agent"
    seen: list[object] = []
    host = bare_host(ScriptedModel([tool_call("add", {"a": 2, "b": 2}), "four"]), ToolRegistry([add_tool]), owner)
    host.hooks.add_callback(MessageAdded, lambda event: seen.append(event.agent))
    run = RunState()
    events = [event async for event in invoke_stream(host, run, normalize_prompt("2+2?"), InvocationOptions())]
    result = events[-1]["result"]
    assert result.text == "four" and len(run.messages) == 4
    assert seen == [owner] * 4


async def test_a_host_without_a_model_fails_at_the_model_call_not_before() -> None:
    host = bare_host(None, ToolRegistry(), object())
    assert host.tool_specs(None) == []
    core = LoopCore(RunState(), CoreConfig())
    core.start([{"role": "user", "content": [{"text": "hi"}]}])
    driver = LocalDriver(host, core, DriverOptions(), threading.Event())
    with pytest.raises(ConfigurationError, match="no model"):
        [event async for event in driver.run()]


def test_a_plain_host_cannot_invent_a_structured_output_tool() -> None:
    import pydantic

    class Answer(pydantic.BaseModel):
        value: int

    with pytest.raises(ConfigurationError, match="structured-output"):
        bare_host(None, ToolRegistry(), object()).tool_specs(Answer)
