"""Pydantic AI's side of ``bench/compare.py`` (``pydantic-ai-slim``, in its own virtual environment).

- model: ``FunctionModel(respond)``, where the async ``respond`` returns a ``ModelResponse`` with the next
  ``add`` ``ToolCallPart`` (or a ``TextPart`` answer), decided from the last message only;
- agent: ``Agent(model, tools=[add])``, run with ``UsageLimits(request_limit=None)`` (the default
  limit is 50 requests);
- tool: a plain sync ``def add(a, b)`` (Pydantic AI runs sync tools in a worker thread);
- snapshot: ``ModelMessagesTypeAdapter.dump_json`` / ``validate_json`` of the message history
  (Pydantic AI's documented way to store and restore a conversation);
- durable: none built in (its durable execution is via Temporal/DBOS/Prefect integrations);
- durable-pg: ``pydantic_ai.durable_exec.dbos.DBOSAgent(agent)`` with DBOS's system database on
  the benchmark database (each model request and tool call a DBOS step), each conversation under
  ``SetWorkflowID(key)``. One ``DBOSAgent`` serves every conversation, so its model reads the
  cycle count from the prompt (the first message: O(1)).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common
from contract_common import installed
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

LIMITS = UsageLimits(request_limit=None, tool_calls_limit=None)


def make_model(cycles: int) -> FunctionModel:
    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # async: a sync function would be run in a worker thread; usage set: FunctionModel
        # would otherwise estimate it by scanning the whole history (O(n) per call).
        result = None
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                result = part.content
        action = _common.next_call(result, cycles)
        if isinstance(action, str):
            return ModelResponse(parts=[TextPart(action)], usage=RequestUsage(input_tokens=10, output_tokens=5))
        a, b = action
        return ModelResponse(
            parts=[ToolCallPart("add", {"a": a, "b": b}, tool_call_id=f"call_{a}")], usage=RequestUsage(input_tokens=10, output_tokens=5)
        )

    return FunctionModel(respond)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return _common.add(a, b)


def make_agent(cycles: int) -> Agent[None, str]:
    return Agent(make_model(cycles), tools=[add])


def loop_case(cycles: int) -> Callable[[], Any]:
    agent = make_agent(cycles)

    async def run() -> str:
        return (await agent.run(_common.PROMPT, usage_limits=LIMITS)).output

    return run


def to_messages(turns: list[_common.Turn]) -> list[ModelMessage]:
    """The benchmark conversation as Pydantic AI messages."""
    messages: list[ModelMessage] = []
    for turn in turns:
        if turn.kind == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(turn.text)]))
        elif turn.kind == "assistant_call":
            messages.append(ModelResponse(parts=[TextPart(turn.text), ToolCallPart("weather", turn.args, tool_call_id=turn.call_id)]))
        else:
            messages.append(ModelRequest(parts=[ToolReturnPart("weather", turn.result, tool_call_id=turn.call_id)]))
    return messages


def snapshot_case(turns: list[_common.Turn]) -> _common.SnapshotCase:
    messages = to_messages(turns)

    def save() -> bytes:
        return ModelMessagesTypeAdapter.dump_json(messages)

    def load(document: str | bytes) -> int:
        return len(ModelMessagesTypeAdapter.validate_json(document))

    return _common.SnapshotCase(save, load, "ModelMessagesTypeAdapter.dump_json / validate_json")


def _prompt(cycles: int) -> str:
    return f"{_common.PROMPT} [{cycles}]"


def make_prompt_model() -> FunctionModel:
    """The counting model taking its cycle count from the conversation's first prompt."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        first = messages[0].parts[-1]
        cycles = int(str(first.content).rsplit("[", 1)[1].rstrip("]")) if isinstance(first, UserPromptPart) else 0
        result = None
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                result = part.content
        action = _common.next_call(result, cycles)
        usage = RequestUsage(input_tokens=10, output_tokens=5)
        if isinstance(action, str):
            return ModelResponse(parts=[TextPart(action)], usage=usage)
        a, b = action
        return ModelResponse(parts=[ToolCallPart("add", {"a": a, "b": b}, tool_call_id=f"call_{a}")], usage=usage)

    return FunctionModel(respond)


async def durable_pg_rig(server: _common.PgServer, dbname: str) -> _common.DurablePgRig:
    from dbos import DBOS, SetWorkflowID
    from pydantic_ai.durable_exec.dbos import DBOSAgent

    agent: Agent[None, str] = Agent(make_prompt_model(), tools=[add], name="bench")
    durable = DBOSAgent(agent)
    DBOS(config={"name": "tether-bench", "system_database_url": server.url(dbname)})
    DBOS.launch()

    async def run(cycles: int, key: str) -> str:
        with SetWorkflowID(key):
            return (await durable.run(_prompt(cycles), usage_limits=LIMITS)).output

    async def plain(cycles: int) -> str:
        return (await agent.run(_prompt(cycles), usage_limits=LIMITS)).output

    def close() -> None:
        DBOS.destroy(destroy_registry=True)

    return _common.DurablePgRig(run, plain, close, "DBOSAgent(Agent(model, tools=[add])) on DBOS's system database; SetWorkflowID(key)")


def concurrent_case(agents: int, cycles: int) -> Callable[[], Any]:
    async def run() -> list[str]:
        agent = make_agent(cycles)  # agents are stateless: one serves every conversation
        results = await _common.gather([lambda: agent.run(_common.PROMPT, usage_limits=LIMITS)] * agents)
        return [result.output for result in results]

    return run


def versions() -> dict[str, str]:
    return installed("pydantic-ai-slim", "pydantic-graph", "pydantic", "dbos")


ADAPTER = _common.Adapter(
    name="pydantic-ai",
    versions=versions,
    loop=loop_case,
    snapshot=snapshot_case,
    durable=None,
    concurrent=concurrent_case,
    durable_pg=durable_pg_rig,
    notes={
        "model": "FunctionModel (async function, usage given) returning the next add ToolCallPart from the last message",
        "agent": "Agent(model, tools=[add]); run(usage_limits=UsageLimits(request_limit=None))",
        "tool": "plain sync def add (run in a worker thread)",
        "snapshot": "ModelMessagesTypeAdapter.dump_json / validate_json",
        "durable": "no built-in store (durable execution is via Temporal/DBOS/Prefect integrations)",
        "concurrent": "one Agent, N concurrent agent.run calls",
        "durable-pg": "pydantic_ai.durable_exec.dbos.DBOSAgent; DBOS system database on the benchmark database",
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
