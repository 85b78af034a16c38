"""The facade's ``MCPClient`` against a real FastMCP server over stdio: Strands' usage (context
manager, ``list_tools_sync``, ``call_tool_sync``, the client in ``tools=[...]``) with Strands'
specs and result mapping, compared with the real ``strands.tools.mcp.MCPClient``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from tether import Agent, ScriptedModel
from tether.errors import ConfigurationError, TetherError
from tether.strands.tools import to_tether_tools
from tether.strands.tools.mcp import MCPAgentTool, MCPClient, MCPClientInitializationError

from ._helpers import call, tool_results

SERVER = Path(__file__).parent / "servers" / "facade_mcp.py"
CALLS = [("greet", {"name": "Ada"}), ("add", {"a": 2, "b": 3}), ("stats", {"values": [1, 2.5]}), ("pixel", {}), ("broken", {})]


def transport() -> Any:
    return stdio_client(StdioServerParameters(command=sys.executable, args=[str(SERVER)]))


@pytest.fixture(scope="module")
def strands_side() -> tuple[list[Any], list[dict[str, Any]]]:
    """What the real Strands client lists and returns for CALLS."""
    from strands.tools.mcp import MCPClient as StrandsMCPClient

    with StrandsMCPClient(transport) as client:
        tools = client.list_tools_sync()
        specs = [tool.tool_spec for tool in tools]
        results = [dict(client.call_tool_sync(f"t{i}", name, args)) for i, (name, args) in enumerate(CALLS)]
    return specs, results


def test_list_and_call_sync_match_strands(strands_side: tuple[list[Any], list[dict[str, Any]]]) -> None:
    specs, expected = strands_side
    with MCPClient(transport) as client:
        tools = client.list_tools_sync()
        assert all(isinstance(tool, MCPAgentTool) for tool in tools)
        assert [tool.tool_spec for tool in tools] == specs
        results = [dict(client.call_tool_sync(f"t{i}", name, args)) for i, (name, args) in enumerate(CALLS)]
    assert results == expected
    greet = results[0]
    assert greet["content"] == [{"text": "Hello, Ada!"}]  # a str arrives as text, not {"json": {"result": ...}}
    assert results[2]["structuredContent"] == {"count": 2.0, "total": 3.5}
    assert results[4]["status"] == "error" and results[4]["isError"] is True
    # negotiated as Strands does (the SDK's discover probe), so the server stamps its results alike
    assert greet["metadata"] == {"io.modelcontextprotocol/serverInfo": {"name": "facade", "version": ""}}


def test_listed_tools_in_an_agent_and_the_client_in_tools(strands_side: tuple[list[Any], list[dict[str, Any]]]) -> None:
    _, expected = strands_side
    script = [call(name, args, f"t{i}") for i, (name, args) in enumerate(CALLS)] + ["done"]
    with MCPClient(transport) as client:
        agent = Agent(model=ScriptedModel(list(script)), tools=to_tether_tools(client.list_tools_sync()))
        agent("go")
    assert tool_results(agent.messages) == expected

    client = MCPClient(transport)
    model = ScriptedModel(list(script))
    model.record_requests = True
    agent = Agent(model=model, tools=to_tether_tools([client]))
    try:
        agent("go")
    finally:
        agent.close()
    assert tool_results(agent.messages) == expected
    from strands.tools.registry import ToolRegistry

    from tether.strands.tools import normalize_tool_spec

    sent = {spec["name"]: spec for spec in model.calls[0]["tool_specs"]}
    assert sent == {spec["name"]: normalize_tool_spec(spec) for spec in strands_side[0]}
    assert ToolRegistry  # the registry normalizes the same way (see test_tools)


def test_prefix_and_tool_filters() -> None:
    import re

    client = MCPClient(transport, prefix="srv", tool_filters={"allowed": [re.compile("^(greet|add|stats)$")], "rejected": ["stats"]})
    with client:
        assert sorted(t.tool_name for t in client.list_tools_sync()) == ["srv_add", "srv_greet"]
        assert client.call_tool_sync("x", "greet", {"name": "Bo"})["content"] == [{"text": "Hello, Bo!"}]
    agent = Agent(model=ScriptedModel([call("srv_add", {"a": 1, "b": 1}), "done"]), tools=to_tether_tools([client]))
    try:
        agent("go")
        assert sorted(agent.tool_names) == ["srv_add", "srv_greet"]
    finally:
        agent.close()
    assert tool_results(agent.messages)[0]["content"] == [{"text": "2"}]


def test_a_server_that_does_not_start_is_an_initialization_error(tmp_path: Path) -> None:
    def missing() -> Any:
        return stdio_client(StdioServerParameters(command=sys.executable, args=[str(tmp_path / "nope.py")]))

    client = MCPClient(missing, startup_timeout=10)
    with pytest.raises(MCPClientInitializationError) as info:
        client.start()
    assert isinstance(info.value, TetherError)
    client.stop()
    quiet = MCPClient(missing, startup_timeout=10, continue_on_error=True)
    agent = Agent(model=ScriptedModel(["fine"]), tools=to_tether_tools([quiet]))
    try:
        assert str(agent("go")).strip() == "fine" and agent.tool_names == []
    finally:
        agent.close()


def test_constructor_refusals() -> None:
    with pytest.raises(ConfigurationError, match="exactly one"):
        MCPClient()
    with pytest.raises(ConfigurationError, match="elicitation_callback"):
        MCPClient(transport, elicitation_callback=lambda *a: None)
    with pytest.raises(TypeError, match="bogus"):
        MCPClient(transport, bogus=1)
