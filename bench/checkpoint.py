"""Benchmark: the cost of one checkpoint round trip at 10, 100 and 1,000 messages.

One *round* is what a checkpoint-driven runner does per step, in a fresh agent each time:
``json.loads`` of the previous checkpoint, a new ``Agent``, ``agent({"checkpointResume": ...})``
(which runs the pending tool, calls the model, and pauses again, building the next checkpoint),
then ``checkpoint.to_dict()`` and ``json.dumps``. The same cycle on a live agent without
checkpointing is measured too; the difference is the cost of pausing, serializing and resuming.

Printed per size (medians of repeats): the round, the plain cycle, the overhead (round - plain),
and the two halves of it: *save* (``to_dict`` + ``json.dumps``) and *load* (``json.loads`` +
``Checkpoint.from_dict``).

Run: ``.venv/bin/python bench/checkpoint.py [--sizes 10,100,1000] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from tether import Agent, Checkpoint, Limits, NullConversationManager, ScriptedModel, tool
from tether.models.scripted import tool_call
from tether.tools.base import Tool
from tether.types import Message

DEFAULT_SIZES: tuple[int, ...] = (10, 100, 1_000)


def conversation(size: int) -> list[Message]:
    """``size`` messages cycling user text -> assistant text+toolUse -> user toolResult."""
    messages: list[Message] = []
    for i in range(size):
        turn, step = divmod(i, 3)
        if step == 0:
            messages.append({"role": "user", "content": [{"text": f"Question {turn}: what is the weather in city number {turn} today?"}]})
        elif step == 1:
            use = {"toolUseId": f"old_{turn}", "name": "weather", "input": {"city": f"city-{turn}", "days": 3}}
            messages.append({"role": "assistant", "content": [{"text": f"Let me look up city {turn}."}, {"toolUse": use}]})
        else:
            result = {"toolUseId": f"old_{turn}", "status": "success", "content": [{"json": {"city": f"city-{turn}", "high_c": 21.5}}]}
            messages.append({"role": "user", "content": [{"toolResult": result}]})
    return messages


def weather_tool() -> Tool:
    @tool(run_in_thread=False)
    def weather(city: str, days: int) -> dict[str, Any]:
        """The forecast for a city."""
        return {"city": city, "days": days, "forecast": ["sun", "clouds", "rain"][:days]}

    return weather


SCRIPT: list[Any] = [tool_call("weather", {"city": "Lyon", "days": 3}, text="Checking.")] * 4


def _median_ms(func: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def _agent(messages: list[Message] | None, checkpointing: list[str], script: list[Any]) -> Agent:
    return Agent(
        model=ScriptedModel(script, stateful=True),
        tools=[weather_tool()],
        messages=messages,
        checkpointing=checkpointing,
        conversation_manager=NullConversationManager(),
    )


def measure(size: int, repeats: int) -> dict[str, float]:
    """Median milliseconds of a checkpoint round and of a plain cycle at ``size`` messages."""
    # A checkpoint after_model at `size` messages (the history, the prompt, the tool call).
    start = _agent(conversation(size - 2), ["after_model"], SCRIPT)("Weather in Lyon?")
    assert start.checkpoint is not None
    text = json.dumps(start.checkpoint.to_dict())
    assert len(json.loads(text)["snapshot"]["data"]["messages"]) == size

    def round_trip() -> None:
        data = json.loads(text)
        result = _agent(None, ["after_model"], SCRIPT)({"checkpointResume": {"checkpoint": data}})
        assert result.checkpoint is not None
        json.dumps(result.checkpoint.to_dict())

    # The same step on a live agent that does not checkpoint: one model call and its tool per
    # call (Limits(max_cycles=1) ends each invocation after its cycle).
    plain = Agent(
        model=ScriptedModel([SCRIPT[0]] * (repeats + 2)),
        tools=[weather_tool()],
        messages=conversation(size - 2),
        conversation_manager=NullConversationManager(),
        limits=Limits(max_cycles=1),
    )
    assert plain("Weather in Lyon?").stop_reason == "limit_cycles"

    def plain_cycle() -> None:
        plain(None)

    checkpoint = start.checkpoint

    def save() -> None:
        json.dumps(checkpoint.to_dict())

    def load() -> None:
        Checkpoint.from_dict(json.loads(text))

    round_trip()
    return {
        "round_ms": _median_ms(round_trip, repeats),
        "plain_ms": _median_ms(plain_cycle, repeats),
        "save_ms": _median_ms(save, repeats),
        "load_ms": _median_ms(load, repeats),
        "json_bytes": float(len(text)),
    }


def main(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int | None = None) -> list[dict[str, float]]:
    """Run the benchmark for ``sizes``, print a table and return the rows."""
    rows = []
    print(f"{'messages':>9} {'JSON KiB':>9} {'round ms':>9} {'plain ms':>9} {'overhead':>9} {'save ms':>8} {'load ms':>8}")
    for size in sizes:
        count = repeats if repeats is not None else max(21, min(101, 10_000 // max(size, 1)))
        row = {"messages": float(size), **measure(size, count)}
        row["overhead_ms"] = row["round_ms"] - row["plain_ms"]
        rows.append(row)
        print(
            f"{size:>9} {row['json_bytes'] / 1024:>9.1f} {row['round_ms']:>9.3f} {row['plain_ms']:>9.3f}"
            f" {row['overhead_ms']:>9.3f} {row['save_ms']:>8.3f} {row['load_ms']:>8.3f}"
        )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated message counts (>= 3)")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per size (default: scaled to size)")
    args = parser.parse_args()
    main([int(part) for part in args.sizes.split(",")], args.repeats)
