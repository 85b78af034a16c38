"""`tether.mcp` against a real MCP server (the `mcp` SDK's Server), over stdio and streamable HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError, TetherError, ToolError, ToolNameClashError
from tether.mcp import IDEMPOTENCY_META_KEY, MCPError, MCPServerHTTP, MCPServerStdio
from tether.models import tool_call

from .fixtures import CallLog, alive
from .servers.toolbox import PNG


def result_block(agent: Agent, index: int) -> Any:
    block: Any = agent.messages[index]["content"][0]
    return block["toolResult"]


# -- listed and called --------------------------------------------------------------------


async def test_stdio_tools_are_listed_with_their_schemas_and_called(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    server = stdio_server()
    agent = Agent(model=ScriptedModel([tool_call("add", {"a": 2, "b": 40}), "42"]), tools=[server])
    async with agent:
        assert agent.tool_names == ["add", "echo", "stats", "pixel", "fail", "slow", "crash", "hang", "blob"]
        spec: Any = agent.tool_registry.get("add").spec  # type: ignore[union-attr]
        assert spec["inputSchema"]["json"]["required"] == ["a", "b"]  # the schema is passed through
        assert spec["description"] == "Add two integers."
        result = await agent.invoke_async("2+40?")
        assert result.text == "42"
        assert result_block(agent, 2) == {"toolUseId": "tooluse_1_0", "status": "success", "content": [{"text": "42"}]}
        pid = call_log.entries()[0]["pid"]
        assert alive(pid)
    assert call_log.tools() == ["add"]
    assert not alive(pid)  # closed with the agent


async def test_http_tools_are_listed_and_called(http_server: Callable[..., MCPServerHTTP], call_log: CallLog) -> None:
    agent = Agent(model=ScriptedModel([tool_call("echo", {"text": "over http"}), "ok"]), tools=[http_server(name="remote")])
    async with agent:
        assert "echo" in agent.tool_names
        await agent.invoke_async("echo")
    assert result_block(agent, 2)["content"] == [{"text": "over http"}]
    assert call_log.tools() == ["echo"]


async def test_an_http_source_with_headers_connects_and_lists(http_url: str) -> None:
    server = MCPServerHTTP(http_url, headers={"Authorization": "Bearer t0ken"}, startup_timeout=20)
    assert server.headers == {"Authorization": "Bearer t0ken"} and server.source_name.startswith("127.0.0.1:")
    await server.start()
    try:
        assert {spec["name"] for spec in await server.list_tools()} >= {"add", "echo"}
    finally:
        await server.close()


async def test_one_process_serves_all_tools_of_a_source(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    script = [tool_call("add", {"a": 1, "b": 2}), tool_call("echo", {"text": "x"}), tool_call("stats", {"values": [1]}), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server()])
    async with agent:
        await agent.invoke_async("go")
    assert call_log.tools() == ["add", "echo", "stats"] and len(call_log.pids()) == 1


# -- options ------------------------------------------------------------------------------


async def test_prefix_include_and_exclude(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    server = stdio_server(prefix="box", include=["add", "echo", "stats"], exclude=["stats"])
    agent = Agent(model=ScriptedModel([tool_call("box_add", {"a": 3, "b": 4}), "7"]), tools=[server])
    async with agent:
        assert agent.tool_names == ["box_add", "box_echo"]
        await agent.invoke_async("3+4")
    assert result_block(agent, 2)["content"] == [{"text": "7"}]
    assert call_log.tools() == ["add"]  # the server sees its own name


async def test_include_naming_a_missing_tool_is_refused(stdio_server: Callable[..., MCPServerStdio]) -> None:
    agent = Agent(model=ScriptedModel(["x"]), tools=[stdio_server(include=["add", "nope"])])
    with pytest.raises(MCPError, match=r"include= names tools the server does not have: \['nope'\]"):
        await agent.start()
    assert agent.tool_names == []


def test_bad_options_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="command="):
        MCPServerStdio("")
    with pytest.raises(ConfigurationError, match="args="):
        MCPServerStdio("python", "server.py")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="include="):
        MCPServerStdio("python", ["s.py"], include="add")
    with pytest.raises(ConfigurationError, match="call_timeout="):
        MCPServerStdio("python", ["s.py"], call_timeout=0)
    with pytest.raises(ConfigurationError, match="url="):
        MCPServerHTTP("ftp://example.invalid/mcp")
    with pytest.raises(ConfigurationError, match="prefix="):
        MCPServerHTTP("http://127.0.0.1:1/mcp", prefix="")


async def test_a_name_collision_with_another_tool_is_a_configuration_error(stdio_server: Callable[..., MCPServerStdio]) -> None:
    def echo(text: str) -> str:
        """A local echo."""
        return text

    server = stdio_server(name="toolbox")
    agent = Agent(model=ScriptedModel(["x"]), tools=[echo, server])
    with pytest.raises(ConfigurationError, match=r"two tools are named 'echo'.*tool source 'toolbox'.*prefix=") as caught:
        await agent.start()
    assert isinstance(caught.value, ToolNameClashError) and isinstance(caught.value, ToolError)
    assert agent.tool_names == ["echo"]
    # and two servers with the same tools: a prefix separates them
    agent = Agent(model=ScriptedModel(["x"]), tools=[stdio_server(prefix="a"), stdio_server(prefix="b")])
    async with agent:
        assert "a_add" in agent.tool_names and "b_add" in agent.tool_names


async def test_idempotency_comes_from_annotations_or_the_option(stdio_server: Callable[..., MCPServerStdio]) -> None:
    hinted, listed, every, none = (
        stdio_server(),
        stdio_server(idempotent=["echo"]),
        stdio_server(idempotent=True),
        stdio_server(idempotent=False),
    )
    for server in (hinted, listed, every, none):
        await server.start()
        await server.list_tools()
    try:
        assert hinted.idempotent("add") and not hinted.idempotent("echo")  # add carries idempotentHint
        assert listed.idempotent("echo") and listed.idempotent("add") and not listed.idempotent("stats")
        assert every.idempotent("stats") and not none.idempotent("add")
    finally:
        for server in (hinted, listed, every, none):
            await server.close()


# -- results ------------------------------------------------------------------------------


async def test_results_map_text_json_images_and_errors(stdio_server: Callable[..., MCPServerStdio], tmp_path: Path) -> None:
    script = [tool_call("stats", {"values": [1, 2, 3.5]}), tool_call("pixel"), tool_call("fail"), "seen"]
    store = SQLiteStore(tmp_path / "runs.db")
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server()], store=store)
    async with agent:
        result = await agent.invoke_async("go", run_id="results-1")
    assert result.text == "seen"
    assert result_block(agent, 2)["content"] == [{"json": {"count": 3, "total": 6.5}}]  # structuredContent
    image = result_block(agent, 4)
    assert image["status"] == "success" and image["content"][0] == {"text": "a pixel"}
    assert image["content"][1] == {"image": {"format": "png", "source": {"bytes": PNG}}}
    failed = result_block(agent, 6)
    assert failed == {"toolUseId": "tooluse_5_0", "status": "error", "content": [{"text": "the widget is broken"}]}
    # stored as JSON (the image bytes as Tether's base64 envelope) and read back as bytes
    import base64
    import sqlite3

    raw = b"".join(
        bytes(row[0]) if isinstance(row[0], bytes) else str(row[0]).encode()
        for row in sqlite3.connect(tmp_path / "runs.db").execute("SELECT body FROM messages")
    )
    assert base64.b64encode(PNG) in raw
    loaded = store.load("results-1")
    assert loaded is not None
    restored: Any = loaded.messages[4]["content"][0]["toolResult"]["content"][1]
    assert restored["image"]["source"]["bytes"] == PNG


async def test_the_idempotency_key_reaches_the_server_in_meta(
    stdio_server: Callable[..., MCPServerStdio], call_log: CallLog, tmp_path: Path
) -> None:
    agent = Agent(
        model=ScriptedModel([tool_call("echo", {"text": "k"}), "ok"]), tools=[stdio_server()], store=SQLiteStore(tmp_path / "r.db")
    )
    async with agent:
        await agent.invoke_async("go", run_id="meta-run")
    (entry,) = call_log.entries()
    assert entry["meta"][IDEMPOTENCY_META_KEY] == "meta-run/tooluse_1_0"


# -- lifecycle ----------------------------------------------------------------------------


def test_a_sync_agent_runs_twice_on_one_process_and_leaves_none_after_close(
    stdio_server: Callable[..., MCPServerStdio], call_log: CallLog
) -> None:
    script = [tool_call("add", {"a": 1, "b": 1}), "two", tool_call("add", {"a": 2, "b": 2}), "four"]
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server()])
    assert str(agent("1+1")) == "two"  # each sync call runs in an event loop of its own
    assert str(agent("2+2")) == "four"
    assert [block["content"] for block in (result_block(agent, 2), result_block(agent, 6))] == [[{"text": "2"}], [{"text": "4"}]]
    (pid,) = call_log.pids()
    assert alive(pid)
    agent.close()
    assert not alive(pid)


def test_a_sync_agent_never_closed_leaves_no_process_when_python_exits(tmp_path: Path) -> None:
    import subprocess
    import sys

    from .fixtures import TOOLBOX

    log = tmp_path / "calls.jsonl"
    code = f"""
import sys
from tether import Agent, ScriptedModel
from tether.mcp import MCPServerStdio
from tether.models import tool_call
server = MCPServerStdio(sys.executable, [{str(TOOLBOX)!r}, "--log", {str(log)!r}])
agent = Agent(model=ScriptedModel([tool_call("echo", {{"text": "hi"}}), "bye"]), tools=[server])
print(agent("go"))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "bye"
    (pid,) = CallLog(log).pids()
    assert not alive(pid)  # closed at exit, although the agent never was


async def test_a_crashed_server_is_restarted_on_next_use(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    script = [tool_call("crash"), tool_call("add", {"a": 5, "b": 5}), "ten"]
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server(name="toolbox")])
    async with agent:
        result = await agent.invoke_async("go")
    crashed = result_block(agent, 2)
    assert crashed["status"] == "error"
    text = crashed["content"][0]["text"]
    assert "MCP server 'toolbox': tool 'crash' failed" in text and "toolbox: segfault in crash()" in text  # stderr tail
    assert result_block(agent, 4)["content"] == [{"text": "10"}] and result.text == "ten"
    assert call_log.tools() == ["crash", "add"] and len(call_log.pids()) == 2  # a new process served the next call


# -- bad input: bounded, with the server's stderr -----------------------------------------


async def test_a_server_that_fails_to_start_is_a_tether_error_with_its_stderr(stdio_server: Callable[..., MCPServerStdio]) -> None:
    model = ScriptedModel(["unreached"])
    agent = Agent(model=model, tools=[stdio_server("exit", name="toolbox")])
    with pytest.raises(MCPError) as caught:
        await agent.invoke_async("hi")
    message = str(caught.value)
    assert isinstance(caught.value, TetherError) and message.startswith("MCP server 'toolbox': could not be started")
    assert "fatal: cannot open the database /nonexistent/db" in message and "fatal" in caught.value.stderr_tail
    assert model.index == 0


async def test_a_missing_executable_is_a_tether_error() -> None:
    agent = Agent(model=ScriptedModel(["unreached"]), tools=[MCPServerStdio("/nonexistent/mcp-server", startup_timeout=5)])
    with pytest.raises(MCPError, match=r"MCP server 'mcp-server': could not be started or connected: .*No such file"):
        await agent.start()


async def test_a_server_that_never_answers_the_handshake_fails_within_the_startup_timeout(
    stdio_server: Callable[..., MCPServerStdio],
) -> None:
    agent = Agent(model=ScriptedModel(["unreached"]), tools=[stdio_server("mute", name="mute", startup_timeout=1.5)])
    with pytest.raises(MCPError, match=r"did not complete the MCP handshake within startup_timeout=1.5s") as caught:
        await agent.start()
    assert "muted, will never answer" in str(caught.value)


async def test_an_unreachable_http_server_fails_within_the_startup_timeout() -> None:
    from .fixtures import free_port

    agent = Agent(model=ScriptedModel(["x"]), tools=[MCPServerHTTP(f"http://127.0.0.1:{free_port()}/mcp", name="gone", startup_timeout=3)])
    with pytest.raises(MCPError, match="MCP server 'gone'"):
        await agent.start()


async def test_a_call_that_never_answers_is_an_error_result_within_the_call_timeout(
    stdio_server: Callable[..., MCPServerStdio], call_log: CallLog
) -> None:
    agent = Agent(
        model=ScriptedModel([tool_call("hang"), tool_call("echo", {"text": "back"}), "ok"]), tools=[stdio_server(call_timeout=1.5)]
    )
    async with agent:
        await agent.invoke_async("go")
    hung = result_block(agent, 2)
    assert hung["status"] == "error" and "tool 'hang' did not answer within call_timeout=1.5s" in hung["content"][0]["text"]
    assert result_block(agent, 4)["content"] == [{"text": "back"}]  # served by a restarted server
    assert len(call_log.pids()) == 2


async def test_a_schema_that_is_not_an_object_names_server_and_tool() -> None:
    import sys

    from .fixtures import TOOLBOX

    raw = TOOLBOX.parent / "rawschema.py"  # the SDK's own server classes refuse to list such a tool
    agent = Agent(model=ScriptedModel(["unreached"]), tools=[MCPServerStdio(sys.executable, [str(raw)], name="raw", startup_timeout=20)])
    with pytest.raises(ToolError, match=r"MCP server 'raw': tool 'weird' has an input schema that is not a JSON object schema") as caught:
        await agent.start()
    assert isinstance(caught.value, MCPError) and agent.tool_names == []
    assert "rawschema: serving a tool with an array schema" in str(caught.value)  # the stderr tail


def test_the_schema_check_of_a_listed_tool() -> None:
    from types import SimpleNamespace

    from tether.mcp.results import to_tool_spec

    good = SimpleNamespace(name="t", description="T.", input_schema={"type": "object", "properties": {}})
    assert to_tool_spec("srv", good, "p_t") == {"name": "p_t", "description": "T.", "inputSchema": {"json": good.input_schema}}
    with pytest.raises(MCPError, match="MCP server 'srv': tool 't' has an input schema that is not a JSON object schema"):
        to_tool_spec("srv", SimpleNamespace(name="t", description="", input_schema={"type": "string"}), "t")


def test_a_source_dropped_without_close_stops_its_server(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    import gc
    import weakref

    agent = Agent(model=ScriptedModel([tool_call("echo", {"text": "x"}), "ok"]), tools=[stdio_server()])
    agent("go")
    (pid,) = call_log.pids()
    source = weakref.ref(agent.tool_registry.sources[0])
    assert alive(pid)
    del agent
    gc.collect()
    assert source() is None  # the open session does not keep its source alive
    assert not alive(pid)  # the finalizer stopped the server


async def test_concurrent_calls_share_the_one_session(
    stdio_server: Callable[..., MCPServerStdio], call_log: CallLog, tmp_path: Path
) -> None:
    from tether.models import tool_calls

    gate = tmp_path / "gate"
    gate.touch()
    script = [tool_calls([("slow", {"gate": str(gate)}), ("add", {"a": 1, "b": 1}), ("echo", {"text": "e"})]), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server()])
    async with agent:
        await agent.invoke_async("go")
    results: Any = [block["toolResult"] for block in agent.messages[2]["content"]]
    assert [r["content"] for r in results] == [[{"text": "slow done"}], [{"text": "2"}], [{"text": "e"}]]
    assert sorted(call_log.tools()) == ["add", "echo", "slow"] and len(call_log.pids()) == 1


async def test_a_closed_source_starts_again_on_next_use(stdio_server: Callable[..., MCPServerStdio], call_log: CallLog) -> None:
    script = [tool_call("add", {"a": 1, "b": 2}), "3", tool_call("add", {"a": 2, "b": 2}), "4"]
    agent = Agent(model=ScriptedModel(script), tools=[stdio_server()])
    await agent.invoke_async("first")
    await agent.aclose()
    await agent.invoke_async("second")  # a new thread, loop and process
    await agent.aclose()
    assert call_log.tools() == ["add", "add"] and len(call_log.pids()) == 2
    assert result_block(agent, 6)["content"] == [{"text": "4"}]
    assert not any(alive(pid) for pid in call_log.pids())


async def test_protocol_auto_on_an_mcp_older_than_2_3_names_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """strands-agents 1.62 pins mcp<2.2, so with the strands extra pip installs mcp 2.1, which has no
    ``server/discover`` negotiation: protocol='auto' says what is missing instead of an ImportError."""
    import sys

    from tether.errors import ConfigurationError
    from tether.mcp.source import _negotiate_auto

    monkeypatch.setitem(sys.modules, "mcp.client._probe", None)  # as on mcp 2.1: the module does not exist
    with pytest.raises(ConfigurationError, match=r"protocol='auto' \(MCP questions and tasks\) needs mcp>=2.3; this environment has mcp "):
        await _negotiate_auto(None)
