"""Ported from strands-agents/sdk-python ``tests/strands/tools/test_decorator.py``: ``@tool``.

Upstream runs a decorated tool by calling ``tool.stream(tool_use, invocation_state)`` and
comparing against the private event classes of ``strands.types._events`` (ToolResultEvent,
ToolStreamEvent). Here a tool runs the way a Strands program runs it: a model turn calls it and
the test reads the ``toolResult`` the agent recorded (or ``agent.stream_async`` for streamed
values). The assertions on specs, results and errors are upstream's.

Excluded upstream tests (name — reason):
- test_tool_func_not_decorated — reads the private ``_tool_func`` attribute
- test_supports_hot_reload, test_get_display_properties — tool-registry/watcher internals (hot reload of a tools directory)
- test_stream, test_stream_with_agent — compare private ToolResultEvent objects from ``tool.stream`` (the same results
  are asserted through an agent turn in test_identity_runs_in_a_turn)
- test_stream_interrupt, test_stream_interrupt_resume — build a private ``_InterruptState`` on a MagicMock agent
- test_empty_tool_use_handling — calls ``tool.stream({}, {})`` with no tool use at all (cannot happen through the public API)
- test_tool_context_injection_disabled_missing_parameter, test_tool_context_injection_disabled_string_parameter — call
  ``tool.stream`` with a hand-made invocation_state; the public behaviour (context=False leaves tool_context a normal
  parameter) is ported as test_context_false_keeps_a_normal_parameter
- test_tool_method_detection_errors — asserts private descriptor internals of the decorator
- test_tool_result_event_carries_exception_* / test_tool_result_event_no_exception_on_success — read the private
  ``exception`` attribute of ToolResultEvent
- test_tool_decorator_annotated_pydantic_field_constraints, test_tool_decorator_annotated_field_with_inner_default,
  test_tool_decorator_annotated_mixed_styles —
  pydantic ``Field`` inside ``Annotated`` (a NotImplementedError edge of Strands' schema builder)
- test_tool_nullable_required_field_preserves_anyof, test_tool_nullable_optional_field_simplifies_anyof,
  test_tool_with_complex_anyof_schema — exact JSON-schema ``anyOf`` layouts produced by pydantic internals; the
  required/optional split is asserted in the ported tests
- test_detailed_validation_errors, test_tool_complex_validation_edge_cases — assert pydantic's exact error wording for
  many types; the missing-argument error is ported in test_tool_error_handling
"""

import asyncio
from collections.abc import AsyncGenerator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from tether.strands import Agent, ToolContext, tool

from .mocked_model_provider import MockedModelProvider, text, tool_call


def run_in_turn(decorated: Any, input: dict[str, Any], tool_use_id: str = "test-id", **agent_kwargs: Any) -> dict[str, Any]:
    """The toolResult the agent records when its model calls ``decorated`` with ``input``."""
    agent = Agent(
        model=MockedModelProvider([tool_call(decorated.tool_name, input, tool_use_id), text("done")]),
        tools=[decorated],
        callback_handler=None,
        **agent_kwargs,
    )
    agent("go")
    (block,) = agent.messages[2]["content"]
    return block["toolResult"]  # type: ignore[no-any-return]


@pytest.fixture(params=["sync", "async"])
def identity_tool(request: pytest.FixtureRequest) -> Any:
    if request.param == "sync":

        @tool
        def identity(a: int) -> int:
            return a

        return identity

    @tool
    async def identity(a: int) -> int:  # type: ignore[no-redef]
        return a

    return identity


def test__init__invalid_name() -> None:
    with pytest.raises(ValueError, match="Tool name must be a string"):

        @tool(name=0)  # type: ignore[arg-type]
        def identity(a: int) -> int:
            return a


def test_tool_name(identity_tool: Any) -> None:
    assert identity_tool.tool_name == "identity"


def test_tool_spec(identity_tool: Any) -> None:
    assert identity_tool.tool_spec == {
        "name": "identity",
        "description": "identity",
        "inputSchema": {
            "json": {
                "type": "object",
                "properties": {"a": {"description": "Parameter a", "type": "integer"}},
                "required": ["a"],
            }
        },
    }


def test_tool_type(identity_tool: Any) -> None:
    assert identity_tool.tool_type == "function"


def test_identity_runs_in_a_turn(identity_tool: Any) -> None:
    assert run_in_turn(identity_tool, {"a": 2}, "t1") == {"toolUseId": "t1", "status": "success", "content": [{"text": "2"}]}


def test_basic_tool_creation() -> None:
    @tool
    def test_tool(param1: str, param2: int) -> str:
        """Test tool function.

        Args:
            param1: First parameter
            param2: Second parameter
        """
        return f"Result: {param1} {param2}"

    spec = test_tool.tool_spec
    assert spec["name"] == "test_tool"
    assert spec["description"] == "Test tool function."
    schema = spec["inputSchema"]["json"]
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"param1", "param2"}
    assert schema["properties"]["param1"]["type"] == "string"
    assert schema["properties"]["param2"]["type"] == "integer"
    assert schema["properties"]["param1"]["description"] == "First parameter"
    assert schema["properties"]["param2"]["description"] == "Second parameter"

    assert run_in_turn(test_tool, {"param1": "hello", "param2": 42}) == {
        "toolUseId": "test-id",
        "status": "success",
        "content": [{"text": "Result: hello 42"}],
    }
    assert test_tool.__wrapped__ is not None
    assert test_tool.__doc__ is not None and test_tool.__doc__.startswith("Test tool function.")


def test_tool_with_custom_name_description() -> None:
    @tool(name="custom_name", description="Custom description")
    def test_tool(param: str) -> str:
        return f"Result: {param}"

    assert test_tool.tool_spec["name"] == "custom_name"
    assert test_tool.tool_spec["description"] == "Custom description"
    assert test_tool.tool_name == "custom_name"
    assert run_in_turn(test_tool, {"param": "x"})["content"] == [{"text": "Result: x"}]


def test_tool_with_optional_params() -> None:
    @tool
    def test_tool(required: str, optional: int | None = None) -> str:
        """Test with optional param.

        Args:
            required: Required parameter
            optional: Optional parameter
        """
        if optional is None:
            return f"Result: {required}"
        return f"Result: {required} {optional}"

    schema = test_tool.tool_spec["inputSchema"]["json"]
    assert "required" in schema["required"]
    assert "optional" not in schema["required"]
    assert run_in_turn(test_tool, {"required": "hello"})["content"] == [{"text": "Result: hello"}]
    assert run_in_turn(test_tool, {"required": "hello", "optional": 42})["content"] == [{"text": "Result: hello 42"}]


def test_docstring_description_extraction() -> None:
    @tool
    def tool_with_full_docstring(param1: str, param2: int) -> str:
        """This is the main description.

        This is more description text.

        Args:
            param1: First parameter
            param2: Second parameter

        Returns:
            A string result

        Raises:
            ValueError: If something goes wrong
        """
        return f"{param1} {param2}"

    assert (
        tool_with_full_docstring.tool_spec["description"]
        == """This is the main description.

This is more description text.

Returns:
    A string result

Raises:
    ValueError: If something goes wrong"""
    )


def test_docstring_args_variations() -> None:
    @tool
    def tool_with_args(param: str) -> str:
        """Main description.

        Args:
            param: Parameter description
        """
        return param

    @tool
    def tool_with_arguments(param: str) -> str:
        """Main description.

        Arguments:
            param: Parameter description
        """
        return param

    @tool
    def tool_with_parameters(param: str) -> str:
        """Main description.

        Parameters:
            param: Parameter description
        """
        return param

    @tool
    def tool_with_params(param: str) -> str:
        """Main description.

        Params:
            param: Parameter description
        """
        return param

    for decorated in [tool_with_args, tool_with_arguments, tool_with_parameters, tool_with_params]:
        assert decorated.tool_spec["description"] == "Main description."
        assert decorated.tool_spec["inputSchema"]["json"]["properties"]["param"]["description"] == "Parameter description"


def test_docstring_no_args_section() -> None:
    @tool
    def tool_no_args(param: str) -> str:
        """This is the complete description.

        Returns:
            A string result
        """
        return param

    assert tool_no_args.tool_spec["description"] == "This is the complete description.\n\nReturns:\n    A string result"


def test_docstring_only_args_section() -> None:
    @tool
    def tool_only_args(param: str) -> str:
        """Args:
        param: Parameter description
        """
        return param

    assert tool_only_args.tool_spec["description"] == "tool_only_args"


def test_docstring_empty() -> None:
    @tool
    def tool_empty_docstring(param: str) -> str:
        return param

    assert tool_empty_docstring.tool_spec["description"] == "tool_empty_docstring"
    assert tool_empty_docstring.tool_spec["inputSchema"]["json"]["properties"]["param"]["description"] == "Parameter param"


def test_docstring_preserves_other_sections() -> None:
    @tool
    def tool_multiple_sections(param: str) -> str:
        """Main description here.

        Args:
            param: This should be excluded

        Returns:
            This should be included

        Raises:
            ValueError: This should be included

        Examples:
            This should be included

        Note:
            This should be included
        """
        return param

    description = tool_multiple_sections.tool_spec["description"]
    for part in ("Main description here.", "Returns:", "This should be included", "Raises:", "Examples:", "Note:"):
        assert part in description
    assert "This should be excluded" not in description


def test_docstring_parsing() -> None:
    @tool
    def documented_tool(param1: str, param2: int = 10) -> str:
        """This is the summary line.

        This is a more detailed description that spans
        multiple lines and provides additional context.

        Args:
            param1: Description of first parameter with details
                   that continue on next line
            param2: Description of second parameter (default: 10)
                    with additional info

        Returns:
            A string with the result

        Raises:
            ValueError: If parameters are invalid
        """
        return f"{param1} {param2}"

    spec = documented_tool.tool_spec
    assert "This is the summary line" in spec["description"]
    assert "more detailed description" in spec["description"]
    schema = spec["inputSchema"]["json"]
    assert "Description of first parameter" in schema["properties"]["param1"]["description"]
    assert "Description of second parameter" in schema["properties"]["param2"]["description"]
    assert "param2" not in schema["required"]


def test_tool_error_handling() -> None:
    @tool
    def test_tool(required: str) -> str:
        """Test tool function."""
        if required == "error":
            raise ValueError("Test error")
        return f"Result: {required}"

    missing = run_in_turn(test_tool, {})
    assert missing["status"] == "error"
    assert missing["toolUseId"] == "test-id"
    assert "validation error for test_tooltool\nrequired\n" in missing["content"][0]["text"].lower()

    raised = run_in_turn(test_tool, {"required": "error"})
    assert raised["status"] == "error"
    assert "test error" in raised["content"][0]["text"].lower()


def test_type_handling() -> None:
    @tool
    def test_tool(str_param: str, int_param: int, float_param: float, bool_param: bool) -> str:
        """Test basic types."""
        return "Success"

    props = test_tool.tool_spec["inputSchema"]["json"]["properties"]
    assert props["str_param"]["type"] == "string"
    assert props["int_param"]["type"] == "integer"
    assert props["float_param"]["type"] == "number"
    assert props["bool_param"]["type"] == "boolean"


def test_agent_parameter_passing() -> None:
    """A parameter named ``agent`` receives the running agent (upstream: test_agent_parameter_passing)."""
    seen: list[Any] = []

    @tool
    def test_tool(param: str, agent: Any = None) -> str:
        """A tool that gets the agent."""
        seen.append(agent)
        return f"param: {param}, agent: {'present' if agent is not None else 'missing'}"

    assert "agent" not in test_tool.tool_spec["inputSchema"]["json"]["properties"]
    result = run_in_turn(test_tool, {"param": "test"})
    assert result["content"] == [{"text": "param: test, agent: present"}]
    assert isinstance(seen[0], Agent)
    assert test_tool("direct") == "param: direct, agent: missing"


def test_tool_decorator_with_different_return_values() -> None:
    @tool
    def dict_return_tool(param: str) -> dict:
        """Test tool that returns a dict in ToolResult format."""
        return {"status": "success", "content": [{"text": f"Result: {param}"}]}

    @tool
    def string_return_tool(param: str) -> str:
        """Test tool that returns a string."""
        return f"Result: {param}"

    @tool
    def none_return_tool(param: str) -> None:
        """Test tool that returns None."""

    assert run_in_turn(dict_return_tool, {"param": "test"}) == {
        "toolUseId": "test-id",
        "status": "success",
        "content": [{"text": "Result: test"}],
    }
    assert run_in_turn(string_return_tool, {"param": "test"})["content"] == [{"text": "Result: test"}]
    none_result = run_in_turn(none_return_tool, {"param": "test"})
    assert none_result["status"] == "success"
    assert none_result["content"] == [{"text": "null"}]


def test_class_method_handling() -> None:
    class TestClass:
        def __init__(self, prefix: str) -> None:
            self.prefix = prefix

        @tool
        def test_method(self, param: str) -> str:
            """Test method.

            Args:
                param: Test parameter
            """
            return f"{self.prefix}: {param}"

    instance = TestClass("Test")
    spec = instance.test_method.tool_spec
    assert spec["name"] == "test_method"
    assert spec["description"] == "Test method."
    assert "self" not in spec["inputSchema"]["json"]["properties"]
    assert run_in_turn(instance.test_method, {"param": "value"})["content"] == [{"text": "Test: value"}]
    assert instance.test_method("direct") == "Test: direct"


def test_tool_as_adhoc_field() -> None:
    def test_method(param: str) -> str:
        return f"param: {param}"

    named = tool(name="test_method_named")(test_method)
    assert named.tool_name == "test_method_named"
    assert run_in_turn(named, {"param": "example"})["content"] == [{"text": "param: example"}]


def test_default_parameter_handling() -> None:
    @tool
    def tool_with_defaults(required: str, optional: str = "default", number: int = 42) -> str:
        """Test tool with multiple default parameters.

        Args:
            required: Required parameter
            optional: Optional with default
            number: Number with default
        """
        return f"{required} {optional} {number}"

    schema = tool_with_defaults.tool_spec["inputSchema"]["json"]
    assert "required" in schema["required"]
    assert "optional" not in schema["required"]
    assert "number" not in schema["required"]
    assert run_in_turn(tool_with_defaults, {"required": "hello"})["content"] == [{"text": "hello default 42"}]
    assert run_in_turn(tool_with_defaults, {"required": "hello", "number": 100})["content"] == [{"text": "hello default 100"}]


def test_traditional_function_call() -> None:
    @tool
    def add_numbers(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: First number
            b: Second number
        """
        return a + b

    assert add_numbers(2, 3) == 5
    assert add_numbers(a=10, b=20) == 30
    assert run_in_turn(add_numbers, {"a": 2, "b": 3})["content"] == [{"text": "5"}]


async def test_traditional_async_function_call() -> None:
    @tool
    async def add_numbers(a: int, b: int) -> int:
        """Add two numbers."""
        await asyncio.sleep(0)
        return a + b

    assert await add_numbers(2, 3) == 5


def test_return_type_validation() -> None:
    @tool
    def int_return_tool(param: str) -> int:
        """Tool that returns an integer.

        Args:
            param: Input parameter
        """
        if param == "valid":
            return 42
        if param == "invalid_type":
            return "not an int"  # type: ignore[return-value]
        return None  # type: ignore[return-value]

    assert run_in_turn(int_return_tool, {"param": "valid"})["content"] == [{"text": "42"}]
    assert run_in_turn(int_return_tool, {"param": "invalid_type"})["content"] == [{"text": "not an int"}]
    assert run_in_turn(int_return_tool, {"param": "none"})["content"] == [{"text": "null"}]


def test_tool_with_no_parameters() -> None:
    @tool
    def no_params_tool() -> str:
        """A tool that doesn't need any parameters."""
        return "Success - no parameters needed"

    schema = no_params_tool.tool_spec["inputSchema"]["json"]
    assert schema["type"] == "object"
    assert "properties" in schema
    assert run_in_turn(no_params_tool, {})["content"] == [{"text": "Success - no parameters needed"}]
    assert no_params_tool() == "Success - no parameters needed"


def test_complex_parameter_types() -> None:
    @tool
    def complex_type_tool(config: dict[str, Any]) -> str:
        """Tool with complex parameter type.

        Args:
            config: A complex configuration object
        """
        return f"Got config with {len(config.keys())} keys"

    nested = {"name": "test", "settings": {"enabled": True, "threshold": 0.5}, "tags": ["important", "test"]}
    assert run_in_turn(complex_type_tool, {"config": nested})["content"] == [{"text": "Got config with 3 keys"}]
    assert complex_type_tool(nested) == "Got config with 3 keys"
    assert complex_type_tool.tool_spec["inputSchema"]["json"]["properties"]["config"]["type"] == "object"


def test_custom_tool_result_handling() -> None:
    @tool
    def custom_result_tool(param: str) -> dict[str, Any]:
        """Tool that returns a custom tool result dictionary.

        Args:
            param: Input parameter
        """
        return {"status": "success", "content": [{"text": f"First line: {param}"}, {"text": "Second line"}]}

    result = run_in_turn(custom_result_tool, {"param": "test"}, "custom-id")
    assert result["status"] == "success"
    assert result["toolUseId"] == "custom-id"
    assert result["content"] == [{"text": "First line: test"}, {"text": "Second line"}]


def test_custom_error_result_is_kept() -> None:
    @tool
    def failing(param: str) -> dict[str, Any]:
        """Returns an error result itself."""
        return {"status": "error", "content": [{"text": f"cannot {param}"}]}

    assert run_in_turn(failing, {"param": "do it"}) == {"toolUseId": "test-id", "status": "error", "content": [{"text": "cannot do it"}]}


def test_tool_result_json_serialization_dict() -> None:
    @tool
    def dict_tool() -> dict:
        """Returns a dict."""
        return {"key": "value", "number": 42}

    assert run_in_turn(dict_tool, {})["content"] == [{"text": '{"key": "value", "number": 42}'}]


def test_tool_result_json_serialization_list() -> None:
    @tool
    def list_tool() -> list:
        """Returns a list."""
        return [1, "two", {"three": 3}]

    assert run_in_turn(list_tool, {})["content"] == [{"text": '[1, "two", {"three": 3}]'}]


def test_tool_result_json_serialization_pydantic() -> None:
    class MyModel(BaseModel):
        name: str
        count: int

    @tool
    def pydantic_tool() -> MyModel:
        """Returns a Pydantic model."""
        return MyModel(name="test", count=5)

    assert run_in_turn(pydantic_tool, {})["content"] == [{"text": '{"name":"test","count":5}'}]


def test_tool_result_json_serialization_non_serializable() -> None:
    class CustomClass:
        def __str__(self) -> str:
            return "custom_str_repr"

    @tool
    def custom_tool() -> Any:
        """Returns a non-serializable object."""
        return CustomClass()

    assert run_in_turn(custom_tool, {})["content"] == [{"text": "custom_str_repr"}]


def test_tool_result_string_not_json_encoded() -> None:
    @tool
    def string_tool() -> str:
        """Returns a string."""
        return "hello world"

    assert run_in_turn(string_tool, {})["content"] == [{"text": "hello world"}]


def test_async_tool_runs_in_a_turn() -> None:
    @tool
    async def slow_echo(value: str) -> str:
        """Echoes after yielding to the loop."""
        await asyncio.sleep(0)
        return value.upper()

    assert run_in_turn(slow_echo, {"value": "abc"}) == {"toolUseId": "test-id", "status": "success", "content": [{"text": "ABC"}]}


def test_async_tool_exception_is_an_error_result() -> None:
    @tool
    async def broken() -> str:
        """Always fails."""
        raise ValueError("async failure")

    result = run_in_turn(broken, {})
    assert result["status"] == "error"
    assert "async failure" in result["content"][0]["text"]


# --- tool context -------------------------------------------------------------------------


def test_tool_context_injection_default() -> None:
    value_to_pass = asyncio.Queue()  # type: ignore[var-annotated]  # a value that is not serialisable

    @tool(context=True)
    def context_tool(message: str, agent: Agent, tool_context: ToolContext) -> dict:
        """Tool that uses ToolContext to access tool_use_id."""
        assert tool_context.invocation_state["test_reference"] is value_to_pass
        return {
            "status": "success",
            "content": [
                {"text": f"Tool '{tool_context.tool_use['name']}' (ID: {tool_context.tool_use['toolUseId']})"},
                {"text": f"injected agent '{agent.name}' processed: {message}"},
                {"text": f"context agent '{tool_context.agent.name}'"},
            ],
        }

    spec_properties = context_tool.tool_spec["inputSchema"]["json"]["properties"]
    assert set(spec_properties) == {"message"}

    agent = Agent(
        name="test_agent",
        model=MockedModelProvider([tool_call("context_tool", {"message": "some_message"}, "test-id"), text("done")]),
        tools=[context_tool],
        callback_handler=None,
    )
    agent("go", invocation_state={"test_reference": value_to_pass})

    assert agent.messages[2]["content"][0]["toolResult"] == {
        "status": "success",
        "content": [
            {"text": "Tool 'context_tool' (ID: test-id)"},
            {"text": "injected agent 'test_agent' processed: some_message"},
            {"text": "context agent 'test_agent'"},
        ],
        "toolUseId": "test-id",
    }


def test_tool_context_injection_custom_name() -> None:
    @tool(context="custom_context_name")
    def context_tool(message: str, agent: Agent, custom_context_name: ToolContext) -> dict:
        """Tool that uses ToolContext to access tool_use_id."""
        return {
            "status": "success",
            "content": [
                {"text": f"Tool '{custom_context_name.tool_use['name']}' (ID: {custom_context_name.tool_use['toolUseId']})"},
                {"text": f"injected agent '{agent.name}' processed: {message}"},
                {"text": f"context agent '{custom_context_name.agent.name}'"},
            ],
        }

    assert set(context_tool.tool_spec["inputSchema"]["json"]["properties"]) == {"message"}
    result = run_in_turn(context_tool, {"message": "some_message"}, name="test_agent")
    assert result["content"] == [
        {"text": "Tool 'context_tool' (ID: test-id)"},
        {"text": "injected agent 'test_agent' processed: some_message"},
        {"text": "context agent 'test_agent'"},
    ]


def test_context_false_keeps_a_normal_parameter() -> None:
    @tool(context=False)
    def context_tool(message: str, tool_context: str) -> str:
        """Tool that expects tool_context as a regular string parameter."""
        return f"{message}/{tool_context}"

    assert set(context_tool.tool_spec["inputSchema"]["json"]["required"]) == {"message", "tool_context"}
    ok = run_in_turn(context_tool, {"message": "m", "tool_context": "my_custom_context_string"})
    assert ok == {"toolUseId": "test-id", "status": "success", "content": [{"text": "m/my_custom_context_string"}]}
    missing = run_in_turn(context_tool, {"message": "m"})
    assert missing["status"] == "error"
    assert "tool_context" in missing["content"][0]["text"].lower()
    assert "validation" in missing["content"][0]["text"].lower()


def test_tool_context_sees_agent_state() -> None:
    @tool(context=True)
    def counter(tool_context: ToolContext) -> int:
        """Counts calls in the agent state."""
        count = (tool_context.agent.state.get("count") or 0) + 1
        tool_context.agent.state.set("count", count)
        return count

    agent = Agent(
        model=MockedModelProvider([tool_call("counter", {}, "a"), tool_call("counter", {}, "b"), text("twice")]),
        tools=[counter],
        callback_handler=None,
    )
    agent("count")
    assert agent.state.get("count") == 2
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "1"}]
    assert agent.messages[4]["content"][0]["toolResult"]["content"] == [{"text": "2"}]


def test_function_tool_metadata_validate_signature_default_context_name_mismatch() -> None:
    with pytest.raises(ValueError, match=r"param_name=<context> | ToolContext param must be named 'tool_context'"):

        @tool(context=True)
        def my_tool(context: ToolContext) -> None:
            pass


def test_function_tool_metadata_validate_signature_custom_context_name_mismatch() -> None:
    with pytest.raises(ValueError, match=r"param_name=<tool_context> | ToolContext param must be named 'my_context'"):

        @tool(context="my_context")
        def my_tool(tool_context: ToolContext) -> None:
            pass


def test_function_tool_metadata_validate_signature_missing_context_config() -> None:
    with pytest.raises(ValueError, match=r"@tool\(context\) must be set if passing in ToolContext param"):

        @tool
        def my_tool(tool_context: ToolContext) -> None:
            pass


# --- generators ---------------------------------------------------------------------------


async def stream_tool_events(decorated: Any) -> tuple[list[Any], dict[str, Any]]:
    """The values an async-generator tool streamed (``tool_stream_event``s) and its toolResult."""
    agent = Agent(
        model=MockedModelProvider([tool_call(decorated.tool_name, {}, "test-id-2"), text("done")]),
        tools=[decorated],
        callback_handler=None,
    )
    streamed = [event["tool_stream_event"]["data"] async for event in agent.stream_async("go") if "tool_stream_event" in event]
    return streamed, agent.messages[2]["content"][0]["toolResult"]


async def test_tool_async_generator() -> None:
    @tool
    async def async_generator() -> AsyncGenerator:
        """Streams a few values, then its result."""
        yield 0
        yield "Value 1"
        yield {"nested": "value"}
        yield "final result"

    streamed, result = await stream_tool_events(async_generator)
    assert streamed == [0, "Value 1", {"nested": "value"}, "final result"]
    assert result == {"status": "success", "content": [{"text": "final result"}], "toolUseId": "test-id-2"}


async def test_tool_async_generator_exceptions_result_in_error() -> None:
    @tool
    async def async_generator() -> AsyncGenerator:
        """Streams one value, then fails."""
        yield 13
        raise ValueError("It's an error!")

    streamed, result = await stream_tool_events(async_generator)
    assert streamed == [13]
    assert result == {"status": "error", "content": [{"text": "Error: It's an error!"}], "toolUseId": "test-id-2"}


async def test_tool_async_generator_yield_object_result() -> None:
    @tool
    async def async_generator() -> AsyncGenerator:
        """Streams a value, then a ToolResult-shaped dict as its result."""
        yield 13
        yield {"status": "success", "content": [{"text": "final result"}], "toolUseId": "test-id-2"}

    streamed, result = await stream_tool_events(async_generator)
    assert streamed == [13, {"status": "success", "content": [{"text": "final result"}], "toolUseId": "test-id-2"}]
    assert result == {"status": "success", "content": [{"text": "final result"}], "toolUseId": "test-id-2"}


# --- Annotated descriptions ---------------------------------------------------------------


def test_tool_decorator_annotated_string_description() -> None:
    @tool
    def annotated_tool(
        name: Annotated[str, "The user's full name"],
        age: Annotated[int, "The user's age in years"],
        city: str,
    ) -> str:
        """Tool with annotated parameters.

        Args:
            city: The user's city (from docstring)
        """
        return f"{name}, {age}, {city}"

    schema = annotated_tool.tool_spec["inputSchema"]["json"]
    assert schema["properties"]["name"]["description"] == "The user's full name"
    assert schema["properties"]["age"]["description"] == "The user's age in years"
    assert schema["properties"]["city"]["description"] == "The user's city (from docstring)"
    assert set(schema["required"]) == {"name", "age", "city"}
    assert run_in_turn(annotated_tool, {"name": "Ann", "age": 3, "city": "Lyon"})["content"] == [{"text": "Ann, 3, Lyon"}]


def test_tool_decorator_annotated_overrides_docstring() -> None:
    @tool
    def override_tool(param: Annotated[str, "Description from annotation"]) -> str:
        """Tool with both annotation and docstring.

        Args:
            param: Description from docstring (should be overridden)
        """
        return param

    assert override_tool.tool_spec["inputSchema"]["json"]["properties"]["param"]["description"] == "Description from annotation"


def test_tool_decorator_annotated_optional_type() -> None:
    @tool
    def optional_annotated_tool(
        required: Annotated[str, "Required parameter"], optional: Annotated[str | None, "Optional parameter"] = None
    ) -> str:
        """Tool with optional annotated parameter."""
        return f"{required}, {optional}"

    schema = optional_annotated_tool.tool_spec["inputSchema"]["json"]
    assert schema["properties"]["required"]["description"] == "Required parameter"
    assert schema["properties"]["optional"]["description"] == "Optional parameter"
    assert "required" in schema["required"]
    assert "optional" not in schema["required"]


def test_tool_decorator_annotated_complex_types() -> None:
    @tool
    def complex_annotated_tool(
        tags: Annotated[list[str], "List of tag strings"], config: Annotated[dict[str, Any], "Configuration dictionary"]
    ) -> str:
        """Tool with complex annotated types."""
        return f"Tags: {len(tags)}, Config: {len(config)}"

    schema = complex_annotated_tool.tool_spec["inputSchema"]["json"]
    assert schema["properties"]["tags"]["description"] == "List of tag strings"
    assert schema["properties"]["tags"]["type"] == "array"
    assert schema["properties"]["config"]["description"] == "Configuration dictionary"
    assert schema["properties"]["config"]["type"] == "object"
    assert run_in_turn(complex_annotated_tool, {"tags": ["a", "b"], "config": {"k": 1}})["content"] == [{"text": "Tags: 2, Config: 1"}]


def test_tool_decorator_annotated_no_description_fallback() -> None:
    @tool
    def no_desc_annotated_tool(param: Annotated[str, 42]) -> str:
        """Tool with Annotated but no string description.

        Args:
            param: Docstring description
        """
        return param

    assert no_desc_annotated_tool.tool_spec["inputSchema"]["json"]["properties"]["param"]["description"] == "Docstring description"


def test_tool_as_instance_field() -> None:
    class MyThing:
        def __init__(self) -> None:
            @tool
            def test_method(param: str) -> str:
                return f"param: {param}"

            self.field = test_method

    instance = MyThing()
    assert instance.field("example") == "param: example"
    assert run_in_turn(instance.field, {"param": "example"}) == {
        "content": [{"text": "param: example"}],
        "status": "success",
        "toolUseId": "test-id",
    }


def test_multiple_default_parameters() -> None:
    @tool
    def multi_default_tool(
        required_param: str,
        optional_str: str = "default_str",
        optional_int: int = 42,
        optional_bool: bool = True,
        optional_float: float = 3.14,
    ) -> str:
        """Tool with multiple default parameters of different types."""
        return f"{required_param}, {optional_str}, {optional_int}, {optional_bool}, {optional_float}"

    assert multi_default_tool.tool_spec["inputSchema"]["json"]["required"] == ["required_param"]
    assert run_in_turn(multi_default_tool, {"required_param": "hello"})["content"] == [{"text": "hello, default_str, 42, True, 3.14"}]
    partial = run_in_turn(multi_default_tool, {"required_param": "hello", "optional_int": 100, "optional_float": 2.718})
    assert partial["content"] == [{"text": "hello, default_str, 100, True, 2.718"}]


def test_tool_general_exception_handling() -> None:
    @tool
    def failing_tool(param: str) -> str:
        """Tool that raises different exception types.

        Args:
            param: Determines which exception to raise
        """
        if param == "value_error":
            raise ValueError("Value error message")
        if param == "type_error":
            raise TypeError("Type error message")
        if param == "attribute_error":
            raise AttributeError("Attribute error message")
        if param == "key_error":
            raise KeyError("key_name")
        return "Success"

    expected = {
        "value_error": ["Value error message"],
        "type_error": ["TypeError"],
        "attribute_error": ["AttributeError"],
        "key_error": ["KeyError", "key_name"],
    }
    for param, parts in expected.items():
        result = run_in_turn(failing_tool, {"param": param})
        assert result["status"] == "error"
        for part in parts:
            assert part in result["content"][0]["text"]
    assert run_in_turn(failing_tool, {"param": "fine"})["content"] == [{"text": "Success"}]


def test_tool_result_json_serialization_pydantic_non_serializable() -> None:
    class NonSerializable:
        def __repr__(self) -> str:
            return "NonSerializable()"

    class MyModel(BaseModel):
        model_config = {"arbitrary_types_allowed": True}
        data: NonSerializable

    @tool
    def pydantic_tool() -> MyModel:
        """Returns a Pydantic model with non-serializable field."""
        return MyModel(data=NonSerializable())

    assert run_in_turn(pydantic_tool, {})["content"] == [{"text": "data=NonSerializable()"}]


def test_tool_decorator_annotated_execution() -> None:
    @tool
    def execution_test(name: Annotated[str, "User name"], count: Annotated[int, "Number of times"] = 1) -> str:
        """Test execution with annotations."""
        return f"Hello {name} " * count

    assert execution_test("Alice", 2) == "Hello Alice Hello Alice "
    assert run_in_turn(execution_test, {"name": "Bob", "count": 3})["content"] == [{"text": "Hello Bob Hello Bob Hello Bob "}]


def test_tool_decorator_annotated_empty_string_description() -> None:
    @tool
    def empty_desc_tool(param: Annotated[str, ""]) -> str:
        """Tool with empty annotation description.

        Args:
            param: Docstring description
        """
        return param

    assert empty_desc_tool.tool_spec["inputSchema"]["json"]["properties"]["param"]["description"] == ""


def test_tool_decorator_annotated_validation_error() -> None:
    @tool
    def validation_tool(age: Annotated[int, "User age"]) -> str:
        """Tool for validation testing."""
        return f"Age: {age}"

    result = run_in_turn(validation_tool, {"age": "not an int"})
    assert result["status"] == "error"
    assert "age" in result["content"][0]["text"]
