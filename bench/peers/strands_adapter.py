"""Strands Agents' side of ``bench/compare.py`` (runs in its own virtual environment).

- model: :class:`CountingModel`, a ``strands.models.Model`` subclass streaming Converse events
  for the next ``add`` call (or the answer), decided from the last message only;
- tool: ``@strands.tool def add(a, b)`` (sync: Strands runs it in a worker thread);
- agent: ``callback_handler=None`` (no printing), ``NullConversationManager`` (whole history);
- snapshot: ``Agent.take_snapshot(preset="session").to_dict()`` + ``json.dumps`` /
  ``json.loads`` + ``Snapshot.from_dict`` + ``load_snapshot`` (present since Strands 1.x);
- durable: ``FileSessionManager(session_id, storage_dir)`` (one JSON file per message).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncGenerator, Callable
from importlib import metadata
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common
from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model


class CountingModel(Model):
    """Calls ``add`` until its result reaches ``cycles``, then answers."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"model_id": "bench-counting"}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark model has no structured output")

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        action = _common.next_call(_last_result(messages[-1]), self.cycles)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(action, str):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": action}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            a, b = action
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"call_{a}", "name": "add"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"a": a, "b": b})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}


def _last_result(message: Any) -> int | None:
    for block in message["content"]:
        if "toolResult" in block:
            content = block["toolResult"]["content"][0]
            return int(content["json"] if "json" in content else content["text"])
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
    return Agent(
        model=CountingModel(cycles),
        tools=[add],
        callback_handler=None,
        conversation_manager=NullConversationManager(),
        **kwargs,
    )


def loop_case(cycles: int) -> Callable[[], Any]:
    agent = make_agent(cycles)

    async def run() -> str:
        return str(await agent.invoke_async(_common.PROMPT))

    return run


def to_messages(turns: list[_common.Turn]) -> list[Any]:
    """The benchmark conversation as Strands (Bedrock Converse) messages."""
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


def snapshot_case(turns: list[_common.Turn]) -> _common.SnapshotCase:
    from strands.types._snapshot import Snapshot

    agent = Agent(messages=to_messages(turns), callback_handler=None, conversation_manager=NullConversationManager())
    target = Agent(callback_handler=None, conversation_manager=NullConversationManager())

    def save() -> str:
        return json.dumps(agent.take_snapshot(preset="session").to_dict())

    def load(document: str | bytes) -> int:
        target.load_snapshot(Snapshot.from_dict(json.loads(document)))
        return len(target.messages)

    return _common.SnapshotCase(
        save, load, 'take_snapshot(preset="session").to_dict() + json.dumps; json.loads + Snapshot.from_dict + load_snapshot'
    )


def durable_case(cycles: int, where: str | None) -> _common.DurableCase:
    if where is None:
        agent = make_agent(cycles)
    else:
        from strands.session.file_session_manager import FileSessionManager

        agent = make_agent(cycles, session_manager=FileSessionManager(session_id="bench-run", storage_dir=where))

    async def run() -> str:
        return str(await agent.invoke_async(_common.PROMPT))

    return _common.DurableCase(run, where or "", "FileSessionManager(session_id, storage_dir)")


def concurrent_case(agents: int, cycles: int) -> Callable[[], Any]:
    async def run() -> list[str]:
        built = [make_agent(cycles) for _ in range(agents)]
        results = await asyncio.gather(*(agent.invoke_async(_common.PROMPT) for agent in built))
        return [str(result) for result in results]

    return run


def versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("strands-agents", "pydantic")}


ADAPTER = _common.Adapter(
    name="strands",
    versions=versions,
    loop=loop_case,
    snapshot=snapshot_case,
    durable=durable_case,
    concurrent=concurrent_case,
    notes={
        "model": "strands.models.Model subclass streaming Converse events for the next add call",
        "tool": "@strands.tool sync def add (runs in a worker thread)",
        "snapshot": "Agent.take_snapshot(preset='session').to_dict() + json.dumps; json.loads + Snapshot.from_dict + load_snapshot",
        "durable": "strands.session.FileSessionManager (a JSON file per message)",
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
