"""Shared pieces of the durable tests: a crash signal, a side-effect log, agent builders."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.durable import RunStore
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext
from tether.tools.executors import SequentialToolExecutor
from tether.types import Message


class Crash(BaseException):
    """Stands for the process dying at this point (nothing in the loop catches it)."""


class Plan:
    """Where to crash: ``crash_at`` maps a point name to how many times it is passed first."""

    def __init__(self, **crash_at: int) -> None:
        self.crash_at = dict(crash_at)
        self.log: list[str] = []

    def point(self, name: str) -> None:
        left = self.crash_at.get(name)
        if left is None:
            return
        if left == 0:
            del self.crash_at[name]
            raise Crash(name)
        self.crash_at[name] = left - 1


def script() -> list[Any]:
    return [
        tool_call("work", {"n": 1}),
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "a", "name": "work", "input": {"n": 2}}},
                {"toolUse": {"toolUseId": "b", "name": "work", "input": {"n": 3}}},
            ],
        },
        "done",
    ]


def make_agent(store: RunStore, plan: Plan, **kwargs: Any) -> Agent:
    """An agent whose ``work`` tool logs its idempotency key and can crash before/after the effect."""

    @tool
    def work(n: int, ctx: ToolContext) -> str:
        """Do work n."""
        plan.point("tool_before_effect")
        plan.log.append(ctx.idempotency_key)
        plan.point("tool_after_effect")
        return f"worked {n}"

    class CrashingModel(ScriptedModel):
        async def stream(self, request: Any) -> Any:
            plan.point("model")
            async for event in super().stream(request):
                yield event

    return Agent(
        model=CrashingModel(script(), stateful=True),
        tools=[work],
        store=store,
        tool_executor=SequentialToolExecutor(),
        **kwargs,
    )


def head_row(next_seq: int, cycle: int = 0, rev: int = 1, phase: str = "model") -> dict[str, Any]:
    """A minimal valid head row for raw store writes (tests of the row codec)."""
    return {
        "schema_version": 1,
        "rev": rev,
        "start_seq": 0,
        "next_seq": next_seq,
        "cursor": {"phase": phase, "cycle_index": cycle},
        "metrics": {},
        "state": {},
    }


def user_row(text: str) -> Message:
    """A user message with one text block."""
    return {"role": "user", "content": [{"text": text}]}


def calls_row(*ids: str) -> Message:
    """An assistant message calling ``work`` once per id."""
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": i, "name": "work", "input": {}}} for i in ids]}  # type: ignore[misc]


def open_files(path: Path) -> int:
    """How many descriptors of this process are open on the database file."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:  # the directory's own descriptor, closed since listed
            pass
    return count
