"""Agent factories shared by the in-process and subprocess workers of the Temporal tests.

Every agent uses a stateful ScriptedModel (its position lives in ``model_state``), so each
activity can rebuild the agent from the registry and still continue the same script. Side
effects (model calls, tool starts and ends) are appended to a log file named in the config,
so tests can count what ran even across killed worker processes.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tether import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    Agent,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    MessageAdded,
    NullConversationManager,
    ScriptedModel,
    ToolContext,
    tool,
)
from tether.errors import ContextWindowOverflowError, ModelAuthError
from tether.models.scripted import tool_call, tool_calls
from tether.temporal import AgentRegistry
from tether.types import ModelRequest, StreamEvent

registry = AgentRegistry()


def log(config: dict[str, Any], line: str) -> None:
    """Append one line to the side-effect log of the config (if any)."""
    path = config.get("log")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())


class LoggingModel(ScriptedModel):
    """A stateful ScriptedModel that logs each call it serves."""

    def __init__(self, responses: list[Any], config: dict[str, Any]) -> None:
        super().__init__(responses, stateful=True)
        self.config = config

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        log(self.config, f"model {request['model_state'].get('scripted_index', 0)}")
        async for event in super().stream(request):
            yield event


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


TWO_TOOLS_SCRIPT: list[Any] = [
    tool_calls([("add", {"a": 2, "b": 3}), ("multiply", {"a": 4, "b": 5})]),
    tool_call("multiply", {"a": 5, "b": 20}, text="Now the product."),
    "2 + 3 = 5, 4 * 5 = 20 and 5 * 20 = 100.",
]


def two_tools_agent(config: dict[str, Any]) -> Agent:
    return Agent(
        model=LoggingModel(list(TWO_TOOLS_SCRIPT) + list(config.get("extra", [])), config),
        tools=[add, multiply],
        system_prompt="You are a calculator.",
        state={"owner": "tests"},
    )


registry.register("two_tools", two_tools_agent)


@registry.register("slow")
def slow_agent(config: dict[str, Any]) -> Agent:
    """Cycle 1 calls a fast tool, cycle 2 a slow one (``config["sleep"]`` seconds), then answers."""

    @tool(name="fast")
    def fast(n: int) -> str:
        log(config, f"fast {n}")
        return f"fast {n} done"

    @tool(name="slow")
    def slow(n: int) -> str:
        log(config, f"slow-start {n}")
        marker = config.get("started_marker")
        if marker:
            Path(marker).write_text("started")
        time.sleep(float(config.get("sleep", 1.0)))
        log(config, f"slow-end {n}")
        return f"slow {n} done"

    script: list[Any] = [tool_call("fast", {"n": 1}), tool_call("slow", {"n": 2}), "all done"]
    return Agent(model=LoggingModel(script, config), tools=[fast, slow])


@registry.register("big")
def big_agent(config: dict[str, Any]) -> Agent:
    """Each of ``cycles`` cycles returns a unique ``size``-byte tool output; the answer is large too."""
    size = int(config["size"])
    cycles = int(config["cycles"])

    @tool(name="dump")
    def dump(i: int) -> str:
        return f"{i:08d}" + ("abcdefghij" * (size // 10 + 1))[: size - 8]

    script: list[Any] = [tool_call("dump", {"i": i}) for i in range(cycles)]
    script.append("Z" * int(config.get("answer_size", 10)))
    return Agent(model=ScriptedModel(script, stateful=True), tools=[dump], conversation_manager=NullConversationManager())


@functools.lru_cache(maxsize=4)
def _long_script(cycles: int) -> tuple[Any, ...]:
    """Built once per worker process: every activity rebuilds the agent, not the script."""
    return (*(tool_call("tick", {"i": i}) for i in range(cycles - 1)), "finished")


@registry.register("long")
def long_agent(config: dict[str, Any]) -> Agent:
    """``cycles`` model calls: every one but the last calls the ``tick`` tool."""
    cycles = int(config["cycles"])

    @tool(name="tick", run_in_thread=False)
    def tick(i: int) -> int:
        return i + 1

    return Agent(
        model=ScriptedModel(_long_script(cycles), stateful=True, usage=(3, 2)), tools=[tick], conversation_manager=NullConversationManager()
    )


@registry.register("asker")
def asker_agent(config: dict[str, Any]) -> Agent:
    """Calls ``book``, which asks a human for approval, then answers with what the tool returned."""

    @tool(name="book")
    def book(city: str, context: ToolContext) -> str:
        answer = context.interrupt("approve", {"city": city})
        log(config, f"book {city} {answer}")
        return f"booked {city}: {answer}"

    script: list[Any] = [tool_call("book", {"city": "Lisbon"}), "Booking handled."]
    return Agent(model=LoggingModel(script, config), tools=[book], checkpointing=bool(config.get("checkpointing", False)))


@registry.register("hooked")
def hooked_agent(config: dict[str, Any]) -> Agent:
    """Every hook event logs a line; a BeforeToolCall hook rewrites the tool input."""

    def before_invocation(event: BeforeInvocation) -> None:
        log(config, f"before-invocation resumed={event.resumed}")

    def after_invocation(event: AfterInvocation) -> None:
        log(config, "after-invocation")

    def message_added(event: MessageAdded) -> None:
        assert event.message is not None
        log(config, f"message {event.message['role']} {len(event.message['content'])}")

    def before_model(event: BeforeModelCall) -> None:
        log(config, f"before-model {event.cycle_index}")

    def after_model(event: AfterModelCall) -> None:
        log(config, f"after-model {event.stop_reason}")

    def before_tool(event: BeforeToolCall) -> None:
        assert event.tool_use is not None
        event.tool_use["input"]["b"] = 40
        log(config, f"before-tool {event.tool_use['name']}")

    def after_tool(event: AfterToolCall) -> None:
        assert event.result is not None
        log(config, f"after-tool {event.result['content']}")

    hooks = [before_invocation, after_invocation, message_added, before_model, after_model, before_tool, after_tool]
    script: list[Any] = [tool_call("add", {"a": 2, "b": 3}), "done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[add], hooks=hooks)


@registry.register("failing")
def failing_agent(config: dict[str, Any]) -> Agent:
    """The model fails with ``config["error"]``: ``overflow`` (that nothing can reduce) or ``auth``."""
    error: Exception = (
        ContextWindowOverflowError("prompt is too long") if config["error"] == "overflow" else ModelAuthError("set FAKE_API_KEY")
    )
    return Agent(model=LoggingModel([error], config), conversation_manager=NullConversationManager())


@registry.register("counter")
def counter_agent(config: dict[str, Any]) -> Agent:
    """Two concurrent tool calls and then one more each write the agent state."""

    @tool(name="bump")
    def bump(key: str, context: ToolContext) -> int:
        state = context.agent.state
        value = int(state.get(key, 0)) + 1
        state.set(key, value)
        if state.get("scratch") is not None:
            state.delete("scratch")
        return value

    script: list[Any] = [
        tool_calls([("bump", {"key": "a"}), ("bump", {"key": "b"})]),
        tool_call("bump", {"key": "a"}),
        "counted",
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[bump], state={"scratch": True, "keep": "me"})
