"""OpenAI Agents SDK's side of ``bench/compare.py`` (``openai-agents``, in its own environment).

- model: :class:`CountingModel`, an ``agents.Model`` subclass whose ``get_response`` returns a
  ``ModelResponse`` with the next ``add`` function call (or an output message), decided from
  the last input item only;
- agent: ``Agent(name, model=..., tools=[add])``, ``Runner.run(max_turns=10,000,000)``; tracing
  disabled (no exporter, no network);
- tool: ``@function_tool def add(a, b)`` (sync);
- snapshot: ``RunResult.to_state().to_json()`` + ``json.dumps`` / ``json.loads`` +
  ``RunState.from_json`` (the SDK's resumable run state; it also holds the conversation);
- durable: ``SQLiteSession(session_id, db_path)`` passed to ``Runner.run(session=...)``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("OPENAI_API_KEY", "sk-unused-bench")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.memory import SessionABC
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

set_tracing_disabled(True)
MAX_TURNS = 10_000_000
RUN_CONFIG = RunConfig(tracing_disabled=True)


class CountingModel(Model):
    """Calls ``add`` until its result reaches ``cycles``, then answers."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        last = input[-1] if isinstance(input, list) and input else None
        output = last.get("output") if isinstance(last, dict) and last.get("type") == "function_call_output" else None
        result = int(output) if isinstance(output, str) and output.isdigit() else None
        action = _common.next_call(result, self.cycles)
        item: Any
        if isinstance(action, str):
            item = ResponseOutputMessage(
                id=f"msg_{result}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=action, annotations=[])],
            )
        else:
            a, b = action
            item = ResponseFunctionToolCall(
                type="function_call",
                id=f"fc_{a}",
                call_id=f"call_{a}",
                name="add",
                arguments=json.dumps({"a": a, "b": b}),
                status="completed",
            )
        return ModelResponse(output=[item], usage=Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark only runs non-streamed")


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return _common.add(a, b)


def make_agent(cycles: int) -> Agent[Any]:
    return Agent(name="bench", instructions="Add.", model=CountingModel(cycles), tools=[add])


async def _run(agent: Agent[Any], input: Any = _common.PROMPT, **kwargs: Any) -> str:
    result = await Runner.run(agent, input, max_turns=MAX_TURNS, run_config=RUN_CONFIG, **kwargs)
    return str(result.final_output)


def loop_case(cycles: int) -> Callable[[], Any]:
    agent = make_agent(cycles)

    async def run() -> str:
        return await _run(agent)

    return run


def to_items(turns: list[_common.Turn]) -> list[Any]:
    """The benchmark conversation as Responses input items (a text+call turn is two items)."""
    items: list[Any] = []
    for turn in turns:
        if turn.kind == "user":
            items.append({"role": "user", "content": turn.text})
        elif turn.kind == "assistant_call":
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{turn.index}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
                }
            )
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{turn.index}",
                    "call_id": turn.call_id,
                    "name": "weather",
                    "arguments": json.dumps(turn.args),
                    "status": "completed",
                }
            )
        else:
            items.append({"type": "function_call_output", "call_id": turn.call_id, "output": json.dumps(turn.result)})
    return items


def snapshot_case(turns: list[_common.Turn]) -> _common.SnapshotCase:
    from agents import RunState

    # A finished run over the conversation (all but its last message; the model's answer is
    # the last), whose resumable RunState is what the SDK serializes.
    items = to_items(turns[:-1])
    agent = make_agent(0)
    result = asyncio.run(Runner.run(agent, items, max_turns=MAX_TURNS, run_config=RUN_CONFIG))
    expected = len(result.to_input_list())
    loop = asyncio.new_event_loop()  # from_json is async: one loop for every load

    def save() -> str:
        return json.dumps(result.to_state().to_json())

    def load(document: str | bytes) -> int:
        restored = loop.run_until_complete(RunState.from_json(agent, json.loads(document)))
        count = len(restored.to_input_list()) if hasattr(restored, "to_input_list") else expected
        return len(turns) if count == expected else -count

    return _common.SnapshotCase(save, load, "RunResult.to_state().to_json() + json.dumps; json.loads + RunState.from_json")


class ListSession(SessionABC):
    """An in-memory session (a Python list): the baseline, so only the store's cost differs."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.items: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return list(self.items if limit is None else self.items[-limit:])

    async def add_items(self, items: list[Any]) -> None:
        self.items.extend(items)

    async def pop_item(self) -> Any:
        return self.items.pop() if self.items else None

    async def clear_session(self) -> None:
        self.items.clear()


def durable_case(cycles: int, where: str | None) -> _common.DurableCase:
    from agents import SQLiteSession

    agent = make_agent(cycles)
    session: SessionABC = ListSession("bench-run") if where is None else SQLiteSession("bench-run", os.path.join(where, "sessions.db"))

    async def turn() -> str:
        return await _run(agent, session=session)

    return _common.DurableCase(turn, where or "", "SQLiteSession(session_id, db_path) + Runner.run(session=...)")


def concurrent_case(agents: int, cycles: int) -> Callable[[], Any]:
    async def run() -> list[str]:
        agent = make_agent(cycles)  # agents are stateless: one serves every conversation
        return await _common.gather([lambda: _run(agent)] * agents)

    return run


def versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("openai-agents", "openai", "pydantic")}


ADAPTER = _common.Adapter(
    name="openai-agents",
    versions=versions,
    loop=loop_case,
    snapshot=snapshot_case,
    durable=durable_case,
    concurrent=concurrent_case,
    notes={
        "model": "agents.Model subclass (get_response returns the next add function call from the last input item)",
        "agent": f"Agent(model=..., tools=[add]); Runner.run(max_turns={MAX_TURNS}); tracing disabled",
        "tool": "@function_tool sync def add",
        "snapshot": "RunResult.to_state().to_json() + json.dumps; json.loads + RunState.from_json (async: run on one event loop)",
        "durable": "SQLiteSession(session_id, db_path); baseline: an in-memory list Session",
        "concurrent": "one Agent, N concurrent Runner.run calls",
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
