"""The run config stored with a CLI run, and loading the user's tools from module:attr."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tether.cli.config import CONFIG_KEY, RunConfig, build_agent, load_tools
from tether.durable import MemoryStore
from tether.errors import ConfigurationError, ToolError

TOOLS_MODULE = '''
from tether import tool

@tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()

def whisper(text: str) -> str:
    """Lower-case the text."""
    return text.lower()

TOOLS = [shout, whisper]
NOT_TOOLS = [shout, 42]
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    name = f"user_tools_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(TOOLS_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_load_a_tool_or_a_list(user_module: str) -> None:
    assert [t.tool_name for t in load_tools(f"{user_module}:shout")] == ["shout"]
    assert len(load_tools(f"{user_module}:TOOLS")) == 2


@pytest.mark.parametrize(
    ("suffix", "problem"),
    [(":nothing", "has no attribute 'nothing'"), (":NOT_TOOLS", "42 is not a tool"), ("", "expected module:attr"), (":", "expected")],
)
def test_bad_tool_specs(user_module: str, suffix: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        load_tools(f"{user_module}{suffix}")


def test_a_module_that_fails_to_import_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_tools_mod.py").write_text("raise RuntimeError('half-written module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigurationError, match=r"broken_tools_mod.*RuntimeError: half-written module"):
        load_tools("broken_tools_mod:TOOLS")


def test_build_agent_carries_its_config(tmp_path: Path, user_module: str) -> None:
    config = RunConfig(model="openai:gpt-4o", tools=[f"{user_module}:TOOLS"], root=str(tmp_path), system="Be brief.")
    agent = build_agent(config, MemoryStore())
    assert agent.tool_names == ["calculator", "current_time", "read_file", "shout", "whisper"]
    assert agent.system_prompt == "Be brief." and agent.model.model_id == "openai:gpt-4o"
    assert RunConfig.from_state(agent.state.get()) == config
    bare = build_agent(RunConfig(model="openai:gpt-4o", demo_tools=False, tools=[f"{user_module}:shout"]), MemoryStore())
    assert bare.tool_names == ["shout"]


def test_tool_name_clash_is_an_error(user_module: str) -> None:
    with pytest.raises(ToolError, match="shout"):
        build_agent(RunConfig(model="openai:x", tools=[f"{user_module}:shout", f"{user_module}:TOOLS"]), MemoryStore())


def test_from_state_ignores_foreign_runs() -> None:
    assert RunConfig.from_state(None) is None
    assert RunConfig.from_state({"other": 1}) is None
    assert RunConfig.from_state({CONFIG_KEY: {"model": 3}}) is None
    assert RunConfig.from_state({CONFIG_KEY: {"model": "openai:x"}}) == RunConfig(model="openai:x")
