"""Benchmark: snapshot round trips at 10 to 10,000 messages.

Prints, per conversation size, the median time of

- *save*: ``agent.take_snapshot()`` + ``json.dumps(snap.to_dict())``;
- *load*: ``json.loads`` + ``Snapshot.from_dict`` + ``agent.load_snapshot``.

Messages are realistic: a user question, an assistant answer with text and a tool call, and the
user's tool result, repeated. Target: at most 3 ms each way at 1,000 messages, linear in size.

Run: ``.venv/bin/python bench/snapshot.py [--sizes 10,100,1000,10000] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from tether import Agent, NullConversationManager, Snapshot
from tether.types import Message

DEFAULT_SIZES: tuple[int, ...] = (10, 100, 1_000, 10_000)


def conversation(size: int) -> list[Message]:
    """``size`` messages cycling user text -> assistant text+toolUse -> user toolResult."""
    messages: list[Message] = []
    for i in range(size):
        turn, step = divmod(i, 3)
        if step == 0:
            messages.append({"role": "user", "content": [{"text": f"Question {turn}: what is the weather in city number {turn} today?"}]})
        elif step == 1:
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {"text": f"Let me look up the forecast for city {turn}."},
                        {"toolUse": {"toolUseId": f"tooluse_{turn}", "name": "weather", "input": {"city": f"city-{turn}", "days": 3}}},
                    ],
                }
            )
        else:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": f"tooluse_{turn}",
                                "status": "success",
                                "content": [{"json": {"city": f"city-{turn}", "forecast": ["sun", "clouds", "rain"], "high_c": 21.5}}],
                            }
                        }
                    ],
                }
            )
    return messages


def _median_ms(func: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def measure(size: int, repeats: int) -> dict[str, float]:
    """Median milliseconds of the save and load round trips for ``size`` messages."""
    agent = Agent(
        messages=conversation(size),
        state={"user": "ada", "preferences": {"units": "metric"}},
        system_prompt=[{"text": "You are a weather assistant."}, {"cachePoint": {"type": "default"}}],
        conversation_manager=NullConversationManager(),
    )
    target = Agent(conversation_manager=NullConversationManager())
    text = json.dumps(agent.take_snapshot().to_dict())

    def save() -> None:
        json.dumps(agent.take_snapshot().to_dict())

    def load() -> None:
        target.load_snapshot(Snapshot.from_dict(json.loads(text)))

    save()
    load()
    assert len(target.messages) == size
    return {"save_ms": _median_ms(save, repeats), "load_ms": _median_ms(load, repeats), "json_bytes": float(len(text))}


def main(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int | None = None) -> list[dict[str, float]]:
    """Run the benchmark for ``sizes``, print a table and return the rows."""
    rows = []
    print(f"{'messages':>9} {'JSON KiB':>9} {'save ms':>9} {'load ms':>9} {'save us/msg':>12} {'load us/msg':>12}")
    for size in sizes:
        count = repeats if repeats is not None else max(5, min(200, 20_000 // max(size, 1)))
        row = {"messages": float(size), **measure(size, count)}
        rows.append(row)
        print(
            f"{size:>9} {row['json_bytes'] / 1024:>9.1f} {row['save_ms']:>9.3f} {row['load_ms']:>9.3f}"
            f" {row['save_ms'] * 1000 / size:>12.2f} {row['load_ms'] * 1000 / size:>12.2f}"
        )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated message counts")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per size (default: scaled to size)")
    args = parser.parse_args()
    main([int(part) for part in args.sizes.split(",")], args.repeats)
