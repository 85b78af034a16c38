"""The user's agent config, the hint stored with a CLI run and its comparison, loading tools from module:attr."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tether.cli.config import CONFIG_KEY, RunConfig, build_agent, check_hint, differences, keep_root, load_tools, user_config
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


def test_from_state_ignores_foreign_runs_and_refuses_malformed_hints() -> None:
    assert RunConfig.from_state(None) is None
    assert RunConfig.from_state({"other": 1}) is None  # a run the SDK made: no hint
    assert RunConfig.from_state({CONFIG_KEY: {"model": "openai:x"}}) == RunConfig(model="openai:x")
    for bad in (
        {CONFIG_KEY: {"model": 3}},
        {CONFIG_KEY: "openai:x"},
        {CONFIG_KEY: {"model": "openai:x", "tools": "mod:T"}},  # a string would be read as one spec per character
        {CONFIG_KEY: {"model": "openai:x", "tools": [1]}},
        {CONFIG_KEY: {"model": "openai:x", "demo_tools": "yes"}},
        {CONFIG_KEY: {"model": "openai:x", "root": ["/"]}},
    ):
        with pytest.raises(ConfigurationError, match=r"run 'r': its stored 'tether.cli' hint is malformed.*--ignore-stored-config"):
            RunConfig.from_state(bad, "r")
    with pytest.raises(ConfigurationError, match="state is not a JSON object"):
        RunConfig.from_state([1], "r")


def test_user_config_takes_flags_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TETHER_MODEL", "anthropic:env")
    assert user_config(None, [], False, None) == RunConfig(model="anthropic:env", root=str(tmp_path.resolve()))
    sub = tmp_path / "sub"
    sub.mkdir()
    mine = user_config("openai:flag", ["a:B", "c:D"], True, "sub", "Be brief.")
    assert mine == RunConfig(model="openai:flag", tools=["a:B", "c:D"], demo_tools=False, root=str(sub), system="Be brief.")
    assert mine.flags() == ["--model", "openai:flag", "--tools", "a:B", "--tools", "c:D", "--no-demo-tools"]
    assert RunConfig(model="m", root="/r").flags() == ["--model", "m", "--root", "/r"]


@pytest.mark.parametrize(
    ("mine", "differ"),
    [
        (RunConfig(model="openai:x", root="/w"), []),
        (RunConfig(model="openai:x", root="/w/./", system="another prompt"), []),  # the system prompt is never compared
        (RunConfig(model="openai:y", root="/w"), ["--model"]),
        (RunConfig(model="openai:x", tools=["m:T"], root="/w"), ["--tools"]),
        (RunConfig(model="openai:x", root="/"), ["--root"]),
        (RunConfig(model="openai:x", demo_tools=False, root="/w"), ["--no-demo-tools"]),
        (RunConfig(model="anthropic:x", tools=["m:T"], demo_tools=False, root="/"), ["--model", "--tools", "--no-demo-tools"]),
    ],
)
def test_differences_from_the_hint(mine: RunConfig, differ: list[str]) -> None:
    assert differences(mine, RunConfig(model="openai:x", root="/w", system="Be brief.")) == differ


def test_the_root_does_not_matter_without_the_demo_tools() -> None:
    assert differences(RunConfig(model="m", demo_tools=False, root="/"), RunConfig(model="m", demo_tools=False, root="/w")) == []


def test_check_hint_names_the_stored_flags_and_yours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_MODEL", "llamacpp")
    hint = RunConfig(model="openai:gpt-4o", tools=["app.tools:ALL"], root="/srv/app dir")
    mine = RunConfig(model="llamacpp", root="/home/me")
    check_hint(hint, hint, "r1", "resume", None)
    check_hint(mine, None, "r1", "resume", None)  # no hint: nothing to compare
    with pytest.raises(ConfigurationError) as caught:
        check_hint(mine, hint, "r1", "resume", None)
    assert str(caught.value) == (
        "run 'r1' was created with --model openai:gpt-4o --tools app.tools:ALL --root '/srv/app dir'; pass the same to resume "
        "(yours: --model llamacpp (from $TETHER_MODEL), no --tools, --root /home/me), or --ignore-stored-config to use yours"
    )
    with pytest.raises(ConfigurationError, match=r"pass the same to run \(yours: --model llamacpp\)"):
        check_hint(RunConfig(model="llamacpp", tools=hint.tools, root=hint.root), hint, "r1", "run", "llamacpp")


def test_hint_text_escapes_control_characters() -> None:
    hint = RunConfig(model="openai:x\x1b[2J", tools=["m:T\nrm -rf ~"], demo_tools=False)
    with pytest.raises(ConfigurationError) as caught:
        check_hint(RunConfig(model="openai:x", demo_tools=False), hint, "r", "resume", "openai:x")
    text = str(caught.value)
    assert "\x1b" not in text and "\n" not in text
    assert "--model 'openai:x\\x1b[2J' --tools 'm:T\\nrm -rf ~'" in text


def test_keep_root_only_narrows_the_current_directory(tmp_path: Path) -> None:
    """Without --root a run keeps its stored root only when it is a real directory inside the
    current one (the default root, which already grants it); anything else is left to check_hint."""
    here = (tmp_path / "here").resolve()
    inside, outside = here / "proj", tmp_path / "elsewhere"
    inside.mkdir(parents=True)
    outside.mkdir()
    (here / "link").symlink_to(outside)  # inside by name, outside in fact

    def kept(stored: str, *, flag: str | None = None, demo: bool = True) -> str:
        mine = RunConfig(model="m", root=str(here), demo_tools=demo)
        keep_root(mine, RunConfig(model="m", root=stored, demo_tools=demo), flag)
        return mine.root

    assert kept(str(inside)) == str(inside)
    assert kept(str(here)) == str(here)
    assert kept(str(outside)) == str(here)  # wider or elsewhere: not taken from the row
    assert kept("/") == str(here)
    assert kept(str(here / "link")) == str(here)
    assert kept(str(here / "proj" / ".." / "proj")) == str(here)  # not the resolved form tether run stores
    assert kept("proj") == str(here)  # relative
    assert kept(str(here / "missing")) == str(here)
    assert kept(str(inside), flag=str(here)) == str(here)  # the user's --root wins
    assert kept(str(inside), demo=False) == str(here)  # no file reader: nothing to keep
    mine = RunConfig(model="m", root=str(here))
    keep_root(mine, None, None)  # a run the SDK made has no hint
    assert mine.root == str(here)
