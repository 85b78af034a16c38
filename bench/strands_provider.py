"""The Strands provider's durable cost: a real strands-agents agent, one tool per cycle, on SQLite.

Run: ``python bench/strands_provider.py`` (``--cycles N``, ``--sizes 100,1000``, ``--repeats N``).

A conversation of N messages (loaded into the agent, and stored once before the clock starts)
gets ``--cycles`` more tool cycles (a model call asking for one tool, the tool, its result). Three
setups run the same program, interleaved round by round, and the median per-cycle time is taken:
no session manager; :class:`~tether.strands.session_manager.TetherSessionManager` on a SQLite file;
Strands' own ``FileSessionManager``. Printed: ms per cycle of each, the provider's and the file
manager's extra ms per cycle over none, and the bytes the provider wrote per message (row text
through the store's write path, ``RunStore.bytes_written``). Targets at 1,000 messages: provider
overhead <= 0.5 ms per cycle, flat in the conversation's length; <= 6 KiB written per message.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model
from strands.session.file_session_manager import FileSessionManager

from tether.strands.session_manager import TetherSessionManager


@tool
def echo(text: str) -> str:
    """Echo a text.

    Args:
        text: What to echo.
    """
    return text


class LoopModel(Model):
    """Asks for one ``echo`` call per model call until ``cycles`` calls were made, then answers."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles
        self.calls = 0
        self.config: dict[str, Any] = {"model_id": "loop"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        self.calls += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.calls <= self.cycles:
            ident = f"tu-{len(messages)}"
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": ident, "name": "echo"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"text": f"step {self.calls} " + "x" * 200})}}}}
            yield {"contentBlockStop": {}}
            stop = "tool_use"
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            stop = "end_turn"
        yield {"messageStop": {"stopReason": stop}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield


def history(size: int) -> list[dict[str, Any]]:
    """``size`` messages of earlier tool cycles (about 400 bytes each)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "start " + "y" * 300}]}]
    while len(messages) < size:
        ident = f"old-{len(messages)}"
        messages.append({"role": "assistant", "content": [{"toolUse": {"toolUseId": ident, "name": "echo", "input": {"text": "z" * 300}}}]})
        messages.append(
            {"role": "user", "content": [{"toolResult": {"toolUseId": ident, "status": "success", "content": [{"text": "z" * 300}]}}]}
        )
    messages.append({"role": "assistant", "content": [{"text": "ok"}]})
    return messages[:size] if messages[size - 1]["role"] == "assistant" else messages[: size - 1] + [messages[-1]]


def one(setup: str, size: int, cycles: int, where: Path, n: int) -> tuple[float, float]:
    """Seconds per cycle of one run, and the provider's bytes written per new message (0 otherwise)."""
    manager: Any = None
    if setup == "tether":
        manager = TetherSessionManager(f"bench-{n}", store=where / "runs.db")
    elif setup == "file":
        manager = FileSessionManager(session_id=f"bench-{n}", storage_dir=str(where / "sessions"))
    agent = Agent(
        model=LoopModel(cycles),
        tools=[echo],
        messages=history(size),  # type: ignore[arg-type]
        callback_handler=None,
        session_manager=manager,
        conversation_manager=NullConversationManager(),  # the conversation keeps its N messages
    )
    written = manager.store.bytes_written if setup == "tether" else 0
    stored = manager.run_id(agent) if setup == "tether" else ""
    before = manager.store.head(stored)["next_seq"] if setup == "tether" else 0
    start = time.perf_counter()
    agent("go")
    elapsed = time.perf_counter() - start
    per_message = 0.0
    if setup == "tether":
        per_message = (manager.store.bytes_written - written) / (manager.store.head(stored)["next_seq"] - before)
        manager.close()
    return elapsed / cycles, per_message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"strands provider: {args.cycles} tool cycles on a conversation of N messages, median of {args.repeats} interleaved rounds")
    print(f"{'N':>6} {'none ms':>9} {'tether ms':>10} {'file ms':>9} {'tether +ms':>11} {'file +ms':>9} {'tether B/msg':>13}")
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            times: dict[str, list[float]] = {"none": [], "tether": [], "file": []}
            sizes: list[float] = []
            for _ in range(args.repeats):
                for setup in times:
                    n += 1
                    seconds, per_message = one(setup, size, args.cycles, Path(tmp), n)
                    times[setup].append(seconds * 1000)
                    if setup == "tether":
                        sizes.append(per_message)
            med = {setup: statistics.median(values) for setup, values in times.items()}
            print(
                f"{size:>6} {med['none']:>9.3f} {med['tether']:>10.3f} {med['file']:>9.3f} "
                f"{med['tether'] - med['none']:>11.3f} {med['file'] - med['none']:>9.3f} {statistics.median(sizes):>13.0f}"
            )


if __name__ == "__main__":
    main()
