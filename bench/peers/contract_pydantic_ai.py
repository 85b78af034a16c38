"""Pydantic AI's side of ``bench/resume_contract.py``: its DBOS integration (the probe protocol of ``contract_common``).

- agent: ``contract_pydantic_ai_agent``'s wrapped in ``DBOSAgent`` (each model request a DBOS
  step); DBOS's system database is a SQLite file in the case's directory; every commit DBOS makes
  (SQLAlchemy ``do_commit``) is a save point;
- the interrupt: an approval-required tool ends the first run (workflow ``contract-ask``) with
  ``DeferredToolRequests``; the answer is a second run (workflow ``contract-answer``) given the
  first run's messages (read back from DBOS: the workflow's recorded result) and
  ``DeferredToolResults(approvals={call id: True})``;
- resume: ``DBOS.launch()`` recovers the workflows a crash left pending (DBOS's own recovery), then
  the run goes on from whichever workflow is recorded (the answer is given if it was not);
- dump: the messages of the last recorded workflow result, followed by the model responses
  recorded as steps of a workflow still pending;
- fork: ``DBOS.fork_workflow(workflow_id, start_step)`` from each step of the answer workflow;
- validity: a ``deps``-free agent has no state of its own: the probe stores each value as a
  DBOS workflow output (what DBOS keeps of a run), read back with ``retrieve_workflow``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc
import contract_pydantic_ai_agent as shared
import sqlalchemy.engine.default as sa_default
from dbos import DBOS, SetWorkflowID
from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.durable_exec.dbos import DBOSAgent
from pydantic_ai.messages import ModelRequest, ModelResponse, UserPromptPart

PROBE = cc.Probe({})  # each action binds its own (cc.serve)
ASK, ANSWER_WF = "contract-ask", "contract-answer"

_commit = sa_default.DefaultDialect.do_commit


def _counted_commit(self: Any, dbapi_connection: Any) -> None:
    _commit(self, dbapi_connection)
    PROBE.save_point()


sa_default.DefaultDialect.do_commit = _counted_commit  # type: ignore[method-assign]


_AGENT: DBOSAgent | None = None


def _launch() -> DBOSAgent:
    global _AGENT
    if _AGENT is None:
        _AGENT = DBOSAgent(shared.agent())
        os.makedirs(PROBE.config["store"], exist_ok=True)
        DBOS(
            config={"name": "contract", "system_database_url": f"sqlite:///{PROBE.config['store']}/dbos.sqlite", "run_admin_server": False}
        )
        DBOS.launch()
    return _AGENT


async def _status(workflow: str) -> str | None:
    status = await DBOS.get_workflow_status_async(workflow)
    return None if status is None else str(status.status)


async def _ask() -> Any:
    with SetWorkflowID(ASK):
        return await _launch().run(cc.PROMPT)


async def _answer(first: Any) -> Any:
    requests: DeferredToolRequests = first.output
    results = DeferredToolResults(approvals={call.tool_call_id: True for call in requests.approvals})
    with SetWorkflowID(ANSWER_WF):
        return await _launch().run(message_history=first.all_messages(), deferred_tool_results=results)


def _outcome(result: Any) -> dict[str, Any]:
    status = "interrupted" if isinstance(result.output, DeferredToolRequests) else "done"
    return {"status": status, "final": str(result.output)[:200], "saves": PROBE.saves}


async def _recorded(workflow: str) -> Any:
    return await (await DBOS.retrieve_workflow_async(workflow)).get_result()


async def _start(probe: cc.Probe) -> dict[str, Any]:
    _launch()
    probe.ready()
    result = await _ask()
    if probe.config.get("answer") and isinstance(result.output, DeferredToolRequests):
        result = await _answer(result)
    return _outcome(result)


async def _resume(probe: cc.Probe) -> dict[str, Any]:
    _launch()  # recovers the workflows the crash left pending
    probe.ready()
    if await _status(ANSWER_WF) is not None:
        return _outcome(await _recorded(ANSWER_WF))
    first = await _recorded(ASK) if await _status(ASK) is not None else await _ask()
    return _outcome(await _answer(first) if isinstance(first.output, DeferredToolRequests) else first)


async def answer(probe: cc.Probe) -> dict[str, Any]:
    _launch()
    probe.ready()
    if await _status(ASK) is None:
        return {"status": "refused", "why": "no run asked"}
    return _outcome(await _answer(await _recorded(ASK)))


async def _dump(probe: cc.Probe) -> dict[str, Any]:
    _launch_readonly()
    messages: list[Any] = []
    pending = False
    for workflow in (ASK, ANSWER_WF):
        status = await _status(workflow)
        if status is None:
            continue
        if status == "SUCCESS":
            result = await _recorded(workflow)
            messages = list(result.all_messages())
            pending = isinstance(result.output, DeferredToolRequests)
        else:
            if workflow == ASK:  # DBOS recorded the workflow's input: the prompt
                messages.append(ModelRequest(parts=[UserPromptPart(cc.PROMPT)]))
            steps = await DBOS.list_workflow_steps_async(workflow)
            messages += [s["output"] for s in steps if isinstance(s.get("output"), ModelResponse)]
    return {"records": shared.normalize(messages), "pending": pending}


def _launch_readonly() -> None:
    """Reading is not a fault point; DBOS launched here also recovers nothing new (same executor)."""
    PROBE.config["kill_at"] = None
    _launch()


def fork_points(probe: cc.Probe) -> dict[str, Any]:
    async def points() -> dict[str, Any]:
        _launch_readonly()
        steps = await DBOS.list_workflow_steps_async(ANSWER_WF)
        return {"points": [s["function_id"] for s in steps] or [1]}

    return asyncio.run(points())


async def _fork(probe: cc.Probe) -> dict[str, Any]:
    _launch_readonly()
    handle = await DBOS.fork_workflow_async(ANSWER_WF, int(probe.config["at"]))
    result = await handle.get_result()
    return {"records": shared.normalize(list(result.all_messages())), "status": "done"}


@DBOS.workflow()
async def keep(value: Any) -> Any:
    return value


async def _validity(probe: cc.Probe) -> dict[str, Any]:
    _launch_readonly()
    trials = []
    for i, (label, make) in enumerate(cc.REFUSED):
        value = make()
        workflow = f"validity-{i}"
        try:
            with SetWorkflowID(workflow):
                await keep(value)
        except Exception as exc:
            trials.append((label, "refused", f"{type(exc).__name__}: {exc}"))
            continue
        try:
            got = await _recorded(workflow)
        except Exception as exc:
            trials.append((label, "persisted", f"stored, then cannot be read: {type(exc).__name__}: {exc}"))
            continue
        trials.append((label, "persisted" if await _status(workflow) == "SUCCESS" else "not persisted", f"read back {got!r}"[:200]))
    return cc.validity_outcome(trials)


if __name__ == "__main__":
    cc.serve(
        sys.modules[__name__],
        ("pydantic-ai-slim", "dbos", "sqlalchemy"),
        bind=[sys.modules[__name__], shared],
        hard_exit=True,  # DBOS's threads would keep the process alive
    )
