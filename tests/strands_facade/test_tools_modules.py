"""Module tools (``TOOL_SPEC`` + a function), tool files, ``{"name", "path"}`` dicts, module
paths, nested lists and ``ToolProvider`` in ``tools=[...]``, as Strands' registry reads them."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tether import Agent, ScriptedModel
from tether.errors import ConfigurationError, TetherError
from tether.strands.tools import PythonAgentTool, ToolProvider, to_tether_tools, tool

from ._helpers import call, strands_result, tool_results

MODULE_TOOL = """
TOOL_SPEC = {
    "name": "shout",
    "description": "Shout the text.",
    "inputSchema": {"json": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
}


def shout(tool_use, **kwargs):
    seen = sorted(k for k in kwargs if k in ("agent", "user"))
    return {
        "toolUseId": tool_use["toolUseId"],
        "status": "success",
        "content": [{"text": tool_use["input"]["text"].upper() + "!"}, {"json": {"kwargs": seen}}],
    }
"""

DECORATED_FILE = '''
from {package} import tool


@tool
def first(a: int) -> int:
    """First tool."""
    return a + 1


@tool
def second(b: str) -> str:
    """Second tool."""
    return b * 2
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


def import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_tool_imported_and_passed_as_a_module(tmp_path: Path) -> None:
    module = import_file(write(tmp_path, "shout", MODULE_TOOL), "shout")
    (ours,) = to_tether_tools([module])
    assert isinstance(ours, PythonAgentTool) and ours.tool_name == "shout" and ours.tool_type == "python"
    agent = Agent(model=ScriptedModel([call("shout", {"text": "hi"}), "done"]), tools=[ours])
    agent("go", invocation_state={"user": "u"})
    (result,) = tool_results(agent.messages)
    assert result["content"] == [{"text": "HI!"}, {"json": {"kwargs": ["agent", "user"]}}]

    from strands.tools.loader import load_tools_from_module

    (theirs,) = load_tools_from_module(module, "shout")
    _, expected = strands_result(theirs, {"toolUseId": "t1", "name": "shout", "input": {"text": "hi"}}, {"agent": object(), "user": "u"})
    assert result == expected
    assert ours.tool_spec == theirs.tool_spec


def test_a_tool_file_path_and_a_name_path_dict(tmp_path: Path) -> None:
    ours_file = write(tmp_path, "pair", DECORATED_FILE.format(package="tether.strands.tools"))
    (tmp_path / "strands_side").mkdir()
    theirs_file = write(tmp_path / "strands_side", "pair", DECORATED_FILE.format(package="strands"))
    ours = to_tether_tools([str(ours_file)])
    from strands.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.process_tools([str(theirs_file)])
    assert sorted(t.tool_name for t in ours) == sorted(registry.registry) == ["first", "second"]
    assert all(t.is_dynamic for t in ours)
    assert {t.tool_name: t.spec for t in ours} == {s["name"]: s for s in registry.get_all_tool_specs()}

    (only,) = to_tether_tools([{"name": "second", "path": str(ours_file)}])
    assert only.tool_name == "second"
    assert len(to_tether_tools([{"path": str(ours_file)}])) == 2

    agent = Agent(model=ScriptedModel([call("first", {"a": 1}), "done"]), tools=to_tether_tools([str(ours_file)]))
    agent("go")
    assert tool_results(agent.messages)[0]["content"] == [{"text": "2"}]


def test_a_module_path_and_a_module_function_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "facade_pair_tools", DECORATED_FILE.format(package="tether.strands.tools"))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert sorted(t.tool_name for t in to_tether_tools(["facade_pair_tools"])) == ["first", "second"]
        assert [t.tool_name for t in to_tether_tools(["facade_pair_tools:second"])] == ["second"]
    finally:
        sys.modules.pop("facade_pair_tools", None)


def test_a_tool_file_runs_under_a_prefixed_module_key_and_not_over_a_stdlib_module(tmp_path: Path) -> None:
    import json

    path = write(tmp_path, "json", MODULE_TOOL.replace("shout", "json"))
    (loaded,) = to_tether_tools([str(path)])
    assert loaded.tool_name == "json" and sys.modules["json"] is json


def test_nested_lists_and_native_items_pass_through() -> None:
    @tool
    def a() -> str:
        """A."""
        return "a"

    def native(x: int) -> int:
        return x

    items = to_tether_tools([[a, (native,)], a])
    assert items == [a, native, a]
    assert to_tether_tools(None) == []


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ("/no/such/dir/tool_file_missing.py", "tool_file_missing"),
        ({"name": "nope", "path": "MODULE"}, "nope"),
        ("json", "json"),
        ("json:dumps", "dumps"),
    ],
)
def test_what_cannot_be_loaded_is_a_clear_error(tmp_path: Path, item: Any, named: str) -> None:
    if isinstance(item, dict):
        item = {**item, "path": str(write(tmp_path, "shout", MODULE_TOOL))}
    with pytest.raises(ConfigurationError, match=named) as info:
        to_tether_tools([item])
    assert isinstance(info.value, TetherError) and isinstance(info.value, ValueError)  # Strands raises ValueError
    assert str(info.value).startswith("Failed to load tool")


class Provider(ToolProvider):
    def __init__(self) -> None:
        self.log: list[str] = []

        @tool
        def provided(x: int) -> int:
            """A provided tool."""
            return x * 10

        self.tools = [provided]

    async def load_tools(self, **kwargs: Any) -> Sequence[Any]:
        self.log.append("load")
        return self.tools

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self.log.append("add")

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self.log.append("remove")


def test_a_tool_provider_is_loaded_at_start_and_released_at_close() -> None:
    provider = Provider()
    agent = Agent(model=ScriptedModel([call("provided", {"x": 4}), "done"]), tools=to_tether_tools([provider]))
    agent("go")
    assert tool_results(agent.messages)[0]["content"] == [{"text": "40"}]
    assert provider.log == ["add", "load"]
    agent.close()
    assert provider.log == ["add", "load", "remove"]
