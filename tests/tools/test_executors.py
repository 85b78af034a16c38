"""Tool executors: concurrent (default; results in call order) and sequential."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from tether import Agent, ConcurrentToolExecutor, ScriptedModel, SequentialToolExecutor, tool
from tether.models import tool_calls
from tether.tools.executors import ToolExecutor
from tether.types import ToolUse

from ..conftest import results_of


def make_agent(executor: ToolExecutor | None, log: list[str]) -> Agent:
    @tool
    async def slow(label: str, delay: float) -> str:
        log.append(f"start {label}")
        await asyncio.sleep(delay)
        log.append(f"end {label}")
        return label

    script = [
        tool_calls(
            [("slow", {"label": "a", "delay": 0.05}), ("slow", {"label": "b", "delay": 0.0}), ("slow", {"label": "c", "delay": 0.02})]
        ),
        "done",
    ]
    return Agent(model=ScriptedModel(script), tools=[slow], tool_executor=executor)


def test_concurrent_is_the_default_and_overlaps_calls_but_keeps_call_order() -> None:
    log: list[str] = []
    agent = make_agent(None, log)
    assert isinstance(agent.tool_executor, ConcurrentToolExecutor)
    agent("go")
    assert log[:3] == ["start a", "start b", "start c"]
    assert log[3:] == ["end b", "end c", "end a"]
    assert [r["content"][0]["text"] for r in results_of(agent.messages[2])] == ["a", "b", "c"]
    ids = [block["toolUse"]["toolUseId"] for block in agent.messages[1]["content"]]
    assert [r["toolUseId"] for r in results_of(agent.messages[2])] == ids


def test_sequential_runs_one_after_another_in_order() -> None:
    log: list[str] = []
    agent = make_agent(SequentialToolExecutor(), log)
    agent("go")
    assert log == ["start a", "end a", "start b", "end b", "start c", "end c"]
    assert [r["content"][0]["text"] for r in results_of(agent.messages[2])] == ["a", "b", "c"]


async def test_sequential_stops_at_the_first_interrupted_call() -> None:
    ran: list[str] = []

    async def run_one(use: ToolUse) -> bool:
        ran.append(use["toolUseId"])
        return use["toolUseId"] != "2"

    uses: Sequence[ToolUse] = [{"toolUseId": str(i), "name": "x", "input": {}} for i in range(1, 4)]
    await SequentialToolExecutor().execute(uses, run_one)
    assert ran == ["1", "2"]
    ran.clear()
    await ConcurrentToolExecutor().execute(uses, run_one)
    assert sorted(ran) == ["1", "2", "3"]


async def test_concurrent_raises_a_failure_as_itself() -> None:
    async def run_one(use: ToolUse) -> bool:
        if use["toolUseId"] == "2":
            raise KeyError("driver bug")
        await asyncio.sleep(0)
        return True

    uses: Sequence[ToolUse] = [{"toolUseId": str(i), "name": "x", "input": {}} for i in range(1, 4)]
    with pytest.raises(KeyError, match="driver bug"):
        await ConcurrentToolExecutor().execute(uses, run_one)


def test_custom_executor() -> None:
    class Reversed(ToolExecutor):
        async def execute(self, tool_uses: Sequence[ToolUse], run_one):  # type: ignore[no-untyped-def]
            for use in reversed(tool_uses):
                await run_one(use)

    log: list[str] = []
    agent = make_agent(Reversed(), log)
    agent("go")
    assert log == ["start c", "end c", "start b", "end b", "start a", "end a"]
    assert [r["content"][0]["text"] for r in results_of(agent.messages[2])] == ["a", "b", "c"]
