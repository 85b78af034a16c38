"""The provider's per-cycle write path: two fenced writes per tool cycle (the model's response with
its calls' start markers; the batch's results with their message), and what a crash between the
last tool's end and that second write leaves: the call in doubt, run again once with the same
idempotency key, flagged; a non-idempotent tool's result is stored as soon as it arrives."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, ToolContext, tool
from strands.hooks import AfterToolsEvent

from tether.durable import SQLiteStore
from tether.strands.executor import idempotency_key
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

RUN_ID = "strands.w-1.default"
CALLS: list[str] = []


@tool(context=True)
def note(text: str, tool_context: ToolContext) -> str:
    """Note a text (its idempotency key goes to the side-effect log).

    Args:
        text: What to note.
    """
    CALLS.append(idempotency_key(tool_context))
    return text.upper()


def script(cycles: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"tools": [(f"tu-{n}", "note", {"text": f"t{n}"})]} for n in range(cycles)]
    return [*turns, {"text": "done"}]


def agent_of(manager: TetherSessionManager, cycles: int, executor: str) -> Agent:
    from strands.tools.executors import ConcurrentToolExecutor, SequentialToolExecutor

    chosen = ConcurrentToolExecutor() if executor == "concurrent" else SequentialToolExecutor()
    return Agent(model=ScriptModel(script(cycles)), tools=[note], tool_executor=chosen, callback_handler=None, session_manager=manager)


def commits_of_a_turn(store_path: Path, cycles: int, executor: str, **options: Any) -> int:
    store = SQLiteStore(store_path)
    count = 0
    commit = store.commit

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        return commit(*args, **kwargs)

    store.commit = counted  # type: ignore[method-assign]
    manager = TetherSessionManager(f"c-{cycles}", store=store, **options)
    agent = agent_of(manager, cycles, executor)
    count = 0
    assert str(agent("go")).strip() == "done"
    manager.close()
    store.close()
    return count


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_a_tool_cycle_costs_two_fenced_writes(executor: str, tmp_path: Path) -> None:
    writes = [commits_of_a_turn(tmp_path / "runs.db", cycles, executor) for cycles in (1, 2, 5)]
    assert writes[1] - writes[0] == 2
    assert writes[2] - writes[1] == 3 * 2
    # A non-idempotent tool's calls each get a start marker and a result written on their own.
    strict = [commits_of_a_turn(tmp_path / "strict.db", cycles, executor, non_idempotent=["note"]) for cycles in (1, 2)]
    assert strict[1] - strict[0] == 4


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_killed_after_the_last_tool_before_its_result_is_written(executor: str, tmp_path: Path) -> None:
    """A copy of the store taken when the batch's tools are done but Strands has not appended
    their message yet is what kill -9 there leaves; the same call on it finishes the turn."""
    store, crashed = tmp_path / "runs.db", tmp_path / "crashed.db"
    CALLS.clear()
    manager = TetherSessionManager("w-1", store=store)
    agent = agent_of(manager, 2, executor)
    seen: list[Any] = []

    def snapshot(event: AfterToolsEvent) -> None:
        if not seen:  # the first cycle's tools are done, their message not appended yet
            seen.append(SQLiteStore(store).load(RUN_ID))
            with sqlite3.connect(store) as source, sqlite3.connect(crashed) as copy:
                source.backup(copy)

    agent.hooks.add_callback(AfterToolsEvent, snapshot)
    expected = str(agent("go"))
    manager.close()
    stored = seen[0]
    assert "tu-0" in stored.head["cursor"]["started"] and "tu-0" not in stored.results
    assert CALLS == [f"{RUN_ID}/tu-0", f"{RUN_ID}/tu-1"]

    manager = TetherSessionManager("w-1", store=crashed)
    agent = agent_of(manager, 2, executor)
    assert str(agent("go")) == expected
    assert manager.resumed(agent)
    manager.close()
    assert CALLS == [f"{RUN_ID}/tu-0", f"{RUN_ID}/tu-1", f"{RUN_ID}/tu-0", f"{RUN_ID}/tu-1"]  # the same keys
    steps = SQLiteStore(crashed).history(RUN_ID)
    assert [marker["toolUseId"] for step in steps if step.position == "resumed" for marker in step.in_doubt] == ["tu-0"]


def test_a_non_idempotent_result_is_stored_before_its_message(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    manager = TetherSessionManager("w-1", store=store, non_idempotent=["note"])
    agent = agent_of(manager, 1, "concurrent")
    seen: list[Any] = []
    agent.hooks.add_callback(AfterToolsEvent, lambda event: seen.append(SQLiteStore(store).load(RUN_ID)))
    assert str(agent("go")).strip() == "done"
    manager.close()
    assert seen[0].results["tu-0"]["content"] == [{"text": "T0"}]


@tool(context=True)
def count(text: str, tool_context: ToolContext) -> str:
    """Count a call in the agent's state.

    Args:
        text: What to count.
    """
    state = tool_context.agent.state
    state.set("calls", (state.get("calls") or 0) + 1)
    return text


def test_every_change_of_the_agent_state_is_stored_at_the_next_message(tmp_path: Path) -> None:
    """The manager reads ``agent.state`` again only when Strands' change counter moved: each
    tool's ``state.set`` is in the head written with that cycle's results, and a state object
    replaced between invocations is read although its counter matches the old one's."""
    from strands.agent.state import AgentState

    store = SQLiteStore(tmp_path / "runs.db")
    manager = TetherSessionManager("s-1", store=store)
    turns: list[dict[str, Any]] = [{"tools": [(f"tu-{n}", "count", {"text": f"t{n}"})]} for n in range(3)]
    model = ScriptModel([*turns, {"text": "done"}, {"text": "again"}])
    agent = Agent(model=model, tools=[count], callback_handler=None, session_manager=manager)
    seen: list[Any] = []
    agent.hooks.add_callback(AfterToolsEvent, lambda event: seen.append(store.load("strands.s-1.default").head["state"]))
    assert str(agent("go")).strip() == "done"
    # each cycle's head (read when its tools are done) has the count of the cycles before it
    assert [head.get("calls") for head in seen] == [None, 1, 2]
    assert store.load("strands.s-1.default").head["state"] == {"calls": 3}
    agent.state = AgentState({"calls": 0, "other": True})  # a new object: its counter is 0 again
    for value in (7, 5, 3):  # three changes: the old object's counter was 3 as well
        agent.state.set("calls", value)
    assert str(agent("next")).strip() == "again"
    assert store.load("strands.s-1.default").head["state"] == {"calls": 3, "other": True}
    manager.close()
    store.close()
