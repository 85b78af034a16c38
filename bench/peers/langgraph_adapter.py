"""LangGraph's side of ``bench/compare.py`` (runs in its own virtual environment).

- model: :class:`CountingChatModel`, a LangChain ``BaseChatModel`` whose ``_agenerate`` returns
  an ``AIMessage`` with the next ``add`` tool call (or the answer), decided from the last
  message only; ``bind_tools`` returns the model itself;
- agent: ``langgraph.prebuilt.create_react_agent(model, [add])`` (model node + ``ToolNode``),
  ``recursion_limit`` set to 10,000,000 so a long run is never cut by the step limit;
- tool: ``@langchain_core.tools.tool def add(a, b)`` (sync: run in a worker thread by ``ainvoke``);
- snapshot: the checkpointer's serializer (``JsonPlusSerializer.dumps_typed`` /
  ``loads_typed``), which is what every LangGraph checkpointer does with the graph state;
- durable: ``SqliteSaver(sqlite3.connect(path))`` as the graph's checkpointer, one
  ``thread_id``; ``SqliteSaver`` is sync-only, so this scenario calls ``graph.invoke`` (with
  and without the checkpointer alike);
- durable-pg: ``AsyncPostgresSaver`` (one connection, shared by every conversation, like one
  shared store) as the checkpointer, ``graph.ainvoke(..., durability="sync")`` (each checkpoint
  written before the next step runs), one ``thread_id`` per conversation.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _common
from contract_common import installed
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

RECURSION_LIMIT = 10_000_000


class CountingChatModel(BaseChatModel):
    """Calls ``add`` until its result reaches ``cycles``, then answers."""

    cycles: int

    @property
    def _llm_type(self) -> str:
        return "bench-counting"

    def _respond(self, messages: list[BaseMessage]) -> ChatResult:
        last = messages[-1]
        action = _common.next_call(int(last.content) if isinstance(last, ToolMessage) else None, self.cycles)  # type: ignore[arg-type]
        if isinstance(action, str):
            message = AIMessage(content=action)
        else:
            a, b = action
            message = AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": a, "b": b}, "id": f"call_{a}", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return self._respond(messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return self._respond(messages)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return _common.add(a, b)


def make_graph(cycles: int, checkpointer: Any = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(CountingChatModel(cycles=cycles), [add], checkpointer=checkpointer)


def _final(state: dict[str, Any]) -> str:
    return str(state["messages"][-1].content)


def loop_case(cycles: int) -> Callable[[], Any]:
    graph = make_graph(cycles)
    config = {"recursion_limit": RECURSION_LIMIT}

    async def run() -> str:
        return _final(await graph.ainvoke({"messages": [HumanMessage(_common.PROMPT)]}, config))

    return run


def to_messages(turns: list[_common.Turn]) -> list[BaseMessage]:
    """The benchmark conversation as LangChain messages."""
    messages: list[BaseMessage] = []
    for turn in turns:
        if turn.kind == "user":
            messages.append(HumanMessage(turn.text))
        elif turn.kind == "assistant_call":
            messages.append(
                AIMessage(content=turn.text, tool_calls=[{"name": "weather", "args": turn.args, "id": turn.call_id, "type": "tool_call"}])
            )
        else:
            messages.append(ToolMessage(content=json.dumps(turn.result), tool_call_id=turn.call_id))
    return messages


def snapshot_case(turns: list[_common.Turn]) -> _common.SnapshotCase:
    from langgraph.checkpoint.memory import InMemorySaver

    serde = InMemorySaver().serde  # the checkpointers' default serializer (JsonPlusSerializer)
    state = {"messages": to_messages(turns)}
    kind = serde.dumps_typed(state)[0]

    def save() -> bytes:
        return serde.dumps_typed(state)[1]

    def load(document: str | bytes) -> int:
        return len(serde.loads_typed((kind, document))["messages"])  # type: ignore[arg-type]

    return _common.SnapshotCase(save, load, f"checkpointer serde: JsonPlusSerializer.dumps_typed/loads_typed ({kind}) of the graph state")


def durable_case(cycles: int, where: str | None) -> _common.DurableCase:
    config: dict[str, Any] = {"recursion_limit": RECURSION_LIMIT}
    if where is None:
        graph = make_graph(cycles)
        history: list[BaseMessage] = []

        def plain_turn() -> str:
            # No checkpointer: the caller carries the conversation, as a LangGraph app must.
            nonlocal history
            state = graph.invoke({"messages": [*history, HumanMessage(_common.PROMPT)]}, config)
            history = state["messages"]
            return _final(state)

        return _common.DurableCase(plain_turn, "", "")

    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path = os.path.join(where, "checkpoints.db")
    graph = make_graph(cycles, SqliteSaver(sqlite3.connect(path, check_same_thread=False)))
    config["configurable"] = {"thread_id": "bench-run"}

    def turn() -> str:
        return _final(graph.invoke({"messages": [HumanMessage(_common.PROMPT)]}, config))

    return _common.DurableCase(turn, where, "SqliteSaver(sqlite3.connect(path)) checkpointer + graph.invoke(thread_id)")


async def durable_pg_rig(server: _common.PgServer, dbname: str) -> _common.DurablePgRig:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    manager = AsyncPostgresSaver.from_conn_string(server.conninfo(dbname))
    saver = await manager.__aenter__()
    await saver.setup()

    async def run(cycles: int, key: str) -> str:
        config = {"recursion_limit": RECURSION_LIMIT, "configurable": {"thread_id": key}}
        graph = make_graph(cycles, saver)
        return _final(await graph.ainvoke({"messages": [HumanMessage(_common.PROMPT)]}, config, durability="sync"))

    async def plain(cycles: int) -> str:
        return _final(await make_graph(cycles).ainvoke({"messages": [HumanMessage(_common.PROMPT)]}, {"recursion_limit": RECURSION_LIMIT}))

    async def close() -> None:
        await manager.__aexit__(None, None, None)

    return _common.DurablePgRig(run, plain, close, 'AsyncPostgresSaver.from_conn_string (one connection); ainvoke(durability="sync")')


def concurrent_case(agents: int, cycles: int) -> Callable[[], Any]:
    async def run() -> list[str]:
        graph = make_graph(cycles)  # one compiled graph serves every conversation
        config = {"recursion_limit": RECURSION_LIMIT}
        states = await _common.gather([lambda: graph.ainvoke({"messages": [HumanMessage(_common.PROMPT)]}, config)] * agents)
        return [_final(state) for state in states]

    return run


def versions() -> dict[str, str]:
    names = (
        "langgraph",
        "langgraph-checkpoint",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
        "langgraph-prebuilt",
        "langchain-core",
        "pydantic",
    )
    return installed(*names)


ADAPTER = _common.Adapter(
    name="langgraph",
    versions=versions,
    loop=loop_case,
    snapshot=snapshot_case,
    durable=durable_case,
    concurrent=concurrent_case,
    durable_pg=durable_pg_rig,
    notes={
        "model": "BaseChatModel subclass (_agenerate returns the next add tool call), bind_tools returns self",
        "agent": f"langgraph.prebuilt.create_react_agent, recursion_limit={RECURSION_LIMIT}",
        "tool": "@langchain_core.tools.tool sync def add (ToolNode runs it in a worker thread)",
        "snapshot": "checkpointer serde (JsonPlusSerializer.dumps_typed / loads_typed) of {'messages': [...]}",
        "durable": "SqliteSaver checkpointer, sync graph.invoke (SqliteSaver has no async API); baseline: no checkpointer",
        "concurrent": "one compiled graph, N concurrent graph.ainvoke calls",
        "durable-pg": 'AsyncPostgresSaver (one connection shared by every conversation), ainvoke(durability="sync")',
    },
)

if __name__ == "__main__":
    _common.main(ADAPTER)
