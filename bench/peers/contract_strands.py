"""Strands Agents' side of ``bench/resume_contract.py`` (the probe protocol of ``contract_common``).

- agent: ``strands.Agent`` with a scripted ``Model`` (calls ``charge``, call id ``CALL_ID``, then
  answers) and ``@tool(context=True) charge``, which asks with ``tool_context.interrupt``;
- stores (``config["variant"]``): ``file`` (``FileSessionManager``; every repository write is a
  save point), ``snapshot`` (``SnapshotSessionManager(save_latest_on="message")`` over a
  ``LocalFileStorage``; every storage write is a save point), ``tether``
  (``tether.strands.TetherSessionManager`` over a SQLite store, ``charge`` declared not idempotent
  with the same ``reconcile`` as Tether's column; every store write is a save point);
- resume: the same program started again: a pending interrupt is answered; a cut-off turn is
  continued with ``agent()`` (no new prompt: the restored conversation goes on) for the Strands
  managers, and with the same call ``agent(PROMPT)`` for Tether's manager (its documented resume);
- fork: ``tether.strands.fork_session`` for Tether's manager (each step of the finished run forked
  into a new session, which a Strands agent opens and finishes with the same call); Strands' own
  managers fork no session (not applicable);
- validity: ``agent.state.set("note", value)``, then ``sync_agent``, read back by a fresh agent.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncGenerator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc
from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model
from strands.types.tools import ToolContext

PROBE = cc.Probe({})  # each action binds its own (cc.serve)
SESSION = "contract"


class ScriptedModel(Model):
    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {"model_id": "contract-scripted"}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        PROBE.model_call(sum(m["role"] == "assistant" for m in messages))
        answered = any("toolResult" in block for block in messages[-1]["content"])
        yield {"messageStart": {"role": "assistant"}}
        if answered:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": cc.FINAL}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": cc.CALL_ID, "name": "charge"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"order": cc.ORDER})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}}


@tool(context=True)
def charge(order: str, tool_context: ToolContext) -> str:
    """Charge an order once a person approves.

    Args:
        order: The order id.
    """
    answer = tool_context.interrupt(cc.QUESTION, reason={"order": order})
    PROBE.effect(order)
    PROBE.tool_done(cc.CALL_ID)
    return f"charged {order}: {answer}"


def _file_manager() -> Any:
    from strands.session.file_session_manager import FileSessionManager

    class Counted(FileSessionManager):  # type: ignore[misc]
        pass

    for name in ("create_session", "create_agent", "update_agent", "create_message", "update_message"):
        original = getattr(FileSessionManager, name)

        def wrapped(self: Any, *a: Any, __original: Any = original, **k: Any) -> Any:
            out = __original(self, *a, **k)
            PROBE.save_point()
            return out

        setattr(Counted, name, wrapped)
    return Counted(session_id=SESSION, storage_dir=PROBE.config["store"])


def _snapshot_manager() -> Any:
    from strands.session.snapshot_session_manager import SnapshotSessionManager
    from strands.storage.local_file_storage import LocalFileStorage

    class Counted(LocalFileStorage):  # type: ignore[misc]
        async def write(self, key: str, data: bytes) -> None:
            await super().write(key, data)
            PROBE.save_point()

    return SnapshotSessionManager(SESSION, storage=Counted(PROBE.config["store"]), save_latest_on="message")


def _tether_manager(session: str = SESSION) -> Any:
    from contract_tether import reconcile

    from tether.durable.sqlite import SQLiteStore
    from tether.strands import TetherSessionManager
    from tether.testing.faults import FaultStore

    os.environ["TETHER_CRASHTEST_SCRATCH"] = os.path.dirname(PROBE.config["effects"])  # reconcile reads the effect log there
    store = FaultStore(SQLiteStore(PROBE.config["store"]), PROBE.config.get("kill_at"), "after")
    manager = TetherSessionManager(session, store=store, non_idempotent=["charge"], reconcile=reconcile)
    manager._contract_store = store  # type: ignore[attr-defined]
    return manager


def _agent(manager: Any = None) -> tuple[Agent, Any]:
    if manager is None:
        manager = {"file": _file_manager, "snapshot": _snapshot_manager, "tether": _tether_manager}[PROBE.config["variant"]]()
    agent = Agent(
        model=ScriptedModel(),
        tools=[charge],
        session_manager=manager,
        callback_handler=None,
        conversation_manager=NullConversationManager(),
        agent_id="agent",
    )
    return agent, manager


def _saves(manager: Any) -> int:
    store = getattr(manager, "_contract_store", None)
    return int(store.commits) if store is not None else PROBE.saves


def _close(manager: Any) -> None:
    close = getattr(manager, "close", None)
    if callable(close):
        close()


def _answers(agent: Agent) -> list[dict[str, Any]]:
    pending = [i for i in agent._interrupt_state.interrupts.values() if i.response is None]
    return [{"interruptResponse": {"interruptId": i.id, "response": cc.ANSWER}} for i in pending]


def _finished(agent: Agent) -> bool:
    messages = agent.messages
    return bool(messages) and messages[-1]["role"] == "assistant" and not any("toolUse" in b for b in messages[-1]["content"])


def _drive(agent: Agent, result: Any, answer: bool) -> dict[str, Any]:
    while answer and result.stop_reason == "interrupt":
        result = agent(_answers(agent))
    status = "interrupted" if result.stop_reason == "interrupt" else "done"
    return {"status": status, "final": str(result)}


def start(probe: cc.Probe) -> dict[str, Any]:
    agent, manager = _agent()
    probe.ready()
    outcome = _drive(agent, agent(cc.PROMPT), bool(probe.config.get("answer")))
    _close(manager)
    return {**outcome, "saves": _saves(manager)}


def resume(probe: cc.Probe) -> dict[str, Any]:
    agent, manager = _agent()
    probe.ready()
    if _finished(agent):
        _close(manager)
        return {"status": "done", "final": "(already finished)"}
    if agent._interrupt_state.activated:
        result = agent(_answers(agent))
    elif probe.config["variant"] == "tether" or not agent.messages:
        result = agent(cc.PROMPT)
    else:
        result = agent()
    outcome = _drive(agent, result, True)
    _close(manager)
    return outcome


def answer(probe: cc.Probe) -> dict[str, Any]:
    probe.ready()  # the racers open the session and answer at the same instant
    try:
        agent, manager = _agent()
    except Exception as exc:  # Tether's manager: another process holds the run's lease
        return {"status": "refused", "why": f"{type(exc).__name__}: {exc}"[:200]}
    try:
        if probe.config["variant"] == "tether" and not _finished(agent):
            agent(cc.PROMPT)  # Tether's manager asks a pending interrupt again on the same call
        if not agent._interrupt_state.activated:
            return {"status": "refused", "why": "no pending interrupt"}
        outcome = _drive(agent, agent(_answers(agent)), False)
    except Exception as exc:
        if type(exc).__name__ in ("RunLockedError", "InterruptError"):
            return {"status": "refused", "why": f"{type(exc).__name__}: {exc}"[:200]}
        raise
    _close(manager)
    return outcome


def _normalize(messages: list[Any]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        texts = [b["text"] for b in m["content"] if "text" in b]
        if m["role"] == "assistant":
            calls = [
                {"id": b["toolUse"]["toolUseId"], "name": b["toolUse"]["name"], "args": b["toolUse"]["input"]}
                for b in m["content"]
                if "toolUse" in b
            ]
            out.append(cc.record("assistant", text="".join(texts), calls=calls))
        elif any("toolResult" in b for b in m["content"]):
            for b in m["content"]:
                if "toolResult" in b:
                    result = b["toolResult"]
                    text = "".join(c.get("text", "") for c in result.get("content", []))
                    out.append(cc.record("tool", call_id=result["toolUseId"], status=result.get("status"), text=text))
        else:
            out.append(cc.record("user", text="".join(texts)))
    units = cc.units(out)
    for rec, unit in zip([r for r in out if r["role"] != "user"], units, strict=True):
        rec["unit"] = unit
    return out


def dump(probe: cc.Probe) -> dict[str, Any]:
    saved = probe.config.get("kill_at")
    probe.config["kill_at"] = None  # reading is not a fault point
    try:
        agent, manager = _agent()
        records = _normalize(agent.messages)
        pending = bool(agent._interrupt_state.activated)
        _close(manager)
    finally:
        probe.config["kill_at"] = saved
    return {"records": records, "pending": pending}


def validity(probe: cc.Probe) -> dict[str, Any]:
    trials = []
    for label, make in cc.REFUSED:
        agent, manager = _agent()
        before = repr(agent.state.get("note"))
        value = make()
        try:
            agent.state.set("note", value)
            manager.sync_agent(agent)
        except Exception as exc:
            trials.append((label, "refused", f"{type(exc).__name__}: {exc}"))
            _close(manager)
            continue
        _close(manager)
        try:
            fresh, again = _agent()
            got = fresh.state.get("note")
            _close(again)
        except Exception as exc:
            trials.append((label, "persisted", f"stored, then the session cannot be read: {type(exc).__name__}: {exc}"))
            continue
        trials.append((label, "persisted" if repr(got) != before else "not persisted", f"read back {got!r}"[:200]))
    return cc.validity_outcome(trials)


def fork_points(probe: cc.Probe) -> dict[str, Any]:
    variant = probe.config["variant"]
    if variant == "tether":
        from tether.durable.sqlite import SQLiteStore
        from tether.strands._run import strands_run_id

        store = SQLiteStore(probe.config["store"])
        try:
            return {"points": [step.step for step in store.history(strands_run_id(SESSION, "agent"))]}
        finally:
            store.close()
    why = {
        "file": "FileSessionManager keeps one message log per agent: no checkpoint to fork from",
        "snapshot": "SnapshotSessionManager restores a snapshot into the same session (no branch of a session to run on)",
    }[variant]
    return {"not_applicable": why}


def fork(probe: cc.Probe) -> dict[str, Any]:
    """Tether's manager: fork the session at step ``at`` into a new one and finish it there."""
    from tether.strands import fork_session

    session = f"fork-{probe.config['at']}-{probe.config['fork']}"
    fork_session(SESSION, probe.config["at"], new_session_id=session, agent_id="agent", store=probe.config["store"])
    agent, manager = _agent(_tether_manager(session))
    if not _finished(agent):
        _drive(agent, agent(_answers(agent) if agent._interrupt_state.activated else cc.PROMPT), True)
    records = _normalize(agent.messages)
    _close(manager)
    return {"records": records, "status": "done"}


if __name__ == "__main__":
    cc.serve(
        sys.modules[__name__],
        ("strands-agents", "tether"),
        bind=[sys.modules[__name__]],
    )
