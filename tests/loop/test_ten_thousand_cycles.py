"""One invocation of 10,000 tool cycles completes: the loop is iterative, its stack depth flat."""

from __future__ import annotations

import sys
from typing import Any

from tether import Agent, NullConversationManager, ScriptedModel, tool
from tether.types import Message

CYCLES = 10_000


def stack_depth() -> int:
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


def test_ten_thousand_tool_cycles_in_one_invocation() -> None:
    depths: dict[int, int] = {}
    calls = 0

    @tool(run_in_thread=False)
    def add(a: int, b: int) -> int:
        nonlocal calls
        calls += 1
        if calls in (10, CYCLES - 10):
            depths[calls] = stack_depth()
        return a + b

    def respond(messages: list[Message]) -> Any:
        done = (len(messages) - 1) // 2  # prompt, then one call and one result per cycle
        if done < CYCLES:
            return {"role": "assistant", "content": [{"toolUse": {"name": "add", "input": {"a": done, "b": 1}}}]}
        return "finished"

    agent = Agent(
        model=ScriptedModel([respond] * (CYCLES + 1)),
        tools=[add],
        conversation_manager=NullConversationManager(),
    )
    result = agent("count")
    assert result.stop_reason == "end_turn"
    assert str(result) == "finished"
    assert calls == CYCLES
    assert result.metrics.cycle_count == CYCLES + 1
    assert result.metrics.tool_call_count == CYCLES
    assert len(agent.messages) == 2 * CYCLES + 2
    last_result = agent.messages[-2]["content"][0]["toolResult"]
    assert last_result["content"] == [{"json": CYCLES}]
    assert depths[10] == depths[CYCLES - 10], depths
    ids = {m["content"][0]["toolUse"]["toolUseId"] for m in agent.messages[1::2][:-1]}
    assert len(ids) == CYCLES  # derived ids never collide
