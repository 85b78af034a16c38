"""Hooks: typed events, the registry, providers and annotated callables, and what hooks may change."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    Agent,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    ConfigurationError,
    HookProvider,
    HookRegistry,
    MessageAdded,
    ModelError,
    ScriptedModel,
    Tool,
    ToolContext,
    tool,
)
from tether.hooks import HookEvent
from tether.tools.decorator import FunctionTool

from .conftest import call, results_of

# -- registry -------------------------------------------------------------------------------


async def test_before_events_run_in_order_after_events_in_reverse() -> None:
    registry = HookRegistry()
    order: list[str] = []
    agent = Agent()
    registry.add_callback(BeforeModelCall, lambda e: order.append("b1"))
    registry.add_callback(BeforeModelCall, lambda e: order.append("b2"))
    registry.add_callback(AfterModelCall, lambda e: order.append("a1"))
    registry.add_callback(AfterModelCall, lambda e: order.append("a2"))
    await registry.fire(BeforeModelCall(agent))
    await registry.fire(AfterModelCall(agent))
    assert order == ["b1", "b2", "a2", "a1"]


async def test_async_callbacks_are_awaited_and_fire_returns_the_event() -> None:
    registry = HookRegistry()
    seen: list[int] = []

    async def slow(event: BeforeModelCall) -> None:
        await asyncio.sleep(0)
        seen.append(event.cycle_index)

    registry.add(slow)
    event = BeforeModelCall(Agent(), cycle_index=7)
    assert await registry.fire(event) is event
    assert seen == [7]


async def test_fire_without_callbacks_and_has() -> None:
    registry = HookRegistry()
    event = MessageAdded(Agent())
    assert await registry.fire(event) is event
    assert not registry.has(MessageAdded)
    registry.add_callback(MessageAdded, lambda e: None)
    assert registry.has(MessageAdded)
    assert not registry.has(BeforeInvocation)


def test_add_callback_refuses_non_event_types() -> None:
    with pytest.raises(ConfigurationError, match="not a hook event type"):
        HookRegistry().add_callback(dict, lambda e: None)  # type: ignore[arg-type]


def test_add_infers_the_event_type_from_the_annotation() -> None:
    registry = HookRegistry()

    def on_tool(event: AfterToolCall, *rest: Any) -> None: ...

    class Callable:
        def __call__(self, event: BeforeInvocation) -> None: ...

    class Holder:
        def method(self, event: MessageAdded) -> None: ...

    registry.add(on_tool)
    registry.add(Callable())
    registry.add(Holder().method)
    assert registry.has(AfterToolCall) and registry.has(BeforeInvocation) and registry.has(MessageAdded)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: None,
        lambda event: None,
        42,
    ],
    ids=["no-parameter", "unannotated", "not-callable"],
)
def test_add_refuses_what_it_cannot_dispatch(bad: Any) -> None:
    with pytest.raises(ConfigurationError):
        HookRegistry().add(bad)


def test_add_refuses_a_wrong_annotation_and_says_what_to_do() -> None:
    def on_it(event: int) -> None: ...

    with pytest.raises(ConfigurationError, match="annotate its first parameter"):
        HookRegistry().add(on_it)


def test_providers_register_several_callbacks() -> None:
    class Logger:
        def __init__(self) -> None:
            self.events: list[str] = []

        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add_callback(BeforeInvocation, lambda e: self.events.append("start"))
            registry.add_callback(AfterInvocation, lambda e: self.events.append("end"))

    logger = Logger()
    assert isinstance(logger, HookProvider)
    agent = Agent(model=ScriptedModel(["hi"]), hooks=[logger])
    agent("x")
    assert logger.events == ["start", "end"]


# -- the events an invocation fires ---------------------------------------------------------


class Recorder:
    """A provider that records every event it sees."""

    def __init__(self) -> None:
        self.events: list[HookEvent] = []

    def register_hooks(self, registry: HookRegistry) -> None:
        for kind in (BeforeInvocation, AfterInvocation, BeforeModelCall, AfterModelCall, BeforeToolCall, AfterToolCall, MessageAdded):
            registry.add_callback(kind, self.events.append)

    def names(self) -> list[str]:
        return [type(event).__name__ for event in self.events]


def test_event_sequence_of_a_tool_cycle(add_tool: FunctionTool) -> None:
    recorder = Recorder()
    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 2}), "3"]), tools=[add_tool], hooks=[recorder])
    result = agent("1+2")
    assert recorder.names() == [
        "BeforeInvocation",
        "MessageAdded",  # prompt
        "BeforeModelCall",
        "AfterModelCall",
        "MessageAdded",  # toolUse
        "BeforeToolCall",
        "AfterToolCall",
        "MessageAdded",  # toolResult
        "BeforeModelCall",
        "AfterModelCall",
        "MessageAdded",  # answer
        "AfterInvocation",
    ]
    events = recorder.events
    assert all(event.agent is agent for event in events)
    assert isinstance(events[0], BeforeInvocation) and not events[0].resumed and events[0].resumed_from is None
    assert isinstance(events[-1], AfterInvocation) and events[-1].result is result
    before_models = [e for e in events if isinstance(e, BeforeModelCall)]
    assert [e.cycle_index for e in before_models] == [0, 1]
    after_model = next(e for e in events if isinstance(e, AfterModelCall))
    assert after_model.stop_reason == "tool_use" and after_model.message is not None
    before_tool = next(e for e in events if isinstance(e, BeforeToolCall))
    assert before_tool.tool_use is not None and before_tool.tool_use["name"] == "add"
    assert before_tool.selected_tool is add_tool
    after_tool = next(e for e in events if isinstance(e, AfterToolCall))
    assert after_tool.result is not None and after_tool.result["content"] == [{"json": 3}]
    added = [e.message for e in events if isinstance(e, MessageAdded)]
    assert added == agent.messages


def test_after_invocation_fires_when_the_invocation_fails() -> None:
    seen: list[AfterInvocation] = []

    def after(event: AfterInvocation) -> None:
        seen.append(event)

    agent = Agent(model=ScriptedModel([ModelError("provider down")]), hooks=[after])
    with pytest.raises(ModelError):
        agent("x")
    assert len(seen) == 1 and seen[0].result is None


def test_plain_callables_sync_and_async_through_the_agent() -> None:
    seen: list[str] = []

    def sync_hook(event: BeforeModelCall) -> None:
        seen.append("sync")

    async def async_hook(event: BeforeModelCall) -> None:
        await asyncio.sleep(0)
        seen.append("async")

    Agent(model=ScriptedModel(["ok"]), hooks=[sync_hook, async_hook])("x")
    assert seen == ["sync", "async"]


def test_bad_hook_given_to_the_agent_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        Agent(hooks=[lambda e: None])


# -- what hooks may change ------------------------------------------------------------------


def test_before_invocation_can_edit_or_replace_the_input_messages() -> None:
    seen: list[Any] = []

    def redact(event: BeforeInvocation) -> None:
        seen.append(event.messages)
        assert event.messages is not None
        event.messages[0]["content"][0]["text"] = event.messages[0]["content"][0]["text"].replace("SECRET", "[REDACTED]")

    agent = Agent(model=ScriptedModel(["ok"]), hooks=[redact])
    agent("my SECRET")
    assert seen == [[{"role": "user", "content": [{"text": "my [REDACTED]"}]}]]
    assert agent.messages[0] == {"role": "user", "content": [{"text": "my [REDACTED]"}]}

    def replace(event: BeforeInvocation) -> None:
        event.messages = [{"role": "user", "content": [{"text": "GOODBYE"}]}]

    agent = Agent(model=ScriptedModel(["ok"]), hooks=[replace])
    agent("HELLO")
    assert [m["content"][0]["text"] for m in agent.messages] == ["GOODBYE", "ok"]


def test_after_model_call_can_ask_for_a_retry() -> None:
    def reject_first(event: AfterModelCall) -> None:
        if event.message is not None and event.message["content"][0].get("text") == "bad":
            event.retry = True

    model = ScriptedModel(["bad", "good"])
    agent = Agent(model=model, hooks=[reject_first])
    assert str(agent("x")) == "good"
    assert [m["content"][0]["text"] for m in agent.messages] == ["x", "good"]
    assert model.index == 2


def test_after_model_call_sees_a_failure_and_can_retry_it() -> None:
    failures: list[BaseException] = []

    def retry_errors(event: AfterModelCall) -> None:
        if event.exception is not None:
            failures.append(event.exception)
            event.retry = True

    agent = Agent(model=ScriptedModel([ModelError("flaky"), "recovered"]), hooks=[retry_errors])
    assert str(agent("x")) == "recovered"
    assert [str(e) for e in failures] == ["flaky"]


def test_before_tool_call_can_replace_the_input(add_tool: FunctionTool) -> None:
    def double_a(event: BeforeToolCall) -> None:
        assert event.tool_use is not None
        event.tool_use["input"] = {**event.tool_use["input"], "a": event.tool_use["input"]["a"] * 2}

    agent = Agent(model=ScriptedModel([call("add", {"a": 5, "b": 1}), "done"]), tools=[add_tool], hooks=[double_a])
    agent("x")
    assert results_of(agent.messages[2])[0]["content"] == [{"json": 11}]


def test_before_tool_call_can_replace_the_tool(add_tool: FunctionTool) -> None:
    @tool
    def safe_add(a: int, b: int) -> str:
        return f"safe {a + b}"

    def swap(event: BeforeToolCall) -> None:
        event.selected_tool = safe_add

    agent = Agent(
        model=ScriptedModel([call("add", {"a": 1, "b": 1}), call("ghost", {"a": 2, "b": 2}), "done"]), tools=[add_tool], hooks=[swap]
    )
    agent("x")
    assert results_of(agent.messages[2])[0]["content"] == [{"text": "safe 2"}]
    # a replacement also serves a call whose name is unknown
    assert results_of(agent.messages[4])[0]["content"] == [{"text": "safe 4"}]


@pytest.mark.parametrize(("cancel", "expected"), [(True, "Tool call cancelled by a hook."), ("not allowed today", "not allowed today")])
def test_before_tool_call_can_cancel(cancel: bool | str, expected: str) -> None:
    ran: list[str] = []

    @tool
    def act() -> str:
        ran.append("ran")
        return "acted"

    def guard(event: BeforeToolCall) -> None:
        event.cancel_tool = cancel

    agent = Agent(model=ScriptedModel([call("act"), "ok"]), tools=[act], hooks=[guard])
    result = agent("x")
    assert ran == []
    tool_result = results_of(agent.messages[2])[0]
    assert tool_result["status"] == "error" and tool_result["content"] == [{"text": expected}]
    assert result.metrics.tool_metrics["act"]["errors"] == 1


def test_before_tool_call_sees_the_invocation_state() -> None:
    seen: list[Any] = []

    def peek(event: BeforeToolCall) -> None:
        seen.append(event.invocation_state)

    @tool
    def act() -> str:
        return "ok"

    Agent(model=ScriptedModel([call("act"), "ok"]), tools=[act], hooks=[peek])("x", invocation_state={"tenant": "t1"})
    assert seen == [{"tenant": "t1"}]


def test_after_tool_call_can_rewrite_the_result(add_tool: FunctionTool) -> None:
    def redact(event: AfterToolCall) -> None:
        assert event.result is not None
        event.result = {"toolUseId": event.result["toolUseId"], "status": "success", "content": [{"text": "[redacted]"}]}

    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 1}), "done"]), tools=[add_tool], hooks=[redact])
    events = []

    async def collect() -> None:
        async for event in agent.stream_async("x"):
            events.append(event)

    asyncio.run(collect())
    assert results_of(agent.messages[2])[0]["content"] == [{"text": "[redacted]"}]
    streamed = next(e for e in events if e["type"] == "tool_result")["toolResult"]
    assert streamed["content"] == [{"text": "[redacted]"}]


def test_hooks_can_use_the_agent_state() -> None:
    def count(event: BeforeModelCall) -> None:
        event.agent.state.set("calls", event.agent.state.get("calls", 0) + 1)

    agent = Agent(model=ScriptedModel(["a", "b"]), hooks=[count])
    agent("1")
    agent("2")
    assert agent.state.get("calls") == 2


class Guard(Tool):
    name = "guarded"
    description = "A class-based tool."

    def run(self, input: dict[str, Any], context: ToolContext) -> str:
        return "ran"


def test_a_failing_hook_fails_the_invocation_with_its_own_error() -> None:
    def broken(event: BeforeToolCall) -> None:
        raise KeyError("hook bug")

    script = [
        {"role": "assistant", "content": [{"toolUse": {"name": "guarded", "input": {}}}, {"toolUse": {"name": "guarded", "input": {}}}]}
    ]
    agent = Agent(model=ScriptedModel(script), tools=[Guard()], hooks=[broken])
    with pytest.raises(KeyError, match="hook bug"):
        agent("x")
