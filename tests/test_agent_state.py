"""`agent.state`: JSON-only key/value state; non-JSON values are refused with the key named."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tether import Agent, ScriptedModel, StateError, TetherError, ToolContext, tool
from tether.agent_state import AgentState

from .conftest import call


def make_state(initial: dict[str, Any] | None = None) -> tuple[AgentState, dict[str, Any]]:
    store: dict[str, Any] = dict(initial or {})
    return AgentState(lambda: store), store


def test_get_set_delete() -> None:
    state, store = make_state()
    state.set("count", 3)
    state.set("profile", {"name": "Ada", "tags": ["x", 1, 2.5, True, None]})
    assert state.get("count") == 3
    assert state.get("profile") == {"name": "Ada", "tags": ["x", 1, 2.5, True, None]}
    assert state.get() == store
    assert state.get("missing") is None
    assert state.get("missing", "fallback") == "fallback"
    assert "count" in state and "missing" not in state
    assert len(state) == 2
    assert state.keys() == ["count", "profile"]
    state.delete("count")
    assert "count" not in store
    state.delete("count")  # absent: no error
    assert "profile" in repr(state)


def test_reads_and_writes_copy() -> None:
    state, store = make_state()
    value = {"items": [1]}
    state.set("v", value)
    value["items"].append(2)
    assert store["v"] == {"items": [1]}
    read = state.get("v")
    read["items"].append(3)
    assert state.get("v") == {"items": [1]}
    whole = state.get()
    whole["new"] = 1
    assert "new" not in store


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (object(), "state['bad']"),
        ({1, 2}, "state['bad']"),
        (datetime(2024, 1, 1), "state['bad']"),
        ({"inner": {"deep": b"bytes"}}, "state['bad'].inner.deep"),
        ([1, 2, object()], r"state['bad'][2]"),
        (float("nan"), "state['bad']"),
        ("\ud800", "state['bad'] is not JSON (lone surrogate)"),
        ({"deep": ["ok", "x\udfff"]}, "state['bad'].deep[1] is not JSON (lone surrogate)"),
        (("\ud800",), "state['bad'][0] is not JSON (lone surrogate)"),
        ({"\udc00": 1}, "state['bad'].\\udc00 is not JSON (lone surrogate)"),
    ],
)
def test_non_json_values_are_refused_naming_the_key(value: Any, path: str) -> None:
    state, store = make_state()
    with pytest.raises(StateError) as info:
        state.set("bad", value)
    assert isinstance(info.value, TetherError)
    assert path in str(info.value)
    str(info.value).encode("utf-8")  # the message itself is printable text, whatever the value held
    assert "bad" not in store


def test_valid_unicode_is_kept_as_it_is() -> None:
    state, store = make_state()
    state.set("text", {"é": "naïve 😀", "cjk": ["漢字"]})
    assert store["text"] == {"é": "naïve 😀", "cjk": ["漢字"]}


def test_circular_values_are_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    state, _ = make_state()
    with pytest.raises(StateError, match="bad"):
        state.set("bad", loop)


@pytest.mark.parametrize("key", ["", 3, None])
def test_keys_must_be_non_empty_strings(key: Any) -> None:
    state, _ = make_state()
    with pytest.raises(StateError, match="keys"):
        state.set(key, 1)


def test_state_is_json_round_trippable() -> None:
    state, _ = make_state()
    state.set("a", {"b": [1, "two", 3.0, None, False]})
    assert json.loads(json.dumps(state.get())) == state.get()


def test_agent_state_is_shared_with_tools_and_survives_invocations() -> None:
    @tool
    def bump(context: ToolContext) -> int:
        count = context.agent.state.get("count", 0) + 1
        context.agent.state.set("count", count)
        return count

    agent = Agent(model=ScriptedModel([call("bump"), call("bump"), "done", call("bump"), "done"]), tools=[bump], state={"count": 10})
    first = agent("go")
    assert agent.state.get("count") == 12
    assert first.state == {"count": 12}
    agent("again")
    assert agent.state.get("count") == 13
    assert first.state == {"count": 12}


def test_tool_setting_non_json_state_gets_an_error_result_naming_the_key() -> None:
    @tool
    def store_set(context: ToolContext) -> str:
        context.agent.state.set("handle", {1, 2})
        return "stored"

    agent = Agent(model=ScriptedModel([call("store_set"), "ok"]), tools=[store_set])
    agent("go")
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert "handle" in result["content"][0]["text"]
    assert agent.state.get() == {}


def test_agent_state_initial_value_is_copied() -> None:
    initial = {"nested": {"x": 1}}
    agent = Agent(state=initial)
    initial["nested"]["x"] = 2
    assert agent.state.get("nested") == {"x": 1}
