"""OpenAI Agents SDK's side of ``bench/resume_contract.py`` (the probe protocol of ``contract_common``).

- agent: ``Agent(model=ScriptedModel(), tools=[charge])``; the model returns a ``charge``
  function call (call id ``CALL_ID``), then the answer; no network, tracing off;
- the interrupt: ``@function_tool(needs_approval=True)``: the run stops with an interruption,
  the SDK's human-in-the-loop; its ``RunState`` (``result.to_state().to_string()``) is written to
  ``runstate.json`` beside the session (removed once the answered run ended), the conversation is
  in ``SQLiteSession(session_id, db_path)``; every ``add_items`` and state write is a save point;
- answer: ``RunState.from_string``, ``state.approve(item)``, ``Runner.run(agent, state, session=...)``;
- resume: a stored ``RunState`` is answered again; otherwise the session's conversation goes on
  with ``Runner.run(agent, [], session=...)`` (the prompt again if nothing was stored);
- fork: neither ``SQLiteSession`` nor ``RunState`` forks a run (not applicable);
- validity: ``session.add_items([{"role": "user", "content": "note", "note": value}])``, read back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("OPENAI_API_KEY", "sk-unused-contract")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc
from agents import Agent, RunConfig, Runner, RunState, SQLiteSession, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

set_tracing_disabled(True)
RUN_CONFIG = RunConfig(tracing_disabled=True)
PROBE = cc.Probe({})  # each action binds its own (cc.serve)


def _assistant(item: Any) -> bool:
    return isinstance(item, dict) and (item.get("type") == "function_call" or item.get("role") == "assistant")


class ScriptedModel(Model):
    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = input if isinstance(input, list) else []
        PROBE.model_call(sum(_assistant(i) for i in items))
        last = items[-1] if items else None
        item: Any
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            item = ResponseOutputMessage(
                id="msg_final",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=cc.FINAL, annotations=[])],
            )
        else:
            item = ResponseFunctionToolCall(
                type="function_call",
                id="fc_charge",
                call_id=cc.CALL_ID,
                name="charge",
                arguments=json.dumps({"order": cc.ORDER}),
                status="completed",
            )
        return ModelResponse(output=[item], usage=Usage(requests=1, input_tokens=1, output_tokens=1, total_tokens=2), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool(needs_approval=True)
def charge(order: str) -> str:
    """Charge an order once a person approves.

    Args:
        order: The order id.
    """
    PROBE.effect(order)
    PROBE.tool_done(cc.CALL_ID)
    return f"charged {order}: {cc.ANSWER}"


class Session(SQLiteSession):
    async def add_items(self, items: list[Any]) -> None:
        await super().add_items(items)
        PROBE.save_point()


def _paths() -> tuple[Path, Path]:
    root = Path(PROBE.config["store"])
    root.mkdir(parents=True, exist_ok=True)
    return root / "session.db", root / "runstate.json"


def _setup() -> tuple[Agent[Any], Session, Path]:
    db, state_file = _paths()
    agent = Agent(name="contract", instructions="Charge.", model=ScriptedModel(), tools=[charge])
    return agent, Session("contract", str(db)), state_file


def _save_state(state_file: Path, result: Any) -> None:
    temp = state_file.with_suffix(".tmp")
    temp.write_text(result.to_state().to_string())
    os.replace(temp, state_file)
    PROBE.save_point()


async def _answer(agent: Agent[Any], session: Session, state_file: Path) -> Any:
    state = await RunState.from_string(agent, state_file.read_text())
    for item in state.get_interruptions():
        state.approve(item)
    result = await Runner.run(agent, state, session=session, run_config=RUN_CONFIG)
    if not result.interruptions:
        state_file.unlink(missing_ok=True)
    return result


def _outcome(result: Any) -> dict[str, Any]:
    status = "interrupted" if result.interruptions else "done"
    return {"status": status, "final": str(result.final_output), "saves": PROBE.saves}


async def _start(probe: cc.Probe) -> dict[str, Any]:
    agent, session, state_file = _setup()
    probe.ready()
    result = await Runner.run(agent, cc.PROMPT, session=session, run_config=RUN_CONFIG)
    if result.interruptions:
        _save_state(state_file, result)
        if probe.config.get("answer"):
            result = await _answer(agent, session, state_file)
    return _outcome(result)


async def _resume(probe: cc.Probe) -> dict[str, Any]:
    agent, session, state_file = _setup()
    probe.ready()
    items = await session.get_items()
    if state_file.exists():
        result = await _answer(agent, session, state_file)
    elif not items:
        result = await Runner.run(agent, cc.PROMPT, session=session, run_config=RUN_CONFIG)
        if result.interruptions:
            _save_state(state_file, result)
            result = await _answer(agent, session, state_file)
    elif _assistant(items[-1]) and items[-1].get("type") != "function_call":
        return {"status": "done", "final": "(already finished)"}
    else:
        result = await Runner.run(agent, [], session=session, run_config=RUN_CONFIG)
        if result.interruptions:
            _save_state(state_file, result)
            result = await _answer(agent, session, state_file)
    return _outcome(result)


async def answer(probe: cc.Probe) -> dict[str, Any]:
    probe.ready()  # the racers open the session and answer at the same instant
    agent, session, state_file = _setup()
    if not state_file.exists():
        return {"status": "refused", "why": "no stored RunState"}
    return _outcome(await _answer(agent, session, state_file))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


async def _dump(probe: cc.Probe) -> dict[str, Any]:
    _, session, state_file = _setup()
    out = []
    for item in await session.get_items():
        if item.get("type") == "function_call":
            out.append(
                cc.record(
                    "assistant", text="", calls=[{"id": item["call_id"], "name": item["name"], "args": json.loads(item["arguments"])}]
                )
            )
        elif item.get("type") == "function_call_output":
            out.append(cc.record("tool", call_id=item["call_id"], text=str(item.get("output"))))
        elif item.get("role") == "assistant":
            out.append(cc.record("assistant", text=_text(item.get("content")), calls=[]))
        else:
            out.append(cc.record("user", text=_text(item.get("content"))))
    for rec, unit in zip([r for r in out if r["role"] != "user"], cc.units(out), strict=True):
        rec["unit"] = unit
    return {"records": out, "pending": state_file.exists()}


async def _validity(probe: cc.Probe) -> dict[str, Any]:
    trials = []
    db, _ = _paths()
    for label, make in cc.REFUSED:
        value = make()
        session = SQLiteSession("validity", str(db))
        try:
            await session.add_items([{"role": "user", "content": "note", "note": value}])  # type: ignore[typeddict-unknown-key]
        except Exception as exc:
            trials.append((label, "refused", f"{type(exc).__name__}: {exc}"))
            continue
        try:
            got = (await SQLiteSession("validity", str(db)).get_items())[-1].get("note", "<absent>")
        except Exception as exc:
            trials.append((label, "persisted", f"stored, then the session cannot be read: {type(exc).__name__}: {exc}"))
            continue
        trials.append((label, "persisted" if got != "<absent>" else "not persisted", f"read back {got!r}"[:200]))
        await SQLiteSession("validity", str(db)).clear_session()
    return cc.validity_outcome(trials)


def fork_points(probe: cc.Probe) -> dict[str, Any]:
    return {"not_applicable": "SQLiteSession and RunState keep one line of a run: no checkpoint history to fork from"}


if __name__ == "__main__":
    cc.serve(
        sys.modules[__name__],
        ("openai-agents", "openai"),
        bind=[sys.modules[__name__]],
    )
