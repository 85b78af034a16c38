"""MCP over stdio: MCPClient(lambda: stdio_client(...)) against a local MCP server; tools listed, called by the agent and directly."""

import sys
from pathlib import Path

from fake_model import FakeModel, calls, text
from mcp import StdioServerParameters, stdio_client
from show import dump, show_messages, show_result
from strands import Agent
from strands.tools.mcp import MCPClient

SERVER = str(Path(__file__).with_name("mcp_calculator_server.py"))

client = MCPClient(lambda: stdio_client(StdioServerParameters(command=sys.executable, args=[SERVER])))
with client:
    tools = client.list_tools_sync()
    dump("tool_names", sorted(t.tool_name for t in tools))
    dump("add.spec", next(t.tool_spec for t in tools if t.tool_name == "add"))
    model = FakeModel(
        [
            calls([("tu-1", "add", {"a": 2, "b": 40}), ("tu-2", "greet", {"name": "Ada"}), ("tu-3", "stats", {"values": [1, 2, 6]})]),
            text("42; greeted Ada; stats done."),
        ]
    )
    agent = Agent(model=model, tools=tools, callback_handler=None)
    result = agent("Add 2 and 40, greet Ada, stats of 1 2 6")
    show_result("result", result)
    show_messages("agent", agent)
    direct = client.call_tool_sync(tool_use_id="tu-9", name="add", arguments={"a": 1, "b": 1})
    dump("direct.status", direct["status"])
    dump("direct.content", direct["content"])
    via_agent = agent.tool.greet(name="Bob")
    dump("agent.tool.greet", via_agent["content"])
