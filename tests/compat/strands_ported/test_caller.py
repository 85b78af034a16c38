"""Ported from strands-agents/sdk-python ``tests/strands/tools/test_caller.py``: direct tool calls,
``agent.tool.NAME(**kwargs)``, and how Strands records them in the conversation
(``record_direct_tool_call``).

Upstream patches ``strands.tools._caller.random.randint`` to fix the generated tool-use id;
here the id is matched by its shape (``tooluse_<name>_<digits>``) and compared across the
returned result and the recorded messages.

Excluded upstream tests (name — reason):
- test_agent_tool's conversation-manager spy (apply_management called) — a Mock wrapping the conversation manager
- test_agent_tool_caller_interrupt, test_agent_tool_caller_interrupt_activated — interrupts from a direct call / the
  private _interrupt_state
- test_agent_collected_without_cyclic_gc, test_agent_with_tool_provider_cleaned_up_*,
  test_tool_caller_raises_reference_error_after_agent_collected — garbage-collection and weakref internals of the caller
  object
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tether.strands import Agent, ToolContext, tool

from .mocked_model_provider import MockedModelProvider, plain

TOOL_USE_ID = re.compile(r"^tooluse_test_tool_\d+$")


@pytest.fixture
def test_tool() -> Any:
    @tool(name="test_tool")
    def function(random_string: str) -> str:
        return random_string

    return function


@pytest.fixture
def agent(test_tool: Any) -> Agent:
    return Agent(model=MockedModelProvider([]), tools=[test_tool], callback_handler=None)


def test_agent_tool(agent: Agent) -> None:
    result = agent.tool.test_tool(random_string="abcdEfghI123")

    assert result["status"] == "success"
    assert result["content"] == [{"text": "abcdEfghI123"}]
    assert TOOL_USE_ID.match(result["toolUseId"])


async def test_agent_tool_in_async_context(agent: Agent) -> None:
    result = agent.tool.test_tool(random_string="abcdEfghI123")
    assert result["status"] == "success"
    assert result["content"] == [{"text": "abcdEfghI123"}]
    assert TOOL_USE_ID.match(result["toolUseId"])


def test_agent_tool_records_four_messages(agent: Agent) -> None:
    result = agent.tool.test_tool(random_string="abc")
    tool_use_id = result["toolUseId"]

    assert [plain(m) for m in agent.messages] == [
        {"role": "user", "content": [{"text": 'agent.tool.test_tool direct tool call.\nInput parameters: {"random_string": "abc"}\n'}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": tool_use_id, "name": "test_tool", "input": {"random_string": "abc"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": tool_use_id, "status": "success", "content": [{"text": "abc"}]}}]},
        {"role": "assistant", "content": [{"text": "agent.tool.test_tool was called."}]},
    ]


def test_agent_tool_user_message_override(agent: Agent) -> None:
    agent.tool.test_tool(random_string="abcdEfghI123", user_message_override="test override")

    assert plain(agent.messages[0]) == {
        "content": [
            {"text": "test override\n"},
            {"text": 'agent.tool.test_tool direct tool call.\nInput parameters: {"random_string": "abcdEfghI123"}\n'},
        ],
        "role": "user",
    }


def test_agent_tool_do_not_record_tool(agent: Agent) -> None:
    agent.record_direct_tool_call = False
    result = agent.tool.test_tool(random_string="abcdEfghI123", user_message_override="test override")
    assert result["content"] == [{"text": "abcdEfghI123"}]
    assert agent.messages == []


def test_agent_tool_do_not_record_tool_with_method_override(agent: Agent) -> None:
    agent.record_direct_tool_call = True
    agent.tool.test_tool(random_string="abcdEfghI123", user_message_override="test override", record_direct_tool_call=False)
    assert agent.messages == []


def test_record_direct_tool_call_constructor_argument(test_tool: Any) -> None:
    agent = Agent(model=MockedModelProvider([]), tools=[test_tool], record_direct_tool_call=False, callback_handler=None)
    assert agent.record_direct_tool_call is False
    agent.tool.test_tool(random_string="x")
    assert agent.messages == []
    assert Agent(model=MockedModelProvider([]), callback_handler=None).record_direct_tool_call is True


def test_agent_tool_tool_does_not_exist(agent: Agent) -> None:
    with pytest.raises(AttributeError):
        agent.tool.does_not_exist()


def test_agent_tool_no_parameter_conflict() -> None:
    @tool(name="system_prompter")
    def function(system_prompt: str) -> str:
        return system_prompt

    agent = Agent(model=MockedModelProvider([]), tools=[function], system_prompt="agent prompt", callback_handler=None)
    result = agent.tool.system_prompter(system_prompt="tool prompt")

    assert result["status"] == "success"
    assert result["content"] == [{"text": "tool prompt"}]
    assert re.match(r"^tooluse_system_prompter_\d+$", result["toolUseId"])
    assert agent.system_prompt == "agent prompt"


def test_agent_tool_with_name_normalization() -> None:
    @tool(name="system-prompter")
    def function(system_prompt: str) -> str:
        return system_prompt

    agent = Agent(model=MockedModelProvider([]), tools=[function], callback_handler=None)
    result = agent.tool.system_prompter(system_prompt="tool prompt")

    assert result["status"] == "success"
    assert result["content"] == [{"text": "tool prompt"}]
    assert re.match(r"^tooluse_system_prompter_\d+$", result["toolUseId"])


def test_agent_tool_with_no_normalized_match(agent: Agent) -> None:
    with pytest.raises(AttributeError) as err:
        agent.tool.system_prompter_1(system_prompt="tool prompt")
    assert str(err.value) == "Tool 'system_prompter_1' not found"


def test_agent_tool_non_serializable_parameter_filtering(agent: Agent) -> None:
    another_agent = Agent(model=MockedModelProvider([]), callback_handler=None)

    result = agent.tool.test_tool(
        random_string="test_value",
        non_serializable_agent=another_agent,
        user_message_override="Testing non-serializable parameter filtering",
    )

    assert result["status"] == "success"
    assert result["content"] == [{"text": "test_value"}]
    user_message = agent.messages[0]
    assert user_message["role"] == "user"
    assert len(user_message["content"]) == 2
    assert user_message["content"][0]["text"] == "Testing non-serializable parameter filtering\n"
    tool_call_text = user_message["content"][1]["text"]
    assert "agent.tool.test_tool direct tool call." in tool_call_text
    assert '"random_string": "test_value"' in tool_call_text
    assert "non_serializable_agent" not in tool_call_text


def test_agent_tool_no_non_serializable_parameters(agent: Agent) -> None:
    agent.tool.test_tool(random_string="normal_call", user_message_override="Normal tool call test")
    tool_call_text = agent.messages[0]["content"][1]["text"]
    assert "agent.tool.test_tool direct tool call." in tool_call_text
    assert '"random_string": "normal_call"' in tool_call_text
    assert "<<non-serializable:" not in tool_call_text


def test_agent_tool_record_direct_tool_call_disabled_with_non_serializable(agent: Agent) -> None:
    agent.record_direct_tool_call = False
    result = agent.tool.test_tool(
        random_string="no_recording",
        non_serializable_agent=Agent(model=MockedModelProvider([]), callback_handler=None),
        user_message_override="This shouldn't be recorded",
    )
    assert result["content"] == [{"text": "no_recording"}]
    assert len(agent.messages) == 0


def test_agent_tool_call_parameter_filtering_integration() -> None:
    @tool
    def test_tool(action: str) -> str:
        """Test tool with single parameter."""
        return action

    agent = Agent(model=MockedModelProvider([]), tools=[test_tool], callback_handler=None)
    result = agent.tool.test_tool(action="test_value", agent=agent, extra_param="filtered")

    assert result["status"] == "success"
    assert result["content"] == [{"text": "test_value"}]
    tool_call_text = agent.messages[0]["content"][0]["text"]
    assert '"action": "test_value"' in tool_call_text
    assert '"agent"' not in tool_call_text
    assert '"extra_param"' not in tool_call_text
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"action": "test_value"}


def test_direct_call_of_a_failing_tool_returns_an_error_result() -> None:
    @tool
    def test_tool(value: int) -> int:
        """Fails on purpose."""
        raise ValueError(f"bad value {value}")

    agent = Agent(model=MockedModelProvider([]), tools=[test_tool], callback_handler=None)
    result = agent.tool.test_tool(value=3)

    assert result["status"] == "error"
    assert "bad value 3" in result["content"][0]["text"]
    assert agent.messages[2]["content"][0]["toolResult"]["status"] == "error"


def test_direct_call_reaches_tool_context_and_state() -> None:
    @tool(context=True)
    def test_tool(key: str, tool_context: ToolContext) -> str:
        """Writes the agent state."""
        tool_context.agent.state.set(key, tool_context.tool_use["toolUseId"])
        return key

    agent = Agent(model=MockedModelProvider([]), tools=[test_tool], callback_handler=None)
    result = agent.tool.test_tool(key="seen")

    assert agent.state.get("seen") == result["toolUseId"]
    assert TOOL_USE_ID.match(result["toolUseId"])


async def test_direct_call_of_an_async_tool() -> None:
    @tool
    async def test_tool(value: str) -> str:
        """An async tool."""
        return value[::-1]

    agent = Agent(model=MockedModelProvider([]), tools=[test_tool], callback_handler=None)
    assert agent.tool.test_tool(value="abc")["content"] == [{"text": "cba"}]


def test_direct_calls_accumulate_in_history(agent: Agent) -> None:
    first = agent.tool.test_tool(random_string="one")
    second = agent.tool.test_tool(random_string="two")

    assert len(agent.messages) == 8
    assert first["toolUseId"] != second["toolUseId"]
    assert agent.messages[6]["content"][0]["toolResult"]["content"] == [{"text": "two"}]
