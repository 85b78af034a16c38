"""Class-based tools and the result conversions every tool shares."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

import pydantic
import pytest

from tether import Agent, ScriptedModel, Tool, ToolContext, ToolError
from tether.tools.base import error_result, to_result, validation_message
from tether.types import ToolUse

from ..conftest import call


class SearchInput(pydantic.BaseModel):
    query: str
    limit: int = 3


class Search(Tool):
    name = "search"
    description = "Search the index."
    input_model = SearchInput

    def run(self, input: dict[str, Any], context: ToolContext) -> list[str]:
        return [f"{input['query']}-{i}" for i in range(input["limit"])]


class Echo(Tool):
    name = "echo"
    input_schema: ClassVar[dict[str, Any] | None] = {"type": "object", "properties": {"text": {"type": "string"}}}

    async def run(self, input: dict[str, Any], context: ToolContext) -> str:
        await asyncio.sleep(0)
        return f"{input['text']} ({context.tool_use['toolUseId']})"


class Nameless(Tool):
    pass


def use(name: str, input: Any, tool_use_id: str = "t1") -> ToolUse:
    return {"toolUseId": tool_use_id, "name": name, "input": input}


async def invoke(t: Tool, input: Any) -> Any:
    u = use(t.tool_name, input)
    return await t.invoke(u, ToolContext(tool_use=u, agent=Agent()))


def test_spec_from_input_model_and_schema() -> None:
    spec = Search().spec
    assert spec["name"] == "search" and spec["description"] == "Search the index."
    assert spec["inputSchema"]["json"]["properties"]["limit"]["default"] == 3
    echo = Echo().spec
    assert echo["description"] == "echo"
    assert echo["inputSchema"]["json"]["properties"] == {"text": {"type": "string"}}

    class Empty(Tool):
        name = "empty"

    assert Empty().spec["inputSchema"]["json"] == {"type": "object", "properties": {}}


def test_a_tool_without_a_name_is_refused() -> None:
    with pytest.raises(ToolError, match="Nameless has no name"):
        _ = Nameless().spec


async def test_sync_and_async_runs() -> None:
    assert (await invoke(Search(), {"query": "q", "limit": 2}))["content"] == [{"json": ["q-0", "q-1"]}]
    assert (await invoke(Echo(), {"text": "hi"}))["content"] == [{"text": "hi (t1)"}]


async def test_input_model_validation_becomes_an_error_result() -> None:
    result = await invoke(Search(), {"limit": "many"})
    assert result["status"] == "error"
    text = result["content"][0]["text"]
    assert "Invalid input for tool 'search'" in text and "query: Field required" in text and "limit:" in text


async def test_schema_tools_require_an_object() -> None:
    result = await invoke(Echo(), "just text")
    assert result["status"] == "error" and "must be a JSON object" in result["content"][0]["text"]


async def test_unimplemented_run_is_an_error_result() -> None:
    class Lazy(Tool):
        name = "lazy"

    result = await invoke(Lazy(), {})
    assert result["status"] == "error" and "Lazy.run is not implemented" in result["content"][0]["text"]


async def test_exceptions_become_error_results() -> None:
    class Boom(Tool):
        name = "boom"

        def run(self, input: dict[str, Any], context: ToolContext) -> Any:
            raise LookupError("missing thing")

    result = await invoke(Boom(), {})
    assert result == {"toolUseId": "t1", "status": "error", "content": [{"text": "Error: LookupError: missing thing"}]}


async def test_run_in_thread_flag_for_sync_class_tools() -> None:
    threads: list[threading.Thread] = []

    class Where(Tool):
        name = "where"

        def run(self, input: dict[str, Any], context: ToolContext) -> str:
            threads.append(threading.current_thread())
            return ""

    await invoke(Where(), {})
    inline = Where()
    inline.run_in_thread = False
    await invoke(inline, {})
    assert threads[0] is not threading.current_thread()
    assert threads[1] is threading.current_thread()


def test_class_tools_in_an_agent() -> None:
    agent = Agent(model=ScriptedModel([call("search", {"query": "x", "limit": 1}), "done"]), tools=[Search, Echo()])
    assert agent.tool_names == ["search", "echo"]
    agent("go")
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"json": ["x-0"]}]


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("text", [{"text": "text"}]),
        (3, [{"json": 3}]),
        (2.5, [{"json": 2.5}]),
        (True, [{"json": True}]),
        (None, [{"json": None}]),
        ([1, "a"], [{"json": [1, "a"]}]),
        ({"k": [1]}, [{"json": {"k": [1]}}]),
        (SearchInput(query="q"), [{"json": {"query": "q", "limit": 3}}]),
        ({"k": object}, [{"text": "{'k': <class 'object'>}"}]),
        (b"raw", [{"text": "b'raw'"}]),
    ],
)
def test_to_result(value: Any, content: list[Any]) -> None:
    assert to_result("id", value) == {"toolUseId": "id", "status": "success", "content": content}


def test_to_result_passes_tool_results_through_and_copies() -> None:
    inner = [{"text": "done"}, {"json": {"n": [1]}}]
    result = to_result("id", {"status": "error", "content": inner})
    assert result == {"toolUseId": "id", "status": "error", "content": inner}
    inner[1]["json"]["n"].append(2)
    assert result["content"][1] == {"json": {"n": [1]}}
    malformed = to_result("id", {"status": "weird", "content": []})
    assert malformed["status"] == "error" and "malformed" in malformed["content"][0]["text"]


def test_error_result_and_validation_message() -> None:
    assert error_result("x", "bad") == {"toolUseId": "x", "status": "error", "content": [{"text": "bad"}]}
    try:
        SearchInput.model_validate({"limit": "x"})
    except pydantic.ValidationError as exc:
        message = validation_message(exc)
    assert message == "query: Field required; limit: Input should be a valid integer, unable to parse string as an integer"
