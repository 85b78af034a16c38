"""Tether's side of ``bench/compare.py`` (runs from this repository, in its own environment).

- model: :class:`CountingModel`, a :class:`tether.Model` that streams the next ``add`` call (or
  the answer) decided from the last message only;
- tool: ``@tool def add(a, b)`` (the default path: a sync tool runs in a worker thread);
- conversation manager: ``NullConversationManager`` (keeps the whole history, like every peer);
- snapshot: ``take_snapshot(preset="session").to_json()`` / ``Snapshot.from_json`` +
  ``load_snapshot`` into a fresh agent (Tether's own JSON API: the text is the document);
- durable: ``Agent(store=SQLiteStore(path))`` and ``agent.invoke_async(prompt, run_id=...)``;
- durable-pg: one ``PostgresStore`` shared by every agent of the process, a fresh ``Agent`` per
  conversation and ``agent.invoke_async(prompt, run_id=...)``.

Run: ``python bench/peers/tether_adapter.py loop --sizes 20,200``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common

from tether import Agent, NullConversationManager, Snapshot, tool
from tether.types import Message, ModelRequest, StreamEvent


class CountingModel:
    """Calls ``add`` until its result reaches ``cycles``, then answers (see ``_common.next_call``)."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles

    @property
    def model_id(self) -> str:
        return "bench-counting"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        action = _common.next_call(_last_result(request["messages"][-1]), self.cycles)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(action, str):
            yield {"contentBlockDelta": {"delta": {"text": action}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            a, b = action
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"call_{a}", "name": "add"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"a": a, "b": b})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}}


def _last_result(message: Message) -> int | None:
    for block in message["content"]:
        if "toolResult" in block:
            content = block["toolResult"]["content"][0]
            return int(content["json"] if "json" in content else content["text"])  # type: ignore[typeddict-item]
    return None


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return _common.add(a, b)


def make_agent(cycles: int, **kwargs: Any) -> Agent:
    """A fresh agent that runs ``cycles`` tool cycles, then answers."""
    return Agent(model=CountingModel(cycles), tools=[add], conversation_manager=NullConversationManager(), **kwargs)


def loop_case(cycles: int) -> Callable[[], Any]:
    agent = make_agent(cycles)

    async def run() -> str:
        return str(await agent.invoke_async(_common.PROMPT))

    return run


def to_messages(turns: list[_common.Turn]) -> list[Message]:
    """The benchmark conversation as Tether (Converse-shaped) messages."""
    messages: list[Any] = []
    for turn in turns:
        if turn.kind == "user":
            messages.append({"role": "user", "content": [{"text": turn.text}]})
        elif turn.kind == "assistant_call":
            messages.append(
                {
                    "role": "assistant",
                    "content": [{"text": turn.text}, {"toolUse": {"toolUseId": turn.call_id, "name": "weather", "input": turn.args}}],
                }
            )
        else:
            messages.append(
                {
                    "role": "user",
                    "content": [{"toolResult": {"toolUseId": turn.call_id, "status": "success", "content": [{"json": turn.result}]}}],
                }
            )
    return messages


SNAPSHOT_API = 'take_snapshot(preset="session").to_json(); Snapshot.from_json + load_snapshot'


def snapshot_case(turns: list[_common.Turn]) -> _common.SnapshotCase:
    agent = Agent(messages=to_messages(turns), conversation_manager=NullConversationManager())
    target = Agent(conversation_manager=NullConversationManager())

    def save() -> str:
        return agent.take_snapshot(preset="session").to_json()

    def load(document: str | bytes) -> int:
        target.load_snapshot(Snapshot.from_json(document))
        return len(target.messages)

    return _common.SnapshotCase(save, load, SNAPSHOT_API)


def durable_case(cycles: int, where: str | None) -> _common.DurableCase:
    if where is None:
        agent = make_agent(cycles)
        path = ""
    else:
        from tether.durable import SQLiteStore

        path = os.path.join(where, "runs.db")
        agent = make_agent(cycles, store=SQLiteStore(path))

    async def run() -> str:
        if where is None:
            return str(await agent.invoke_async(_common.PROMPT))
        return str(await agent.invoke_async(_common.PROMPT, run_id="bench-run"))

    return _common.DurableCase(run, where or "", "SQLiteStore(path) + invoke_async(prompt, run_id=...)")


def concurrent_case(agents: int, cycles: int) -> Callable[[], Any]:
    async def run() -> list[str]:
        built = [make_agent(cycles) for _ in range(agents)]
        results = await asyncio.gather(*(agent.invoke_async(_common.PROMPT) for agent in built))
        return [str(result) for result in results]

    return run


async def durable_pg_rig(server: _common.PgServer, dbname: str) -> _common.DurablePgRig:
    from tether.durable import PostgresStore

    store = PostgresStore(server.conninfo(dbname))

    async def run(cycles: int, key: str) -> str:
        return str(await make_agent(cycles, store=store).invoke_async(_common.PROMPT, run_id=key))

    async def plain(cycles: int) -> str:
        return str(await make_agent(cycles).invoke_async(_common.PROMPT))

    return _common.DurablePgRig(
        run, plain, store.close, "one shared PostgresStore(conninfo); Agent(store=...).invoke_async(prompt, run_id=...)"
    )


def versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("tether", "pydantic")}


ADAPTER = _common.Adapter(
    name="tether",
    versions=versions,
    loop=loop_case,
    snapshot=snapshot_case,
    durable=durable_case,
    concurrent=concurrent_case,
    durable_pg=durable_pg_rig,
    notes={
        "model": "custom tether Model (CountingModel): streams the next add call from the last message",
        "tool": "@tool sync def add (default: runs via asyncio.to_thread)",
        "snapshot": SNAPSHOT_API,
        "durable": "tether.durable.SQLiteStore + invoke_async(prompt, run_id=...)",
        "durable-pg": "one shared tether.durable.PostgresStore; a fresh Agent(store=store) per conversation, invoke_async(run_id=...)",
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
