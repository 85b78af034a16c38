"""A durable parent run with two parallel child agent runs, killed at a chosen point.

Usage: ``python -m tests.multiagent.nested_worker DB LOG COUNTER KILL_AT``. Every kill point
(a child tool before and after its side effect, every message either agent adds — after the
store wrote it) adds one to the number in COUNTER; the one that reaches KILL_AT appends
``kill <label>`` to LOG and SIGKILLs this process (0: never). Side effects append ``effect
<idempotency key>`` and model calls ``model <who> <position>`` to LOG. The worker starts run
``lead`` or resumes it, then prints the parent's answer.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from tests._append import append
from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.hooks import MessageAdded
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext
from tether.types import Message


class Killer:
    """Counts kill points in a file (across processes) and kills at the chosen one."""

    def __init__(self, log: str, counter: str, kill_at: int) -> None:
        self.log, self.counter, self.kill_at = log, counter, kill_at

    def tick(self, label: str) -> None:
        path = Path(self.counter)
        count = int(path.read_text() or 0) + 1 if path.exists() else 1
        path.write_text(str(count))
        if count == self.kill_at:
            append(self.log, f"kill {label}")
            os.kill(os.getpid(), signal.SIGKILL)


def texts(messages: list[Message]) -> list[str]:
    return [str(b["toolResult"]["content"][0].get("text")) for m in messages for b in m["content"] if "toolResult" in b]


def build(db: str, log: str, killer: Killer) -> Agent:
    @tool
    async def step(n: int, context: ToolContext) -> str:
        """One step of research with a side effect."""
        key = context.idempotency_key
        killer.tick(f"before-effect {key}")
        append(log, f"effect {key}")
        killer.tick(f"after-effect {key}")
        return f"r{n}"

    def child_model(n: int) -> Any:
        def reply(messages: list[Message]) -> Any:
            topic = next(b["text"] for b in messages[0]["content"] if "text" in b)
            append(log, f"model child {topic} {n}")
            if n < 3:
                return tool_call("step", {"n": n}, tool_use_id=f"s{n}")
            return f"{topic}=" + "+".join(texts(messages))

        return reply

    def parent_first(messages: list[Message]) -> Any:
        append(log, "model parent 1")
        uses = [{"toolUse": {"toolUseId": f"p{t}", "name": "researcher", "input": {"input": t}}} for t in ("alpha", "beta")]
        return {"role": "assistant", "content": uses}

    def parent_last(messages: list[Message]) -> str:
        append(log, "model parent 2")
        return "final: " + ", ".join(texts(messages))

    def on_message(who: str) -> Any:
        def hook(event: MessageAdded) -> None:
            killer.tick(f"message {who}")

        return hook

    child = Agent(
        model=ScriptedModel([child_model(1), child_model(2), child_model(3)], stateful=True),
        tools=[step],
        hooks=[on_message("child")],
        name="researcher",
        description="Researches one topic.",
    )
    return Agent(
        model=ScriptedModel([parent_first, parent_last], stateful=True),
        tools=[child],
        hooks=[on_message("parent")],
        name="lead",
        store=SQLiteStore(db),
    )


def main() -> None:
    db, log, counter, kill_at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    agent = build(db, log, Killer(log, counter, kill_at))
    store = agent.store
    assert store is not None
    result = agent.resume("lead") if store.head("lead") is not None else agent("research two topics", run_id="lead")
    print(str(result))


if __name__ == "__main__":
    main()
