"""`tether.mcp.limits`: a tool result over ``max_result_bytes`` is an error result for the model,
over stdio and streamable HTTP, and over HTTP it is not read past the cap."""

from __future__ import annotations

import base64
import tracemalloc
from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest

from tether import Agent, ScriptedModel
from tether.errors import ConfigurationError
from tether.mcp import DEFAULT_MAX_RESULT_BYTES, MCPServerHTTP, MCPServerStdio
from tether.mcp.http_limit import EVENT_LIMIT
from tether.mcp.limits import result_size
from tether.mcp.source import MCPSource
from tether.models import tool_call

from .fixtures import CallLog


def result_block(agent: Agent, index: int) -> Any:
    block: Any = agent.messages[index]["content"][0]
    return block["toolResult"]


@pytest.fixture(params=["stdio", "http_server", "http_json_server"])
def make_source(request: pytest.FixtureRequest, stdio_server: Callable[..., MCPServerStdio]) -> Callable[..., MCPSource]:
    """The toolbox over stdio, over HTTP answering with event streams, and with JSON bodies (an
    HTTP server is started only for its case)."""
    if request.param == "stdio":
        return stdio_server
    http: Callable[..., MCPSource] = request.getfixturevalue(request.param)
    return http


async def test_a_result_over_the_cap_is_an_error_result_naming_the_tool_and_the_cap(
    make_source: Callable[..., MCPSource], call_log: CallLog
) -> None:
    script = [tool_call("blob", {"size": 300_000}), tool_call("blob", {"size": 50_000}), tool_call("echo", {"text": "still here"}), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[make_source(name="big", max_result_bytes=100_000)])
    async with agent:
        result = await agent.invoke_async("go")
    assert result.text == "done"
    over = result_block(agent, 2)
    assert over["status"] == "error" and len(over["content"]) == 1
    text = over["content"][0]["text"]
    assert "MCP server 'big'" in text and "tool 'blob'" in text and "max_result_bytes=100000" in text, text
    assert "x" * 100 not in text  # none of the payload reaches the model
    assert result_block(agent, 4) == {"toolUseId": "tooluse_3_0", "status": "success", "content": [{"text": "x" * 50_000}]}
    assert result_block(agent, 6)["content"] == [{"text": "still here"}]  # the session survived the dropped result
    assert call_log.tools() == ["blob", "blob", "echo"]


@pytest.mark.parametrize("transport", ["http_server", "http_json_server"])
async def test_http_stops_reading_a_result_at_the_cap(request: pytest.FixtureRequest, transport: str) -> None:
    """64 MB sent, a 1 MB cap: the client holds a few MB at most. (Without the cap, a JSON body
    is read whole, several times over: see the next test.)"""
    size, cap = 64 * 1024 * 1024, 1024 * 1024
    text, peak = await call_blob(request.getfixturevalue(transport)(max_result_bytes=cap), size)
    assert "max_result_bytes=1048576" in text and "the rest was not read" in text, text
    assert peak < 16 * 1024 * 1024, f"peak {peak:,} bytes for a {cap:,}-byte cap"


async def test_without_the_cap_a_json_body_is_read_whole(http_json_server: Callable[..., MCPServerHTTP]) -> None:
    """What the bound above prevents (so the peak measured there can tell)."""
    size = 16 * 1024 * 1024
    text, peak = await call_blob(http_json_server(max_result_bytes=None), size)
    assert text == "x" * size
    assert peak > size


async def test_an_event_over_the_sdk_limit_is_named_for_the_model(http_server: Callable[..., MCPServerHTTP]) -> None:
    """The SDK's HTTP client refuses a server-sent event over 1 MiB (and reports only that the
    stream ended): under the default cap, the model is told why."""
    assert EVENT_LIMIT == 1024 * 1024
    text, _ = await call_blob(http_server(name="sse"), 3 * EVENT_LIMIT)
    assert "MCP server 'sse'" in text and "tool 'blob'" in text and f"limited to {EVENT_LIMIT} bytes" in text, text


async def call_blob(server: MCPSource, size: int) -> tuple[str, int]:
    """The text of ``blob(size)``'s result and the peak of Python memory during the call."""
    agent = Agent(model=ScriptedModel([tool_call("blob", {"size": size}), "done"]), tools=[server])
    async with agent:
        await agent.start()  # connected and listed before measuring
        tracemalloc.start()
        try:
            await agent.invoke_async("go")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    text: str = result_block(agent, 2)["content"][0]["text"]
    return text, peak


async def test_no_cap_with_none(stdio_server: Callable[..., MCPServerStdio]) -> None:
    size = DEFAULT_MAX_RESULT_BYTES + 1000
    agent = Agent(model=ScriptedModel([tool_call("blob", {"size": size}), "done"]), tools=[stdio_server(max_result_bytes=None)])
    async with agent:
        await agent.invoke_async("go")
    assert result_block(agent, 2)["content"] == [{"text": "x" * size}]


def test_the_cap_has_a_default_and_bad_values_are_refused() -> None:
    assert MCPServerStdio("python").max_result_bytes == DEFAULT_MAX_RESULT_BYTES == 10 * 1024 * 1024
    assert MCPServerHTTP("http://127.0.0.1:1/mcp", max_result_bytes=5).max_result_bytes == 5
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ConfigurationError, match="max_result_bytes"):
            MCPServerStdio("python", max_result_bytes=bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="max_result_bytes"):
            MCPServerHTTP("http://127.0.0.1:1/mcp", max_result_bytes=bad)  # type: ignore[arg-type]


def test_result_size_counts_every_kind_of_content() -> None:
    data = base64.b64encode(b"\x00" * 300).decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(text="héllo"),  # 6 bytes in UTF-8
            types.ImageContent(data=data, mime_type="image/png"),
            types.EmbeddedResource(resource=types.TextResourceContents(uri="file:///a", text="abc")),
            types.EmbeddedResource(resource=types.BlobResourceContents(uri="file:///b", blob=data)),
        ],
        structured_content={"rows": ["ab", 12]},
    )
    assert result_size(result) == 6 + len(data) + 3 + len(data) + len('{"rows":["ab",12]}')
    assert result_size(types.CallToolResult(content=[])) == 0
