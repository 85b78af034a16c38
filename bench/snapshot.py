"""Benchmark: snapshot round trips at 10 to 10,000 messages.

Prints, per conversation size, the median time of two round trips:

- the JSON path (Tether's own serialization API):
  *save* ``agent.take_snapshot(preset="all").to_json()``; *load* ``Snapshot.from_json`` + ``agent.load_snapshot``;
- the dict path (for code that handles the dict itself):
  *save* ``json.dumps(agent.take_snapshot(preset="all").to_dict())``;
  *load* ``json.loads`` + ``Snapshot.from_dict`` + ``agent.load_snapshot``.

Messages are realistic: a user question, an assistant answer with text and a tool call, and the
user's tool result, repeated. Targets at 1,000 messages, linear in size: a JSON-path round trip
of at most 2 ms (issue #8: 5x faster than Strands' take_snapshot/load_snapshot), and at most
3 ms each way on the dict path.

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
    """Median milliseconds of the save and load halves of both paths for ``size`` messages."""
    agent = Agent(
        messages=conversation(size),
        state={"user": "ada", "preferences": {"units": "metric"}},
        system_prompt=[{"text": "You are a weather assistant."}, {"cachePoint": {"type": "default"}}],
        conversation_manager=NullConversationManager(),
    )
    target = Agent(conversation_manager=NullConversationManager())
    text = agent.take_snapshot(preset="all").to_json()
    dict_text = json.dumps(agent.take_snapshot(preset="all").to_dict())

    def save_json() -> None:
        agent.take_snapshot(preset="all").to_json()

    def load_json() -> None:
        target.load_snapshot(Snapshot.from_json(text))

    def save_dict() -> None:
        json.dumps(agent.take_snapshot(preset="all").to_dict())

    def load_dict() -> None:
        target.load_snapshot(Snapshot.from_dict(json.loads(dict_text)))

    for save, load in ((save_json, load_json), (save_dict, load_dict)):
        save()
        target.load_snapshot(Snapshot.from_json('{"schema_version": 1, "scope": "agent", "data": {"messages": []}}'))
        load()
        assert len(target.messages) == size
    return {
        "save_ms": _median_ms(save_json, repeats),
        "load_ms": _median_ms(load_json, repeats),
        "dict_save_ms": _median_ms(save_dict, repeats),
        "dict_load_ms": _median_ms(load_dict, repeats),
        "json_bytes": float(len(text.encode())),
    }


def main(sizes: Sequence[int] = DEFAULT_SIZES, repeats: int | None = None) -> list[dict[str, float]]:
    """Run the benchmark for ``sizes``, print a table and return the rows."""
    rows = []
    print(f"{'':>19}{'--------- JSON path ----------':>32} {'--------- dict path ----------':>32}")
    print(
        f"{'messages':>9} {'JSON KiB':>9} {'save ms':>9} {'load ms':>9} {'round us/msg':>13}"
        f" {'save ms':>9} {'load ms':>9} {'round us/msg':>13}"
    )
    for size in sizes:
        count = repeats if repeats is not None else max(5, min(200, 20_000 // max(size, 1)))
        row = {"messages": float(size), **measure(size, count)}
        rows.append(row)
        print(
            f"{size:>9} {row['json_bytes'] / 1024:>9.1f} {row['save_ms']:>9.3f} {row['load_ms']:>9.3f}"
            f" {(row['save_ms'] + row['load_ms']) * 1000 / size:>13.2f}"
            f" {row['dict_save_ms']:>9.3f} {row['dict_load_ms']:>9.3f}"
            f" {(row['dict_save_ms'] + row['dict_load_ms']) * 1000 / size:>13.2f}"
        )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated message counts")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per size (default: scaled to size)")
    args = parser.parse_args()
    main([int(part) for part in args.sizes.split(",")], args.repeats)
