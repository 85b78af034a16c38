"""Ported from strands-agents/sdk-python ``tests/strands/agent/test_agent_hooks.py``,
``tests/strands/agent/hooks/test_events.py`` and ``tests/strands/hooks/test_registry.py``
(with ``tests/fixtures/mock_hook_provider.py``): hook providers, callbacks, the order of
events in an invocation, and what hooks may change.

Upstream compares events with ``==`` against events it constructs; here the same order is
asserted on the event types and on the fields a hook reads (agent, message, tool_use, result,
stop_response), which is what hook code depends on.

Excluded upstream tests (name — reason):
- test_hook_retry_on_exception_basic, test_hook_retry_with_limit, test_hook_retry_multiple_hooks,
  test_hook_retry_last_hook_wins, test_hook_retry_with_throttle_exception — a MagicMock model whose ``stream`` raises,
  and patch ``strands.event_loop._retry.asyncio.sleep``
- test_before_invocation_event_messages_none_in_structured_output — replaces ``model.structured_output`` with a Mock
- test_after_invocation_resume_handles_interrupt_with_responses,
  test_after_invocation_resume_with_invalid_input_during_interrupt,
  test_after_invocation_resume_interrupt_without_resume_returns_to_caller,
  test_after_invocation_resume_interrupt_during_resumed_invocation — interrupts raised from hooks (the interrupt protocol
  is the checkpoint/interrupt engineer's corpus programs)
- hooks/test_registry.py::test_hook_registry_invoke_callbacks_async_interrupt*,
  test_hook_registry_add_callback_agent_init_coroutine, test_hook_registry_invoke_callbacks_coroutine — drive a bare
  HookRegistry with Mock agents and private interrupt state
- hooks/test_registry.py union/list type-inference tests — a HookRegistry used standalone; the inference Agent.add_hook
  relies on is ported (test_add_callback_infers_event_type, test_add_callback_union_types)
- agent/hooks/test_events.py property-writability tests on events built with Mock agents — ported on events a real
  invocation delivers (test_event_fields_writable_or_not)
- hooks/test_events.py (multi-agent events) — built with Mock orchestrators; multi-agent hooks are exercised in test_graph.py/test_swarm.py
"""

from __future__ import annotations

import unittest.mock
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tether.strands import Agent, tool
from tether.strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)

from .mocked_model_provider import MockedModelProvider, plain, text, tool_call

ALL_EVENTS = [
    AgentInitializedEvent,
    BeforeInvocationEvent,
    AfterInvocationEvent,
    AfterToolCallEvent,
    BeforeToolCallEvent,
    BeforeModelCallEvent,
    AfterModelCallEvent,
    MessageAddedEvent,
]


class MockHookProvider(HookProvider):
    """Ported from tests/fixtures/mock_hook_provider.py: records every event of the given types."""

    def __init__(self, event_types: list[type]) -> None:
        self.events_received: list[Any] = []
        self.events_types = event_types

    @property
    def event_types_received(self) -> list[type]:
        return [type(event) for event in self.events_received]

    def get_events(self) -> tuple[int, Iterator[HookEvent]]:
        return len(self.events_received), iter(self.events_received)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        for event_type in self.events_types:
            registry.add_callback(event_type, self.add_event)

    def add_event(self, event: HookEvent) -> None:
        self.events_received.append(event)


@pytest.fixture
def agent_tool() -> Any:
    @tool(name="tool_decorated")
    def reverse(random_string: str) -> str:
        return random_string[::-1]

    return reverse


@pytest.fixture
def tool_use() -> dict[str, Any]:
    return {"name": "tool_decorated", "toolUseId": "123", "input": {"random_string": "I invoked a tool!"}}


@pytest.fixture
def hook_provider() -> MockHookProvider:
    return MockHookProvider(ALL_EVENTS)


@pytest.fixture
def agent(hook_provider: MockHookProvider, agent_tool: Any, tool_use: dict[str, Any]) -> Agent:
    model = MockedModelProvider([{"role": "assistant", "content": [{"toolUse": tool_use}]}, text("I invoked a tool!")])
    agent = Agent(model=model, system_prompt="You are a helpful assistant.", callback_handler=None, tools=[agent_tool])
    agent.hooks.add_hook(hook_provider)

    def assert_message_is_last_message_added(event: MessageAddedEvent) -> None:
        assert event.agent.messages[-1] == event.message

    agent.hooks.add_callback(MessageAddedEvent, assert_message_is_last_message_added)
    return agent


def test_agent__init__hooks() -> None:
    provider = MockHookProvider([AgentInitializedEvent])
    agent = Agent(model=MockedModelProvider([]), hooks=[provider], callback_handler=None)

    length, events = provider.get_events()
    assert length == 1
    event = next(events)
    assert isinstance(event, AgentInitializedEvent)
    assert event.agent is agent


def test_agent_tool_call(agent: Agent, hook_provider: MockHookProvider, agent_tool: Any) -> None:
    agent.tool.tool_decorated(random_string="a string")

    assert hook_provider.event_types_received == [
        BeforeToolCallEvent,
        AfterToolCallEvent,
        MessageAddedEvent,
        MessageAddedEvent,
        MessageAddedEvent,
        MessageAddedEvent,
    ]
    before, after, *added = hook_provider.events_received
    assert before.agent is agent
    assert before.selected_tool is agent_tool
    assert before.tool_use["name"] == "tool_decorated"
    assert before.tool_use["input"] == {"random_string": "a string"}
    assert after.tool_use["name"] == "tool_decorated"
    assert after.result["status"] == "success"
    assert after.result["content"] == [{"text": "gnirts a"}]
    assert [event.message for event in added] == agent.messages
    assert len(agent.messages) == 4


def test_agent__call__hooks(agent: Agent, hook_provider: MockHookProvider, agent_tool: Any, tool_use: dict[str, Any]) -> None:
    result = agent("test message")

    assert hook_provider.event_types_received == [
        BeforeInvocationEvent,
        MessageAddedEvent,
        BeforeModelCallEvent,
        AfterModelCallEvent,
        MessageAddedEvent,
        BeforeToolCallEvent,
        AfterToolCallEvent,
        MessageAddedEvent,
        BeforeModelCallEvent,
        AfterModelCallEvent,
        MessageAddedEvent,
        AfterInvocationEvent,
    ]
    events = hook_provider.events_received
    assert all(event.agent is agent for event in events)
    assert [plain(m) for m in events[0].messages] == [{"role": "user", "content": [{"text": "test message"}]}]
    assert events[1].message == agent.messages[0]
    first_model = events[3]
    assert first_model.exception is None
    assert first_model.stop_response.stop_reason == "tool_use"
    assert plain(first_model.stop_response.message) == {"role": "assistant", "content": [{"toolUse": tool_use}]}
    assert events[4].message == agent.messages[1]
    assert events[5].selected_tool is agent_tool
    assert events[5].tool_use == tool_use
    assert events[6].result == {"content": [{"text": "!loot a dekovni I"}], "status": "success", "toolUseId": "123"}
    assert events[7].message == agent.messages[2]
    assert events[9].stop_response.stop_reason == "end_turn"
    assert plain(events[9].stop_response.message) == {"role": "assistant", "content": [{"text": "I invoked a tool!"}]}
    assert events[10].message == agent.messages[3]
    assert events[11].result == result
    assert len(agent.messages) == 4


async def test_agent_stream_async_hooks(agent: Agent, hook_provider: MockHookProvider) -> None:
    events = [event async for event in agent.stream_async("test message")]

    assert str(events[-1]["result"]) == "I invoked a tool!\n"
    assert hook_provider.event_types_received[0] is BeforeInvocationEvent
    assert hook_provider.event_types_received[-1] is AfterInvocationEvent
    assert hook_provider.event_types_received.count(BeforeModelCallEvent) == 2
    assert hook_provider.event_types_received.count(AfterToolCallEvent) == 1
    assert hook_provider.event_types_received.count(MessageAddedEvent) == 4
    assert len(agent.messages) == 4


def test_agent_structured_output_hooks() -> None:
    class User(BaseModel):
        name: str
        age: int

    provider = MockHookProvider(ALL_EVENTS)
    agent = Agent(
        model=MockedModelProvider([], structured_outputs=[User(name="Jane Doe", age=30)]), hooks=[provider], callback_handler=None
    )
    provider.events_received.clear()

    agent.structured_output(User, "example prompt")

    assert provider.event_types_received == [BeforeInvocationEvent, AfterInvocationEvent]
    assert len(agent.messages) == 0


def test_hook_retry_on_successful_call() -> None:
    class MinLengthRetryHook(HookProvider):
        def __init__(self, min_length: int = 10) -> None:
            self.min_length = min_length
            self.call_count = 0

        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterModelCallEvent, self.handle_after_model_call)

        async def handle_after_model_call(self, event: AfterModelCallEvent) -> None:
            self.call_count += 1
            if event.stop_response:
                content = event.stop_response.message.get("content", [])
                if len("".join(block.get("text", "") for block in content)) < self.min_length:
                    event.retry = True

    hook = MinLengthRetryHook(min_length=10)
    model = MockedModelProvider([text("Short"), text("This is a much longer and more detailed response")])
    agent = Agent(model=model, hooks=[hook], callback_handler=None)

    result = agent("Generate a response")

    assert hook.call_count == 2
    assert result.message["content"][0]["text"] == "This is a much longer and more detailed response"
    assert len(model.calls) == 2
    assert [plain(m) for m in agent.messages] == [
        {"role": "user", "content": [{"text": "Generate a response"}]},
        {"role": "assistant", "content": [{"text": "This is a much longer and more detailed response"}]},
    ]


def test_hook_retry_not_set_on_success() -> None:
    calls: list[Any] = []
    model = MockedModelProvider([text("Success")])
    agent = Agent(model=model, callback_handler=None)
    agent.hooks.add_callback(AfterModelCallEvent, lambda event: calls.append(event))

    result = agent("Test")

    assert len(calls) == 1
    assert result.message["content"][0]["text"] == "Success"
    assert model.index == 1


def test_before_invocation_event_message_modification() -> None:
    modified: list[str] = []

    async def input_guardrail_hook(event: BeforeInvocationEvent) -> None:
        if event.messages is not None:
            for message in event.messages:
                if message.get("role") == "user":
                    for block in message.get("content", []):
                        if "text" in block and "SECRET" in block["text"]:
                            block["text"] = block["text"].replace("SECRET", "[REDACTED]")
            modified.append(event.messages[0]["content"][0]["text"])

    model = MockedModelProvider([text("I received your redacted message")])
    agent = Agent(model=model, callback_handler=None)
    agent.hooks.add_callback(BeforeInvocationEvent, input_guardrail_hook)

    agent("My password is SECRET123")

    assert modified == ["My password is [REDACTED]123"]
    assert agent.messages[0]["content"][0]["text"] == "My password is [REDACTED]123"
    assert model.calls[0]["messages"][0]["content"] == [{"text": "My password is [REDACTED]123"}]


def test_before_invocation_event_message_overwrite() -> None:
    async def overwrite_input_hook(event: BeforeInvocationEvent) -> None:
        event.messages = [{"role": "user", "content": [{"text": "GOODBYE"}]}]

    model = MockedModelProvider([text("I received your message message")])
    agent = Agent(model=model, callback_handler=None)
    agent.hooks.add_callback(BeforeInvocationEvent, overwrite_input_hook)

    agent("HELLO")

    assert agent.messages[0]["content"][0]["text"] == "GOODBYE"
    assert model.calls[0]["messages"] == [{"role": "user", "content": [{"text": "GOODBYE"}]}]


def test_after_invocation_resume_triggers_new_invocation() -> None:
    resumed: list[int] = []

    async def resume_once(event: AfterInvocationEvent) -> None:
        if not resumed:
            resumed.append(1)
            event.resume = "continue"

    agent = Agent(model=MockedModelProvider([text("First response"), text("Second response")]), callback_handler=None)
    agent.hooks.add_callback(AfterInvocationEvent, resume_once)

    result = agent("start")

    assert resumed == [1]
    assert result.message["content"][0]["text"] == "Second response"
    assert len(agent.messages) == 4
    assert agent.messages[0]["content"][0]["text"] == "start"
    assert agent.messages[2]["content"][0]["text"] == "continue"


def test_after_invocation_resume_none_does_not_loop() -> None:
    calls: list[Any] = []

    async def no_resume(event: AfterInvocationEvent) -> None:
        calls.append(event.resume)

    agent = Agent(model=MockedModelProvider([text("Only response")]), callback_handler=None)
    agent.hooks.add_callback(AfterInvocationEvent, no_resume)

    result = agent("hello")

    assert calls == [None]
    assert result.message["content"][0]["text"] == "Only response"


def test_after_invocation_resume_fires_before_invocation_event() -> None:
    before: list[Any] = []
    resumed: list[int] = []

    def on_before(event: BeforeInvocationEvent) -> None:
        before.append(event)

    def resume_once(event: AfterInvocationEvent) -> None:
        if not resumed:
            resumed.append(1)
            event.resume = "again"

    agent = Agent(model=MockedModelProvider([text("First"), text("Second")]), hooks=[on_before, resume_once], callback_handler=None)
    agent("go")

    assert len(before) == 2


def test_after_events_call_callbacks_in_reverse_order() -> None:
    order: list[str] = []
    agent = Agent(model=MockedModelProvider([text("hi")]), callback_handler=None)
    agent.hooks.add_callback(BeforeInvocationEvent, lambda e: order.append("before-1"))
    agent.hooks.add_callback(BeforeInvocationEvent, lambda e: order.append("before-2"))
    agent.hooks.add_callback(AfterInvocationEvent, lambda e: order.append("after-1"))
    agent.hooks.add_callback(AfterInvocationEvent, lambda e: order.append("after-2"))

    agent("hello")

    assert order == ["before-1", "before-2", "after-2", "after-1"]


def test_before_tool_call_can_replace_the_tool_use(agent_tool: Any) -> None:
    def rewrite(event: BeforeToolCallEvent) -> None:
        event.tool_use["input"] = {"random_string": "rewritten"}

    agent = Agent(
        model=MockedModelProvider([tool_call("tool_decorated", {"random_string": "original"}, "t1"), text("ok")]),
        tools=[agent_tool],
        hooks=[rewrite],
        callback_handler=None,
    )
    agent("go")
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "nettirwer"}]


def test_before_tool_call_can_cancel_the_tool(agent_tool: Any) -> None:
    calls: list[str] = []

    @tool
    def guarded(value: str) -> str:
        calls.append(value)
        return value

    def cancel(event: BeforeToolCallEvent) -> None:
        event.cancel_tool = "not allowed"

    agent = Agent(
        model=MockedModelProvider([tool_call("guarded", {"value": "x"}, "t1"), text("ok")]),
        tools=[guarded],
        hooks=[cancel],
        callback_handler=None,
    )
    agent("go")

    assert calls == []
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert result["toolUseId"] == "t1"
    assert result["content"] == [{"text": "not allowed"}]


def test_after_tool_call_can_replace_the_result(agent_tool: Any) -> None:
    def replace(event: AfterToolCallEvent) -> None:
        event.result = {"toolUseId": event.tool_use["toolUseId"], "status": "success", "content": [{"text": "replaced"}]}

    model = MockedModelProvider([tool_call("tool_decorated", {"random_string": "abc"}, "t1"), text("ok")])
    agent = Agent(model=model, tools=[agent_tool], hooks=[replace], callback_handler=None)
    agent("go")

    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "replaced"}]
    assert model.calls[1]["messages"][2]["content"][0]["toolResult"]["content"] == [{"text": "replaced"}]


def test_event_fields_writable_or_not(agent_tool: Any) -> None:
    """Upstream agent/hooks/test_events.py: which fields a hook may assign."""
    errors: dict[str, bool] = {}

    def try_set(name: str, event: Any, attribute: str, value: Any) -> None:
        try:
            setattr(event, attribute, value)
        except AttributeError:
            errors[name] = True
        else:
            errors[name] = False

    def on_message(event: MessageAddedEvent) -> None:
        try_set("message_added.message", event, "message", {"role": "user", "content": []})

    def on_before_tool(event: BeforeToolCallEvent) -> None:
        try_set("before_tool.agent", event, "agent", None)
        try_set("before_tool.selected_tool", event, "selected_tool", event.selected_tool)

    def on_after_tool(event: AfterToolCallEvent) -> None:
        try_set("after_tool.tool_use", event, "tool_use", event.tool_use)
        try_set("after_tool.result", event, "result", event.result)

    def on_after_invocation(event: AfterInvocationEvent) -> None:
        try_set("after_invocation.agent", event, "agent", None)

    agent = Agent(
        model=MockedModelProvider([tool_call("tool_decorated", {"random_string": "abc"}, "t1"), text("ok")]),
        tools=[agent_tool],
        hooks=[on_message, on_before_tool, on_after_tool, on_after_invocation],
        callback_handler=None,
    )
    agent("go")

    assert errors == {
        "message_added.message": True,
        "before_tool.agent": True,
        "before_tool.selected_tool": False,
        "after_tool.tool_use": True,
        "after_tool.result": False,
        "after_invocation.agent": True,
    }


def test_invocation_state_is_available_in_events() -> None:
    seen: dict[str, Any] = {}

    def on_before(event: BeforeInvocationEvent) -> None:
        seen["before"] = event.invocation_state.get("marker")

    def on_model(event: BeforeModelCallEvent) -> None:
        seen["model"] = event.invocation_state.get("marker")

    def on_after(event: AfterInvocationEvent) -> None:
        seen["after"] = event.invocation_state.get("marker")

    agent = Agent(model=MockedModelProvider([text("ok")]), hooks=[on_before, on_model, on_after], callback_handler=None)
    agent("go", invocation_state={"marker": "m-1"})

    assert seen == {"before": "m-1", "model": "m-1", "after": "m-1"}


# --- Agent(hooks=...) ---------------------------------------------------------------------


def test_hooks_param_accepts_callable() -> None:
    received: list[Any] = []

    def my_callback(event: AgentInitializedEvent) -> None:
        received.append(event)

    agent = Agent(model=MockedModelProvider([]), hooks=[my_callback], callback_handler=None)

    assert len(received) == 1
    assert isinstance(received[0], AgentInitializedEvent)
    assert received[0].agent is agent


def test_hooks_param_accepts_mixed_list() -> None:
    received: list[Any] = []

    def my_callback(event: AgentInitializedEvent) -> None:
        received.append(event)

    provider = MockHookProvider([AgentInitializedEvent])
    agent = Agent(model=MockedModelProvider([]), hooks=[provider, my_callback], callback_handler=None)

    assert len(received) == 1
    assert received[0].agent is agent
    assert provider.get_events()[0] == 1


def test_hooks_param_invalid_hook_raises_error() -> None:
    with pytest.raises(ValueError, match="Invalid hook"):
        Agent(model=MockedModelProvider([]), hooks=["not_a_hook"], callback_handler=None)  # type: ignore[list-item]


def test_hooks_param_callable_invoked_during_lifecycle() -> None:
    before: list[Any] = []

    def on_before(event: BeforeInvocationEvent) -> None:
        before.append(event)

    agent = Agent(model=MockedModelProvider([text("Hello!")]), hooks=[on_before], callback_handler=None)
    agent("test")

    assert len(before) == 1
    assert isinstance(before[0], BeforeInvocationEvent)


def test_add_callback_infers_event_type() -> None:
    received: list[Any] = []

    def typed(event: BeforeModelCallEvent) -> None:
        received.append(event)

    agent = Agent(model=MockedModelProvider([text("ok")]), callback_handler=None)
    agent.hooks.add_callback(None, typed)
    agent("go")
    assert [type(e) for e in received] == [BeforeModelCallEvent]


def test_add_callback_union_types() -> None:
    received: list[type] = []

    def either(event: BeforeModelCallEvent | AfterModelCallEvent) -> None:
        received.append(type(event))

    agent = Agent(model=MockedModelProvider([text("ok")]), callback_handler=None)
    agent.hooks.add_callback(None, either)
    agent("go")
    assert received == [BeforeModelCallEvent, AfterModelCallEvent]


def test_add_callback_without_type_hint_raises() -> None:
    agent = Agent(model=MockedModelProvider([]), callback_handler=None)

    def untyped(event):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(ValueError):
        agent.hooks.add_callback(None, untyped)


def test_hook_provider_registered_after_construction_sees_later_events() -> None:
    provider = MockHookProvider([AgentInitializedEvent, BeforeInvocationEvent])
    agent = Agent(model=MockedModelProvider([text("ok")]), callback_handler=None)
    agent.hooks.add_hook(provider)
    agent("go")
    assert provider.event_types_received == [BeforeInvocationEvent]


def test_mock_callback_receives_event_instance() -> None:
    callback = unittest.mock.Mock()
    agent = Agent(model=MockedModelProvider([text("ok")]), callback_handler=None)
    agent.hooks.add_callback(AfterInvocationEvent, callback)
    result = agent("go")
    callback.assert_called_once()
    (event,) = callback.call_args[0]
    assert isinstance(event, AfterInvocationEvent)
    assert event.result == result


async def test_agent_structured_async_output_hooks() -> None:
    class User(BaseModel):
        name: str
        age: int

    provider = MockHookProvider(ALL_EVENTS)
    agent = Agent(
        model=MockedModelProvider([], structured_outputs=[User(name="Jane Doe", age=30)]), hooks=[provider], callback_handler=None
    )
    provider.events_received.clear()

    await agent.structured_output_async(User, "example prompt")

    assert provider.event_types_received == [BeforeInvocationEvent, AfterInvocationEvent]
    assert len(agent.messages) == 0


def test_after_invocation_resume_multiple_times() -> None:
    resumes: list[int] = []

    async def resume_twice(event: AfterInvocationEvent) -> None:
        if len(resumes) < 2:
            resumes.append(1)
            event.resume = f"iteration {len(resumes) + 1}"

    agent = Agent(model=MockedModelProvider([text("Response 1"), text("Response 2"), text("Response 3")]), callback_handler=None)
    agent.hooks.add_callback(AfterInvocationEvent, resume_twice)

    result = agent("iteration 1")

    assert len(resumes) == 2
    assert result.message["content"][0]["text"] == "Response 3"
    assert [m["content"][0]["text"] for m in agent.messages] == [
        "iteration 1",
        "Response 1",
        "iteration 2",
        "Response 2",
        "iteration 3",
        "Response 3",
    ]
