"""Ported from strands-agents/sdk-python ``tests/strands/agent/test_agent.py``: the Agent's public behaviour.

Upstream drives most tests through a ``unittest.mock.Mock`` model and asserts the exact
arguments of ``model.stream``; here the model is the ported ``MockedModelProvider`` (a real
``Model`` subclass) and the assertions are on what it was sent and what the agent returns.

Excluded upstream tests (name — reason):
- test_agent__init__with_default_model — builds a BedrockModel (provider SDK, AWS region): provider construction is the
  models engineer's test
- test_agent__init__with_string_model_id — same (a bare id becomes a BedrockModel)
- test_agent_init_with_no_model_or_model_id — same
- test_agent__call__passes_invocation_state — patches strands.agent.agent.event_loop_cycle
- test_stream_async_returns_all_events — patches event_loop_cycle
- test_stream_async_passes_invocation_state — patches event_loop_cycle
- test_stream_async_raises_exceptions — patches event_loop_cycle
- test_agent__call__invocation_state_with_kwargs_deprecation_warning — patches event_loop_cycle
- test_agent__call__invocation_state_only_no_warning — patches event_loop_cycle
- test_agent__call__always_sliding_window_conversation_manager_doesnt_infinite_loop — wraps the conversation manager in
  a Mock spy and counts calls of its methods (internal call protocol)
- test_agent__call__retry_with_overwritten_tool — asserts the exact truncation text and spy call counts of the
  conversation manager's internals
- test_agent__call__tool_truncation_doesnt_infinite_loop — relies on the Mock model raising forever through the internal truncation path
- test_agent__call__invalid_tool_use_event_loop_exception — a Mock side effect raising a bare exception class mid-stream
  (internal EventLoopException wrapping)
- test_agent__call__callback — asserts internal callback kwargs (event_loop_cycle_span, request_state, raw model
  events); ported as test_callback_handler_receives_strands_events on the public keys
- test_agent_structured_output / test_agent_structured_output_multi_modal_input — also assert OpenTelemetry span
  attributes through a mocked tracer; the public part is ported
- test_agent_init_with_trace_attributes, test_agent_init_initializes_tracer,
  test_agent_call_creates_and_ends_span_on_success, test_agent_stream_async_creates_and_ends_span_on_success,
  test_agent_call_creates_and_ends_span_on_exception, test_agent_stream_async_creates_and_ends_span_on_exception — patch
  strands.agent.agent.get_tracer (telemetry internals)
- test_agent_session_management, test_agent_restored_from_session_management*,
  test_agent_with_session_and_conversation_manager — use tests/fixtures MockedSessionRepository and assert repository
  internals; session behaviour is ported in test_file_session_manager.py through FileSessionManager
- test_agent_redacts_input_on_triggered_guardrail (ported as test_guardrail_redacts_input) — not supported by
  tether.strands yet: a model's ``redactContent`` event (guardrail_intervened) does not replace the stored user input;
  Tether's loop has no redaction step for messages already recorded (the facade logs a warning)
- test_agent__call__resume_interrupt* and test_agent_structured_output_interrupt — set the private agent._interrupt_state
- test_agent_del_before_tool_registry_set — deletes a private attribute and calls __del__
- test_redact_user_content — calls the private agent._redact_user_content
- test_agent_concurrent_* and test_agent_sequential_invocations_work, test_agent_lock_released_on_exception —
  concurrent_invocation_mode / threads synchronised inside model.stream (Strands-internal locking; Tether fences runs
  its own way)
- test_agent_add_hook_delegates_to_hooks_add_callback — patches agent.hooks.add_callback
- test_agent_plugins_* — Strands Plugin API (outside the surface issue 29 mirrors)
- test_as_tool_returns_agent_tool — isinstance check on the private _AgentAsTool class (name/description tests are ported)
- test_system_prompt_setter_* and test_agent_*_system_prompt — assert the private agent._system_prompt_content; ported
  on the public system_prompt / system_prompt_content
- test_agent_backwards_compatibility_string_access, test_agent_backwards_compatibility_single_text_block — duplicates of
  test_agent_string_system_prompt / test_agent_single_text_block_system_prompt (same assertions)
- test_agent_with_invalid_input_list, test_agent_with_list_of_message_and_content_block — ported as cases of the
  parametrised test_agent_with_invalid_input
- test_as_tool_runs_the_agent (ported from the as_tool tests) — asserts the child agent object's messages after the call;
  Tether runs each agent-tool call on a runner (a fresh agent sharing the child's configuration, its state kept in the
  parent's run state), so parallel and durable calls never share one agent: the child object is not changed by a call
"""

from __future__ import annotations

import json
import textwrap
import unittest.mock
from typing import Any

import pytest
from pydantic import BaseModel

from tether.strands import Agent, ToolContext, tool
from tether.strands.agent import AgentResult
from tether.strands.agent.conversation_manager import NullConversationManager
from tether.strands.agent.state import AgentState
from tether.strands.handlers import PrintingCallbackHandler, null_callback_handler
from tether.strands.hooks import BeforeInvocationEvent, BeforeModelCallEvent
from tether.strands.types.exceptions import ContextWindowOverflowException

from .mocked_model_provider import MockedModelProvider, plain, text, tool_call

SYSTEM = "You are a helpful assistant."


class User(BaseModel):
    name: str
    age: int
    email: str


@pytest.fixture
def tool_decorated() -> Any:
    @tool(name="tool_decorated")
    def function(random_string: str) -> str:
        return random_string

    return function


@pytest.fixture
def tool_module(tmp_path: Any) -> str:
    definition = textwrap.dedent(
        """
        TOOL_SPEC = {
            "name": "tool_module",
            "description": "tool module",
            "inputSchema": {"json": {"type": "object", "properties": {}}},
        }

        def tool_module(tool_use, **kwargs):
            return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "from module"}]}
        """
    )
    path = tmp_path / "tool_module.py"
    path.write_text(definition)
    return str(path)


@pytest.fixture
def tool_imported(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    definition = textwrap.dedent(
        """
        TOOL_SPEC = {
            "name": "tool_imported",
            "description": "tool imported",
            "inputSchema": {"json": {"type": "object", "properties": {}}},
        }

        def tool_imported(tool_use, **kwargs):
            return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "imported"}]}
        """
    )
    package = tmp_path / "ported_tools_pkg"
    package.mkdir()
    (package / "__init__.py").touch()
    (package / "tool_imported.py").write_text(definition)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    return importlib.import_module("ported_tools_pkg.tool_imported")


def agent_with(responses: list[Any], **kwargs: Any) -> tuple[Agent, MockedModelProvider]:
    model = MockedModelProvider(responses)
    kwargs.setdefault("callback_handler", None)
    return Agent(model=model, **kwargs), model


# --- construction -------------------------------------------------------------------------


def test_agent__init__tool_loader_format(tool_decorated: Any, tool_module: str, tool_imported: Any) -> None:
    agent = Agent(model=MockedModelProvider([]), tools=[tool_decorated, tool_module, tool_imported])

    tru_tool_names = sorted(spec["name"] for spec in agent.tool_registry.get_all_tool_specs())
    assert tru_tool_names == ["tool_decorated", "tool_imported", "tool_module"]


def test_agent__init__nested_tools_flattening(tool_decorated: Any, tool_module: str, tool_imported: Any) -> None:
    agent = Agent(model=MockedModelProvider([]), tools=[tool_decorated, [tool_module, [tool_imported]]])
    assert sorted(agent.tool_names) == ["tool_decorated", "tool_imported", "tool_module"]


def test_agent__init__deeply_nested_tools(tool_decorated: Any, tool_module: str, tool_imported: Any) -> None:
    agent = Agent(model=MockedModelProvider([]), tools=[[[[tool_decorated]], [[tool_module]], tool_imported]])
    assert sorted(agent.tool_names) == ["tool_decorated", "tool_imported", "tool_module"]


@pytest.mark.parametrize("agent_id", ["a/../b", "a/b"])
def test_agent__init__invalid_id(agent_id: str) -> None:
    with pytest.raises(ValueError, match=f"agent_id={agent_id} | id cannot contain path separators"):
        Agent(model=MockedModelProvider([]), agent_id=agent_id)


def test_agent__init__with_explicit_model() -> None:
    model = MockedModelProvider([])
    agent = Agent(model=model)
    assert agent.model is model


def test_agent_tool_names(tool_decorated: Any) -> None:
    assert Agent(model=MockedModelProvider([]), tools=[tool_decorated]).tool_names == ["tool_decorated"]
    assert Agent(model=MockedModelProvider([])).tool_names == []


def test_agent_defaults() -> None:
    """Strands' documented defaults: agent_id "default", name "Strands Agents", no messages, empty state."""
    agent = Agent(model=MockedModelProvider([]))
    assert agent.agent_id == "default"
    assert agent.name == "Strands Agents"
    assert agent.messages == []
    assert agent.state.get() == {}


# --- invocation ---------------------------------------------------------------------------


def test_agent__call__(tool_decorated: Any) -> None:
    agent, model = agent_with(
        [tool_call("tool_decorated", {"random_string": "abcdEfghI123"}, "t1"), text("test text")],
        system_prompt=SYSTEM,
        tools=[tool_decorated],
    )

    result = agent("test message")

    assert plain(result.message) == {"content": [{"text": "test text"}], "role": "assistant"}
    assert result.state == {}
    assert result.stop_reason == "end_turn"
    assert str(result) == "test text\n"

    assert len(model.calls) == 2
    assert model.calls[0]["messages"] == [{"role": "user", "content": [{"text": "test message"}]}]
    assert model.calls[0]["tool_names"] == ["tool_decorated"]
    assert model.calls[0]["system_prompt"] == SYSTEM
    assert model.calls[1]["messages"] == [
        {"role": "user", "content": [{"text": "test message"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "tool_decorated", "input": {"random_string": "abcdEfghI123"}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "abcdEfghI123"}]}}],
        },
    ]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[-1]["content"] == [{"text": "test text"}]


def test_agent__call__retry_with_reduced_context() -> None:
    agent, model = agent_with([ContextWindowOverflowException(RuntimeError("Input is too long for requested model")), text("Green!")])
    agent.messages = [
        {"role": "user", "content": [{"text": "Hello!"}]},
        {"role": "assistant", "content": [{"text": "Hi!"}]},
        {"role": "user", "content": [{"text": "Whats your favorite color?"}]},
        {"role": "assistant", "content": [{"text": "Blue!"}]},
    ]

    result = agent("And now?")

    assert str(result) == "Green!\n"
    assert model.calls[-1]["messages"] == [
        {"role": "user", "content": [{"text": "Whats your favorite color?"}]},
        {"role": "assistant", "content": [{"text": "Blue!"}]},
        {"role": "user", "content": [{"text": "And now?"}]},
    ]


def test_agent__call__null_conversation_window_manager__doesnt_infinite_loop() -> None:
    overflow = ContextWindowOverflowException(RuntimeError("Input is too long for requested model"))
    agent, model = agent_with([overflow], conversation_manager=NullConversationManager())
    agent.messages = [
        {"role": "user", "content": [{"text": "Hello!"}]},
        {"role": "assistant", "content": [{"text": "Hi!"}]},
    ] * 10

    with pytest.raises(ContextWindowOverflowException):
        agent("Test!")
    assert len(model.calls) == 1


async def test_agent__call__in_async_context() -> None:
    agent, _ = agent_with([text("abc")])
    result = agent("test")
    assert plain(result.message) == {"content": [{"text": "abc"}], "role": "assistant"}


async def test_agent_invoke_async() -> None:
    agent, _ = agent_with([text("abc")])
    result = await agent.invoke_async("test")
    assert plain(result.message) == {"content": [{"text": "abc"}], "role": "assistant"}
    assert isinstance(result, AgentResult)


async def test_stream_async_yields_strands_events(tool_decorated: Any) -> None:
    agent, _ = agent_with([tool_call("tool_decorated", {"random_string": "xyz"}, "t1"), text("done")], tools=[tool_decorated])

    events = [event async for event in agent.stream_async("go")]

    assert [e["data"] for e in events if "data" in e] == ["done"]
    tool_uses = [e["current_tool_use"] for e in events if "current_tool_use" in e]
    assert tool_uses and tool_uses[-1]["name"] == "tool_decorated"
    assert tool_uses[-1]["toolUseId"] == "t1"
    assert "result" in events[-1]
    assert isinstance(events[-1]["result"], AgentResult)
    assert str(events[-1]["result"]) == "done\n"
    assert any("message" in e and e["message"]["role"] == "assistant" for e in events)


async def test_stream_async_multi_modal_input() -> None:
    agent, model = agent_with([text("I see text and an image")])
    prompt = [
        {"text": "This is a description of the image:"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n\x1a\n"}}},
    ]

    events = [event async for event in agent.stream_async(prompt)]

    assert str(events[-1]["result"]) == "I see text and an image\n"
    assert agent.messages[0]["role"] == "user"
    assert agent.messages[0]["content"][0] == {"text": "This is a description of the image:"}
    assert agent.messages[0]["content"][1]["image"]["format"] == "png"
    assert model.calls[0]["messages"][0]["content"][0] == {"text": "This is a description of the image:"}


# --- callback handler ---------------------------------------------------------------------


def test_agent_with_callback_handler_none_uses_null_handler() -> None:
    agent = Agent(model=MockedModelProvider([]), callback_handler=None)
    assert agent.callback_handler is null_callback_handler


def test_agent_callback_handler_not_provided_creates_new_instances() -> None:
    agent1 = Agent(model=MockedModelProvider([]))
    agent2 = Agent(model=MockedModelProvider([]))
    assert isinstance(agent1.callback_handler, PrintingCallbackHandler)
    assert isinstance(agent2.callback_handler, PrintingCallbackHandler)
    assert agent1.callback_handler is not agent2.callback_handler


def test_handlers_module_path() -> None:
    from tether.strands.handlers.callback_handler import PrintingCallbackHandler as FromModule
    from tether.strands.handlers.callback_handler import null_callback_handler as null_from_module

    assert FromModule is PrintingCallbackHandler
    assert null_from_module is null_callback_handler


def test_agent_callback_handler_custom_handler_used() -> None:
    handler = unittest.mock.Mock()
    agent = Agent(model=MockedModelProvider([]), callback_handler=handler)
    assert agent.callback_handler is handler


def test_callback_handler_receives_strands_events(tool_decorated: Any) -> None:
    """The public part of upstream test_agent__call__callback: the keyword arguments handlers read."""
    calls: list[dict[str, Any]] = []
    agent = Agent(
        model=MockedModelProvider(
            [
                {
                    "role": "assistant",
                    "content": [
                        {"reasoningContent": {"text": "thinking"}},
                        {"text": "value"},
                    ],
                },
            ]
        ),
        callback_handler=lambda **kwargs: calls.append(kwargs),
        tools=[tool_decorated],
    )

    result = agent("test")

    keys = [
        next(
            iter(k for k in ("init_event_loop", "start", "start_event_loop", "data", "reasoningText", "message", "result") if k in c), None
        )
        for c in calls
    ]
    keys = [k for k in keys if k is not None]
    assert keys[:3] == ["init_event_loop", "start", "start_event_loop"]
    assert keys[-2:] == ["message", "result"]
    assert [c["data"] for c in calls if "data" in c] == ["value"]
    assert [c["reasoningText"] for c in calls if "reasoningText" in c] == ["thinking"]
    assert all(c.get("reasoning") is True for c in calls if "reasoningText" in c)
    assert all(c["delta"] == {"text": "value"} for c in calls if "data" in c)
    message = next(c["message"] for c in calls if "message" in c)
    assert message["content"] == [{"reasoningContent": {"reasoningText": {"text": "thinking"}}}, {"text": "value"}]
    assert calls[-1]["result"].stop_reason == "end_turn"
    assert calls[-1]["result"].message == result.message


def test_callback_handler_sees_tool_use_stream(tool_decorated: Any) -> None:
    calls: list[dict[str, Any]] = []
    agent = Agent(
        model=MockedModelProvider([tool_call("tool_decorated", {"random_string": "abc"}, "123"), text("ok")]),
        callback_handler=lambda **kwargs: calls.append(kwargs),
        tools=[tool_decorated],
    )

    agent("test")

    tool_uses = [c["current_tool_use"] for c in calls if "current_tool_use" in c]
    assert tool_uses[-1] == {"toolUseId": "123", "name": "tool_decorated", "input": {"random_string": "abc"}}
    messages = [c["message"] for c in calls if "message" in c]
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant"]
    assert messages[1]["content"][0]["toolResult"]["content"] == [{"text": "abc"}]


# --- structured output --------------------------------------------------------------------


def test_agent_structured_output() -> None:
    user = User(name="Jane Doe", age=30, email="jane@doe.com")
    model = MockedModelProvider([], structured_outputs=[user])
    agent = Agent(model=model, system_prompt=SYSTEM, callback_handler=None)
    prompt = "Jane Doe is 30 years old and her email is jane@doe.com"

    assert agent.structured_output(User, prompt) == user
    assert agent.messages == []
    assert model.structured_calls == [
        {"output_model": User, "messages": [{"role": "user", "content": [{"text": prompt}]}], "system_prompt": SYSTEM}
    ]


def test_agent_structured_output_multi_modal_input() -> None:
    user = User(name="Jane Doe", age=30, email="jane@doe.com")
    model = MockedModelProvider([], structured_outputs=[user])
    agent = Agent(model=model, system_prompt=SYSTEM, callback_handler=None)
    prompt = [
        {"text": "Please describe the user in this image"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n\x1a\n"}}},
    ]

    assert agent.structured_output(User, prompt) == user
    assert agent.messages == []
    assert len(model.structured_calls) == 1
    sent = model.structured_calls[0]["messages"]
    assert len(sent) == 1 and sent[0]["role"] == "user"
    assert sent[0]["content"][0] == {"text": "Please describe the user in this image"}
    assert sent[0]["content"][1]["image"]["format"] == "png"


async def test_agent_structured_output_in_async_context() -> None:
    user = User(name="Jane Doe", age=30, email="jane@doe.com")
    agent = Agent(model=MockedModelProvider([], structured_outputs=[user]), callback_handler=None)
    assert await agent.structured_output_async(User, "Jane Doe is 30 years old") == user
    assert agent.messages == []


def test_agent_structured_output_without_prompt() -> None:
    user = User(name="Jane Doe", age=30, email="jane@doe.com")
    model = MockedModelProvider([], structured_outputs=[user])
    agent = Agent(model=model, system_prompt=SYSTEM, callback_handler=None)
    existing = [
        {"role": "user", "content": [{"text": "Jane Doe is 30 years old"}]},
        {"role": "assistant", "content": [{"text": "I understand."}]},
    ]
    agent.messages.extend(existing)

    assert agent.structured_output(User) == user
    assert agent.messages == existing
    assert model.structured_calls[0]["messages"] == existing
    assert model.structured_calls[0]["system_prompt"] == SYSTEM


# --- system prompt ------------------------------------------------------------------------


def test_agent_string_system_prompt() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt="You are a helpful assistant.")
    assert agent.system_prompt == "You are a helpful assistant."
    assert agent.system_prompt_content == [{"text": "You are a helpful assistant."}]


def test_agent_single_text_block_system_prompt() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt=[{"text": "You are a helpful assistant."}])
    assert agent.system_prompt == "You are a helpful assistant."
    assert agent.system_prompt_content == [{"text": "You are a helpful assistant."}]


def test_agent_multiple_blocks_system_prompt() -> None:
    blocks = [
        {"text": "You are a helpful assistant."},
        {"cachePoint": {"type": "default"}},
        {"text": "Additional instructions."},
    ]
    agent = Agent(model=MockedModelProvider([]), system_prompt=blocks)
    assert agent.system_prompt == "You are a helpful assistant.\nAdditional instructions."
    assert agent.system_prompt_content == blocks


def test_agent_single_non_text_block_system_prompt() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt=[{"cachePoint": {"type": "default"}}])
    assert agent.system_prompt is None
    assert agent.system_prompt_content == [{"cachePoint": {"type": "default"}}]


def test_agent_none_system_prompt() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt=None)
    assert agent.system_prompt is None
    assert agent.system_prompt_content is None


def test_system_prompt_setter_string() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt="initial prompt")
    agent.system_prompt = "updated prompt"
    assert agent.system_prompt == "updated prompt"
    assert agent.system_prompt_content == [{"text": "updated prompt"}]


def test_system_prompt_setter_list() -> None:
    agent = Agent(model=MockedModelProvider([]))
    blocks = [{"text": "You are helpful"}, {"cachePoint": {"type": "default"}}]
    agent.system_prompt = blocks
    assert agent.system_prompt == "You are helpful"
    assert agent.system_prompt_content == blocks


def test_system_prompt_setter_none() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt="initial prompt")
    agent.system_prompt = None
    assert agent.system_prompt is None
    assert agent.system_prompt_content is None


def test_system_prompt_content_returns_copy() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt="hello")
    content = agent.system_prompt_content
    content.append({"text": "injected"})
    assert agent.system_prompt_content == [{"text": "hello"}]


def test_system_prompt_reaches_the_model() -> None:
    agent, model = agent_with([text("hi")], system_prompt="Be brief.")
    agent("hello")
    assert model.calls[0]["system_prompt"] == "Be brief."


# --- state --------------------------------------------------------------------------------


def test_agent_init_with_state_object() -> None:
    agent = Agent(model=MockedModelProvider([]), state=AgentState({"foo": "bar"}))
    assert agent.state.get("foo") == "bar"


def test_non_dict_throws_error() -> None:
    with pytest.raises(ValueError, match="state must be an AgentState object or a dict"):
        Agent(model=MockedModelProvider([]), state={"object", object()})  # type: ignore[arg-type]


def test_non_json_serializable_state_throws_error() -> None:
    with pytest.raises(ValueError, match="Value is not JSON serializable"):
        Agent(model=MockedModelProvider([]), state={"object": object()})


def test_agent_state_breaks_dict_reference() -> None:
    ref_dict: dict[str, Any] = {"hello": "world"}
    agent = Agent(model=MockedModelProvider([]), state=ref_dict)
    ref_dict["hello"] = object()
    assert json.dumps(agent.state.get()) == '{"hello": "world"}'


def test_agent_state_breaks_deep_dict_reference() -> None:
    ref_dict: dict[str, Any] = {"world": "!"}
    agent = Agent(model=MockedModelProvider([]), state={"hello": ref_dict})
    ref_dict["world"] = object()
    assert json.dumps(agent.state.get()) == '{"hello": {"world": "!"}}'


def test_agent_state_set_breaks_dict_reference() -> None:
    agent = Agent(model=MockedModelProvider([]))
    ref_dict: dict[str, Any] = {"hello": "world"}
    agent.state.set("hello", ref_dict)
    ref_dict["hello"] = object()
    assert json.dumps(agent.state.get()) == '{"hello": {"hello": "world"}}'


def test_agent_state_get_breaks_deep_dict_reference() -> None:
    agent = Agent(model=MockedModelProvider([]), state={"hello": {"world": "!"}})
    ref_state = agent.state.get()
    ref_state["hello"]["world"] = object()
    assert json.dumps(agent.state.get()) == '{"hello": {"world": "!"}}'


def test_agent_state_delete_and_result_state() -> None:
    @tool(context=True)
    def remember(value: str, tool_context: ToolContext) -> str:
        tool_context.agent.state.set("remembered", value)
        return "ok"

    agent, _ = agent_with([tool_call("remember", {"value": "blue"}, "t1"), text("noted")], tools=[remember], state={"a": 1})
    agent("remember blue")
    assert agent.state.get() == {"a": 1, "remembered": "blue"}
    agent.state.delete("a")
    assert agent.state.get("a") is None
    assert agent.state.get() == {"remembered": "blue"}


# --- prompt shapes ------------------------------------------------------------------------


def test_agent_empty_invoke() -> None:
    agent, _ = agent_with([text("hello!")], messages=[{"role": "user", "content": [{"text": "hello!"}]}])
    result = agent()
    assert str(result) == "hello!\n"
    assert len(agent.messages) == 2


def test_agent_empty_list_invoke() -> None:
    agent, _ = agent_with([text("hello!")], messages=[{"role": "user", "content": [{"text": "hello!"}]}])
    result = agent([])
    assert str(result) == "hello!\n"
    assert len(agent.messages) == 2


def test_agent_with_assistant_role_message() -> None:
    agent, _ = agent_with([text("world!")])
    result = agent([{"role": "assistant", "content": [{"text": "hello..."}]}])
    assert str(result) == "world!\n"
    assert len(agent.messages) == 2


def test_agent_with_multiple_messages_on_invoke() -> None:
    agent, model = agent_with([text("world!")])
    result = agent([{"role": "user", "content": [{"text": "hello"}]}, {"role": "assistant", "content": [{"text": "..."}]}])
    assert str(result) == "world!\n"
    assert len(agent.messages) == 3
    assert model.calls[0]["messages"] == [
        {"role": "user", "content": [{"text": "hello"}]},
        {"role": "assistant", "content": [{"text": "..."}]},
    ]


def test_agent_with_content_block_list_prompt() -> None:
    agent, _ = agent_with([text("ok")])
    agent([{"text": "one"}, {"text": "two"}])
    assert plain(agent.messages[0]) == {"role": "user", "content": [{"text": "one"}, {"text": "two"}]}


@pytest.mark.parametrize(
    "prompt",
    [{"invalid": "input"}, [{"invalid": "input"}], [{"role": "user", "content": [{"text": "hello"}]}, {"text", "hello"}]],
    ids=["dict", "list_of_unknown_blocks", "message_and_content_block"],
)
def test_agent_with_invalid_input(prompt: Any) -> None:
    agent, _ = agent_with([text("world!")])
    with pytest.raises(ValueError, match=r"Input prompt must be of type: `str \| list\[Contentblock\] \| Messages \| None`."):
        agent(prompt)


def test_latest_message_tool_use_skips_model_invoke(tool_decorated: Any) -> None:
    messages = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "123", "name": "tool_decorated", "input": {"random_string": "Hello"}}}],
        }
    ]
    agent, model = agent_with([text("I see the tool result")], tools=[tool_decorated], messages=messages)

    agent()

    assert model.index == 1
    assert len(agent.messages) == 3
    assert agent.messages[1]["content"][0]["toolResult"]["content"][0]["text"] == "Hello"
    assert agent.messages[2]["content"][0]["text"] == "I see the tool result"


def test_agent__call__invalid_tool_name() -> None:
    @tool
    def shell(command: str) -> None:
        pass

    agent, _ = agent_with(
        [
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tool_use_id", "name": "invalid tool", "input": {}}}]},
            text("I invoked a tool!"),
        ],
        tools=[shell],
    )
    result = agent("Test")

    assert result.stop_reason == "end_turn"
    assert plain(agent.messages[-2]) == {
        "content": [
            {
                "toolResult": {
                    "content": [{"text": "Error: tool_name=<invalid tool> | invalid tool name pattern"}],
                    "status": "error",
                    "toolUseId": "tool_use_id",
                }
            }
        ],
        "role": "user",
    }
    assert plain(agent.messages[-1]) == {"content": [{"text": "I invoked a tool!"}], "role": "assistant"}


def test_agent__call__unknown_tool_name_is_an_error_result() -> None:
    agent, _ = agent_with([tool_call("missing", {}, "t9"), text("sorry")])
    agent("Test")
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert result["toolUseId"] == "t9"
    assert "missing" in result["content"][0]["text"]


def test_agent_tool_exception_becomes_error_result() -> None:
    @tool
    def explode(reason: str) -> str:
        raise RuntimeError(f"boom: {reason}")

    agent, model = agent_with([tool_call("explode", {"reason": "x"}, "t1"), text("handled")], tools=[explode])
    result = agent("go")

    assert str(result) == "handled\n"
    tool_result = agent.messages[2]["content"][0]["toolResult"]
    assert tool_result["status"] == "error"
    assert tool_result["content"] == [{"text": "Error: RuntimeError - boom: x"}]
    assert model.calls[1]["messages"][2]["content"][0]["toolResult"]["status"] == "error"


def test_agent_fixes_orphaned_tool_use_on_new_prompt() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "orphaned-123", "name": "tool_decorated", "input": {"random_string": "test"}}}],
        }
    ]
    agent, _ = agent_with([text("Fixed!")], messages=messages)

    agent("Continue conversation")

    assert len(agent.messages) >= 3
    assert plain(agent.messages[1]) == {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "orphaned-123", "status": "error", "content": [{"text": "Tool was interrupted."}]}}],
    }


def test_agent_fixes_multiple_orphaned_tool_uses() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "orphaned-123", "name": "tool_decorated", "input": {"random_string": "test1"}}},
                {"toolUse": {"toolUseId": "orphaned-456", "name": "tool_decorated", "input": {"random_string": "test2"}}},
            ],
        }
    ]
    agent, _ = agent_with([text("Fixed multiple!")], messages=messages)
    agent("Continue")

    assert plain(agent.messages[1]) == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "orphaned-123", "status": "error", "content": [{"text": "Tool was interrupted."}]}},
            {"toolResult": {"toolUseId": "orphaned-456", "status": "error", "content": [{"text": "Tool was interrupted."}]}},
        ],
    }


def test_agent_skips_fix_for_valid_conversation() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "valid-123", "name": "tool_decorated", "input": {"random_string": "test"}}}],
        },
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "valid-123", "status": "success", "content": [{"text": "result"}]}}],
        },
    ]
    agent, _ = agent_with([text("No fix needed!")], messages=messages)
    agent("Continue")
    assert len(agent.messages) == 4


def test_metrics_accumulate_usage() -> None:
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    agent, _ = agent_with([{**text("hi"), "usage": usage}, {**text("again"), "usage": usage}])
    first = agent("a")
    assert first.metrics.accumulated_usage["inputTokens"] == 10
    assert first.metrics.accumulated_usage["outputTokens"] == 5
    assert first.metrics.accumulated_usage["totalTokens"] == 15
    second = agent("b")
    assert second.metrics.accumulated_usage["totalTokens"] == 30


# --- direct tool calls during an invocation -----------------------------------------------


def test_agent_direct_tool_call_during_invocation_raises_exception() -> None:
    tool_calls: list[str] = []

    @tool
    def tool_to_invoke() -> str:
        tool_calls.append("tool_to_invoke")
        return "called"

    @tool(context=True)
    def agent_tool(tool_context: ToolContext) -> str:
        tool_context.agent.tool.tool_to_invoke(record_direct_tool_call=True)
        return "tool result"

    agent, _ = agent_with([tool_call("agent_tool", {}, "test-123"), text("Done")], tools=[agent_tool, tool_to_invoke])
    agent("Hi")

    assert tool_calls == []
    assert plain(agent.messages[-2]) == {
        "content": [
            {
                "toolResult": {
                    "content": [
                        {
                            "text": "Error: ConcurrencyException - Direct tool call cannot be made while the agent is "
                            "in the middle of an invocation. Set record_direct_tool_call=False to allow direct tool "
                            "calls during agent invocation."
                        }
                    ],
                    "status": "error",
                    "toolUseId": "test-123",
                }
            }
        ],
        "role": "user",
    }


def test_agent_direct_tool_call_during_invocation_succeeds_with_record_false() -> None:
    tool_calls: list[str] = []

    @tool
    def tool_to_invoke() -> str:
        tool_calls.append("tool_to_invoke")
        return "called"

    @tool(context=True)
    def agent_tool(tool_context: ToolContext) -> str:
        tool_context.agent.tool.tool_to_invoke(record_direct_tool_call=False)
        return "tool result"

    agent, _ = agent_with([tool_call("agent_tool", {}, "test-123"), text("Done")], tools=[agent_tool, tool_to_invoke])
    agent("Hi")

    assert tool_calls == ["tool_to_invoke"]
    assert plain(agent.messages[-2]) == {
        "content": [{"toolResult": {"content": [{"text": "tool result"}], "status": "success", "toolUseId": "test-123"}}],
        "role": "user",
    }


# --- add_hook -----------------------------------------------------------------------------


def test_agent_add_hook_registers_callback() -> None:
    agent, _ = agent_with([text("response")])
    callback = unittest.mock.Mock()
    agent.add_hook(callback, BeforeModelCallEvent)
    agent("test prompt")
    callback.assert_called_once()
    assert isinstance(callback.call_args[0][0], BeforeModelCallEvent)


async def test_agent_add_hook_works_with_async_callback() -> None:
    agent, _ = agent_with([text("response")])
    async_callback = unittest.mock.AsyncMock()
    agent.add_hook(async_callback, BeforeModelCallEvent)
    _ = [event async for event in agent.stream_async("test prompt")]
    async_callback.assert_called_once()
    assert isinstance(async_callback.call_args[0][0], BeforeModelCallEvent)


def test_agent_add_hook_infers_event_type_from_callback() -> None:
    agent, _ = agent_with([text("response")])
    invoked: list[Any] = []

    def typed_callback(event: BeforeModelCallEvent) -> None:
        invoked.append(event)

    agent.add_hook(typed_callback)
    agent("test prompt")
    assert len(invoked) == 1
    assert isinstance(invoked[0], BeforeModelCallEvent)
    assert invoked[0].agent is agent


def test_agent_add_hook_raises_error_when_no_type_hint() -> None:
    agent, _ = agent_with([text("response")])

    def untyped_callback(event):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(ValueError, match="cannot infer event type"):
        agent.add_hook(untyped_callback)


def test_agent_add_hook_before_invocation_once_per_call() -> None:
    agent, _ = agent_with([text("one"), text("two")])
    seen: list[Any] = []
    agent.add_hook(lambda event: seen.append(event), BeforeInvocationEvent)
    agent("a")
    agent("b")
    assert len(seen) == 2
    assert all(event.agent is agent for event in seen)


# --- as_tool ------------------------------------------------------------------------------


def test_as_tool_defaults_name_from_agent() -> None:
    agent = Agent(model=MockedModelProvider([]), name="researcher")
    assert agent.as_tool().tool_name == "researcher"


def test_as_tool_defaults_description_from_agent() -> None:
    agent = Agent(model=MockedModelProvider([]), name="researcher", description="Finds information")
    assert agent.as_tool().tool_spec["description"] == "Finds information"


def test_as_tool_custom_name() -> None:
    agent = Agent(model=MockedModelProvider([]), name="researcher")
    assert agent.as_tool(name="custom_name").tool_name == "custom_name"


def test_as_tool_custom_description() -> None:
    agent = Agent(model=MockedModelProvider([]), name="researcher", description="Original")
    assert agent.as_tool(description="Custom description").tool_spec["description"] == "Custom description"


def test_as_tool_defaults_description_when_agent_has_none() -> None:
    agent = Agent(model=MockedModelProvider([]), name="researcher")
    assert agent.as_tool().tool_spec["description"] == "Use the researcher agent as a tool by providing a natural language input"


def test_agent__init__tool_loader_dict(tool_module: str) -> None:
    agent = Agent(model=MockedModelProvider([]), tools=[{"name": "tool_module", "path": tool_module}])
    assert sorted(spec["name"] for spec in agent.tool_registry.get_all_tool_specs()) == ["tool_module"]


def test_module_tool_runs_in_a_turn(tool_module: str) -> None:
    agent, _ = agent_with([tool_call("tool_module", {}, "m1"), text("ok")], tools=[tool_module])
    agent("use the module tool")
    assert agent.messages[2]["content"][0]["toolResult"] == {"toolUseId": "m1", "status": "success", "content": [{"text": "from module"}]}


def test_agent_callback_handler_explicit_none_uses_null_handler() -> None:
    assert Agent(model=MockedModelProvider([]), callback_handler=None).callback_handler is null_callback_handler


def test_agent_with_none_callback_handler_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    agent, _ = agent_with([text("quiet")], callback_handler=None)
    agent("hi")
    assert capsys.readouterr().out == ""


def test_default_callback_handler_prints_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(model=MockedModelProvider([text("printed answer")]))
    agent("hi")
    assert "printed answer" in capsys.readouterr().out


async def test_agent_structured_output_async() -> None:
    user = User(name="Jane Doe", age=30, email="jane@doe.com")
    model = MockedModelProvider([], structured_outputs=[user])
    agent = Agent(model=model, system_prompt=SYSTEM, callback_handler=None)
    prompt = "Jane Doe is 30 years old and her email is jane@doe.com"

    assert await agent.structured_output_async(User, prompt) == user
    assert agent.messages == []
    assert model.structured_calls[0]["messages"] == [{"role": "user", "content": [{"text": prompt}]}]


def test_system_prompt_content_string() -> None:
    assert Agent(model=MockedModelProvider([]), system_prompt="hello").system_prompt_content == [{"text": "hello"}]


def test_system_prompt_content_structured() -> None:
    blocks = [{"text": "You are helpful"}, {"cachePoint": {"type": "default"}}]
    assert Agent(model=MockedModelProvider([]), system_prompt=blocks).system_prompt_content == blocks


def test_system_prompt_content_none() -> None:
    assert Agent(model=MockedModelProvider([]), system_prompt=None).system_prompt_content is None


def test_agent_empty_list_system_prompt() -> None:
    agent = Agent(model=MockedModelProvider([]), system_prompt=[])
    assert agent.system_prompt is None
    assert agent.system_prompt_content == []


def test_agent__call__handles_none_invocation_state() -> None:
    agent, _ = agent_with([text("test response")])
    result = agent("test", invocation_state=None)
    assert result.message["content"][0]["text"] == "test response"
    assert result.stop_reason == "end_turn"


def test_invocation_state_reaches_tools() -> None:
    seen: list[Any] = []

    @tool(context=True)
    def probe(tool_context: ToolContext) -> str:
        seen.append(tool_context.invocation_state.get("request_id"))
        return "ok"

    agent, _ = agent_with([tool_call("probe", {}, "p1"), text("done")], tools=[probe])
    agent("go", invocation_state={"request_id": "r-42"})
    assert seen == ["r-42"]
