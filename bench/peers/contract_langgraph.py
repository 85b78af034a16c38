"""LangGraph's side of ``bench/resume_contract.py`` (the probe protocol of ``contract_common``).

- agent: ``create_react_agent(model, [charge], checkpointer=..., state_schema=State)``; the model
  is a ``BaseChatModel`` that calls ``charge`` (call id ``CALL_ID``) and then answers;
- ``charge`` asks with ``langgraph.types.interrupt`` and fires the effect once answered;
- stores (``config["variant"]``): ``sqlite-sync`` / ``sqlite-async`` (``SqliteSaver``),
  ``postgres-sync`` / ``postgres-async`` (``PostgresSaver``), the graph run with
  ``durability="sync"`` or ``"async"``; every ``put`` and ``put_writes`` is a save point;
- resume: ``invoke(Command(resume=...))`` when an interrupt is pending, else ``invoke(None)``;
- fork: time travel, ``invoke(None, {"checkpoint_id": ...})`` from each checkpoint of the history;
- validity: ``update_state(config, {"note": value})`` on a ``note: str`` state field.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, NotRequired

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.types import Command, interrupt

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent
    from langgraph.prebuilt.chat_agent_executor import AgentState

PROBE = cc.Probe({})  # each action binds its own (cc.serve)


class State(AgentState):  # type: ignore[misc]
    note: NotRequired[str]


class ScriptedModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "contract-scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        PROBE.model_call(sum(isinstance(m, AIMessage) for m in messages))
        if isinstance(messages[-1], ToolMessage):
            message = AIMessage(content=cc.FINAL)
        else:
            message = AIMessage(
                content="", tool_calls=[{"name": "charge", "args": {"order": cc.ORDER}, "id": cc.CALL_ID, "type": "tool_call"}]
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def charge(order: str) -> str:
    """Charge an order once a person approves."""
    answer = interrupt({"question": cc.QUESTION, "order": order})
    PROBE.effect(order)
    PROBE.tool_done(cc.CALL_ID)
    return f"charged {order}: {answer}"


def _counted(base: type) -> type:
    """``base`` (a checkpoint saver class) with a save point after each ``put`` and ``put_writes``."""

    class Saver(base):  # type: ignore[misc,valid-type]
        def put(self, *a: Any, **k: Any) -> Any:
            out = super().put(*a, **k)
            PROBE.save_point()
            return out

        def put_writes(self, *a: Any, **k: Any) -> Any:
            out = super().put_writes(*a, **k)
            PROBE.save_point()
            return out

    return Saver


def _saver(cm_stack: list[Any]) -> Any:
    variant, store = PROBE.config["variant"], PROBE.config["store"]
    if variant.startswith("sqlite"):
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        return _counted(SqliteSaver)(sqlite3.connect(store, check_same_thread=False))
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    conn = psycopg.connect(store, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    cm_stack.append(conn)
    saver = _counted(PostgresSaver)(conn)
    saver.setup()
    return saver


def _graph() -> tuple[Any, dict[str, Any]]:
    saver = _saver([])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(ScriptedModel(), [charge], checkpointer=saver, state_schema=State)
    return graph, {"configurable": {"thread_id": PROBE.config.get("thread", "contract")}}


def _durability() -> str:
    return "async" if PROBE.config["variant"].endswith("async") else "sync"


def _pending(graph: Any, config: dict[str, Any]) -> bool:
    return bool(graph.get_state(config).interrupts)


def _drive(graph: Any, config: dict[str, Any], first: Any, answer: bool) -> dict[str, Any]:
    """Invoke with ``first``, then answer interrupts while ``answer``; the outcome."""
    result = graph.invoke(first, config, durability=_durability())
    while answer and result.get("__interrupt__"):
        result = graph.invoke(Command(resume=cc.ANSWER), config, durability=_durability())
    status = "interrupted" if result.get("__interrupt__") else "done"
    return {"status": status, "saves": PROBE.saves, "final": str(result["messages"][-1].content)}


def start(probe: cc.Probe) -> dict[str, Any]:
    graph, config = _graph()
    probe.ready()
    return _drive(graph, config, {"messages": [HumanMessage(cc.PROMPT)]}, bool(probe.config.get("answer")))


def resume(probe: cc.Probe) -> dict[str, Any]:
    graph, config = _graph()
    probe.ready()
    state = graph.get_state(config)
    if not state.values:  # killed before the first checkpoint: nothing to resume, start again
        return _drive(graph, config, {"messages": [HumanMessage(cc.PROMPT)]}, True)
    first = Command(resume=cc.ANSWER) if state.interrupts else None
    return _drive(graph, config, first, True)


def answer(probe: cc.Probe) -> dict[str, Any]:
    probe.ready()  # the racers open the store and answer at the same instant
    graph, config = _graph()
    if not _pending(graph, config):
        return {"status": "refused", "why": "no pending interrupt"}
    return _drive(graph, config, Command(resume=cc.ANSWER), False)


def _normalize(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if isinstance(m, HumanMessage):
            out.append(cc.record("user", text=m.content))
        elif isinstance(m, AIMessage):
            calls = [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in m.tool_calls]
            out.append(cc.record("assistant", text=m.content, calls=calls))
        elif isinstance(m, ToolMessage):
            out.append(cc.record("tool", call_id=m.tool_call_id, text=m.content))
    return out


def dump(probe: cc.Probe) -> dict[str, Any]:
    graph, config = _graph()
    state = graph.get_state(config)
    records = _normalize(state.values.get("messages", []))
    for rec, unit in zip([r for r in records if r["role"] != "user"], cc.units(records), strict=True):
        rec["unit"] = unit
    return {"records": records, "pending": bool(state.interrupts), "next": list(state.next)}


def fork_points(probe: cc.Probe) -> dict[str, Any]:
    graph, config = _graph()
    history = list(graph.get_state_history(config))
    return {"points": [h.config["configurable"]["checkpoint_id"] for h in reversed(history)]}


def fork(probe: cc.Probe) -> dict[str, Any]:
    graph, config = _graph()
    at = {"configurable": {**config["configurable"], "checkpoint_id": probe.config["at"]}}
    state = graph.get_state(at)
    first = Command(resume=cc.ANSWER) if state.interrupts else None
    result = graph.invoke(first, at, durability=_durability())
    while result.get("__interrupt__"):
        result = graph.invoke(Command(resume=cc.ANSWER), config, durability=_durability())
    return {"records": _normalize(result["messages"]), "status": "done"}


def validity(probe: cc.Probe) -> dict[str, Any]:
    trials = []
    for label, make in cc.REFUSED:
        graph, config = _graph()
        before = repr(graph.get_state(config).values.get("note", "<absent>"))
        value = make()
        try:
            graph.update_state(config, {"note": value})
        except Exception as exc:
            trials.append((label, "refused", f"{type(exc).__name__}: {exc}"))
            continue
        fresh, _ = _graph()
        try:
            got = fresh.get_state(config).values.get("note", "<absent>")
        except Exception as exc:
            trials.append((label, "persisted", f"stored, then the checkpoint cannot be read: {type(exc).__name__}: {exc}"))
            continue
        kept = repr(got) != before
        trials.append((label, "persisted" if kept else "not persisted", f"read back {got!r}"[:200]))
    return cc.validity_outcome(trials)


if __name__ == "__main__":
    cc.serve(
        sys.modules[__name__],
        ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "langchain-core"),
        bind=[sys.modules[__name__]],
    )
