"""`tools/source.py`: a ToolSource's tools join the registry while it runs, owned by the agent's lifecycle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel, ToolContext
from tether.durable import SQLiteStore
from tether.errors import ToolError
from tether.models import tool_call
from tether.tools import ToolRegistry, ToolSource
from tether.types import ToolResult, ToolSpec, ToolUse


class Calculator:
    """An in-process source serving ``mul`` (and optionally ``charge``, not idempotent)."""

    def __init__(self, *, fail_start: bool = False, extra: list[ToolSpec] | None = None) -> None:
        self.log: list[str] = []
        self.fail_start = fail_start
        self.extra = extra or []

    @property
    def source_name(self) -> str:
        return "calc"

    async def start(self) -> None:
        self.log.append("start")
        if self.fail_start:
            raise ToolError("calc: server not reachable")

    async def list_tools(self) -> list[ToolSpec]:
        self.log.append("list")
        schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
        return [{"name": "mul", "description": "Multiply.", "inputSchema": {"json": schema}}, *self.extra]

    def idempotent(self, name: str) -> bool:
        return name == "mul"

    async def call_tool(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        self.log.append(f"call {tool_use['name']} {context.idempotency_key}")
        if tool_use["name"] == "broken":
            raise RuntimeError("connection reset")
        value = tool_use["input"]["a"] * tool_use["input"]["b"]
        return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"json": value}]}

    async def close(self) -> None:
        self.log.append("close")


def test_a_source_is_a_tool_source_and_not_a_tool() -> None:
    assert isinstance(Calculator(), ToolSource)
    registry = ToolRegistry([Calculator()])
    assert registry.names == [] and len(registry.sources) == 1  # tools arrive when it starts


async def test_source_tools_run_in_the_loop_and_close_with_the_agent() -> None:
    source = Calculator()
    agent = Agent(model=ScriptedModel([tool_call("mul", {"a": 6, "b": 7}), "42"]), tools=[source])
    async with agent:
        assert agent.tool_names == ["mul"]
        result = await agent.invoke_async("6*7?")
    assert result.text == "42"
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"json": 42}]  # type: ignore[typeddict-item]
    assert source.log[:2] == ["start", "list"] and source.log[-1] == "close"
    assert source.log.count("start") == 1 and source.log.count("close") == 1
    assert agent.tool_names == []  # closed: its tools left the registry


def test_a_source_starts_on_first_use_and_again_after_close() -> None:
    source = Calculator()
    agent = Agent(model=ScriptedModel(["a", "b"]), tools=[source])
    agent("one")
    agent("two")  # already started: not started again
    assert source.log == ["start", "list"]
    agent.close()
    assert source.log[-1] == "close"
    agent.close()  # closing twice closes nothing twice
    assert source.log.count("close") == 1


async def test_a_source_that_cannot_start_fails_the_invocation_before_any_model_call() -> None:
    source = Calculator(fail_start=True)
    model = ScriptedModel(["unreached"])
    agent = Agent(model=model, tools=[source])
    with pytest.raises(ToolError, match="not reachable"):
        await agent.invoke_async("hi")
    assert model.index == 0 and agent.messages == []
    assert source.log == ["start", "close"]  # closed again after the failed start


async def test_a_name_clash_is_refused_and_leaves_no_tools_behind() -> None:
    def mul(a: int, b: int) -> int:
        """Plain multiply."""
        return a * b

    source = Calculator()
    agent = Agent(model=ScriptedModel(["x"]), tools=[mul, source])
    with pytest.raises(ToolError, match="two tools are named 'mul'"):
        await agent.start()
    assert agent.tool_names == ["mul"] and source.log[-1] == "close"


async def test_a_failing_source_call_is_an_error_result_for_the_model() -> None:
    spec: ToolSpec = {"name": "broken", "description": "Fails.", "inputSchema": {"json": {"type": "object"}}}
    agent = Agent(model=ScriptedModel([tool_call("broken", {}), "sorry"]), tools=[Calculator(extra=[spec])])
    result = await agent.invoke_async("try")
    block: Any = agent.messages[2]["content"][0]["toolResult"]
    assert result.text == "sorry" and block["status"] == "error"
    assert "tool source 'calc' failed: RuntimeError: connection reset" in block["content"][0]["text"]
    await agent.aclose()


def test_a_source_tool_takes_its_idempotency_from_the_source(tmp_path: Path) -> None:
    spec: ToolSpec = {"name": "charge", "description": "Charge.", "inputSchema": {"json": {"type": "object"}}}
    source = Calculator(extra=[spec])
    agent = Agent(model=ScriptedModel([tool_call("mul", {"a": 2, "b": 3}), "6"]), tools=[source], store=SQLiteStore(tmp_path / "r.db"))
    assert str(agent("2*3?", run_id="src-1")) == "6"
    mul, charge = agent.tool_registry.get("mul"), agent.tool_registry.get("charge")
    assert mul is not None and charge is not None and mul.idempotent and not charge.idempotent
    assert "call mul src-1/" in source.log[2]  # the durable idempotency key reaches the source
    agent.close()


async def test_a_source_listing_garbage_is_refused_with_its_name_and_closed() -> None:
    nameless: Any = {"description": "No name.", "inputSchema": {"json": {"type": "object"}}}
    source = Calculator(extra=[nameless])
    agent = Agent(model=ScriptedModel(["unreached"]), tools=[source])
    with pytest.raises(ToolError, match="tool source 'calc' listed a tool without a name"):
        await agent.start()
    assert agent.tool_names == [] and source.log[-1] == "close"


async def test_a_malformed_result_from_a_source_is_an_error_result() -> None:
    class Sloppy(Calculator):
        async def call_tool(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
            return {"status": "done", "content": 5}  # type: ignore[typeddict-item]

    agent = Agent(model=ScriptedModel([tool_call("mul", {"a": 1, "b": 1}), "ok"]), tools=[Sloppy()])
    await agent.invoke_async("go")
    block: Any = agent.messages[2]["content"][0]["toolResult"]
    assert block["status"] == "error" and "returned a malformed toolResult" in block["content"][0]["text"]
    await agent.aclose()
