"""The graph LangGraph's Agent Server serves in ``bench/serve_langgraph.py``: a scripted
zero-latency model (no network, no key) and one tool, ``$TETHER_BENCH_SERVE_CYCLES`` tool cycles
(default 5), then an answer; the same work as ``bench/serve.py``'s ``ticker`` agent.

Runs only in the peer's own environment (``langgraph-api`` + ``langgraph-runtime-inmem``);
``langgraph.json`` in the server's working directory points at ``graph`` here.
"""

from __future__ import annotations

import os
import time
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode

CYCLES = int(os.environ.get("TETHER_BENCH_SERVE_CYCLES", "5"))


@tool
def tick(n: int) -> str:
    """Return the time the call happened (seconds since the epoch)."""
    return repr(time.time())


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def model(state: State) -> dict[str, Any]:
    """The scripted model: a ``tick`` call per cycle until CYCLES tool results, then ``done``."""
    done = sum(isinstance(m, ToolMessage) for m in state["messages"])
    if done >= CYCLES:
        return {"messages": [AIMessage(content="done")]}
    return {"messages": [AIMessage(content="", tool_calls=[{"name": "tick", "args": {"n": done}, "id": f"call-{done}"}])]}


def route(state: State) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


builder = StateGraph(State)
builder.add_node("model", model)
builder.add_node("tools", ToolNode([tick]))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", route, {"tools": "tools", END: END})
builder.add_edge("tools", "model")
graph = builder.compile()
