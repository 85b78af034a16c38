"""Pydantic AI's side of ``bench/resume_contract.py``: its Temporal integration (the probe protocol of ``contract_common``).

- agent: ``contract_pydantic_ai_agent``'s (the DBOS probe's too) wrapped in ``TemporalAgent`` (each
  model request and each tool call a Temporal activity), run by :class:`ContractWorkflow` on a
  worker with ``AgentPlugin(agent)``, the client with ``PydanticAIPlugin()``. The store is a
  ``temporal server start-dev`` whose SQLite file lies in the case's directory (the parent starts
  one per case; ``config["store"]`` is its address);
- save points: the ``n``-th activity handed to this process's worker (everything the workflow
  decided before it is in the server's history); ``kill_at=n`` is a SIGKILL as it starts, i.e.
  during that model call or before that tool call;
- the interrupt, as the integration's docs have it: the first ``agent.run`` ends with
  ``DeferredToolRequests``; the workflow waits for an ``approve`` signal, then runs the agent on
  with the messages so far and ``DeferredToolResults``; the consume-once racers each start a
  worker and send the signal;
- resume: a new worker (Temporal retries what the dead one held), the signal sent if the run
  still waits for it; dump: the stored run read from the workflow's event history (the prompt,
  then each completed model request and tool call activity in order);
- fork: Temporal's reset of the finished run to each of its workflow-task-completed events (a new
  run of the workflow from that point; signals after it reapplied);
- validity: a ``deps``-free agent has no state of its own: each value is given as the input of a
  workflow (what Temporal keeps of a run) through the plugin's data converter, then looked for in
  the stored history.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc
import contract_pydantic_ai_agent as shared
from pydantic import TypeAdapter
from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolReturnPart, UserPromptPart
from temporalio import workflow
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import RetryPolicy
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor, Worker
from temporalio.workflow import ActivityConfig

with workflow.unsafe.imports_passed_through():
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin, TemporalAgent

PROBE = cc.Probe({})  # each action binds its own (cc.serve)
WORKFLOW, QUEUE = "contract", "contract"
FAST = timedelta(seconds=3)  # how soon Temporal gives up on a dead worker's task (its defaults: 10 s to 60 s)


AGENT = TemporalAgent(
    shared.agent(),
    activity_config=ActivityConfig(start_to_close_timeout=FAST, retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=200))),
)


@workflow.defn
class ContractWorkflow:
    """The run: ask, wait for the ``approve`` signal, run on with the answer."""

    def __init__(self) -> None:
        self.asked = False
        self.answer: bool | None = None

    @workflow.run
    async def run(self, prompt: str) -> str:
        result = await AGENT.run(prompt)
        while isinstance(result.output, DeferredToolRequests):
            self.asked = True
            await workflow.wait_condition(lambda: self.answer is not None)
            approvals = {call.tool_call_id: bool(self.answer) for call in result.output.approvals}
            result = await AGENT.run(message_history=result.all_messages(), deferred_tool_results=DeferredToolResults(approvals=approvals))
        return str(result.output)

    @workflow.signal
    def approve(self, answer: bool) -> None:
        self.answer = answer

    @workflow.query
    def waiting(self) -> bool:
        return self.asked and self.answer is None


@workflow.defn
class Keep:
    """The checkpoint-validity probe: a run whose input is the value."""

    @workflow.run
    async def run(self, value: Any) -> Any:
        return value


class _SavePoints(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        class Counted(ActivityInboundInterceptor):
            async def execute_activity(self, input: ExecuteActivityInput) -> Any:
                PROBE.save_point()
                return await super().execute_activity(input)

        return Counted(next)


_CLIENT: Client | None = None
_WORKER: asyncio.Task[None] | None = None


async def _client(worker: bool = True) -> Client:
    """The client (``PydanticAIPlugin``) and, unless only reading, this process's worker (``AgentPlugin``)."""
    global _CLIENT, _WORKER
    if _CLIENT is None:
        _CLIENT = await Client.connect(PROBE.config["store"], plugins=[PydanticAIPlugin()])
    if worker and _WORKER is None:
        running = Worker(
            _CLIENT,
            task_queue=QUEUE,
            workflows=[ContractWorkflow, Keep],
            plugins=[AgentPlugin(AGENT)],
            interceptors=[_SavePoints()],
            sticky_queue_schedule_to_start_timeout=FAST,
        )
        _WORKER = asyncio.ensure_future(running.run())
    return _CLIENT


async def _handle(run_id: str | None = None) -> WorkflowHandle[Any, Any]:
    return (await _client(worker=False)).get_workflow_handle(WORKFLOW, run_id=run_id)


async def _begin() -> WorkflowHandle[Any, Any]:
    client = await _client()
    return await client.start_workflow(ContractWorkflow.run, cc.PROMPT, id=WORKFLOW, task_queue=QUEUE, task_timeout=FAST)


async def _until_waiting_or_done(handle: WorkflowHandle[Any, Any]) -> bool:
    """Whether the run waits for its answer (False: it ended)."""
    while True:
        if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
            return False
        try:
            if await handle.query(ContractWorkflow.waiting):
                return True
        except Exception:  # no worker has the run yet
            pass
        await asyncio.sleep(0.1)


async def _outcome(handle: WorkflowHandle[Any, Any]) -> dict[str, Any]:
    final = await handle.result()
    return {"status": "done", "final": str(final)[:200], "saves": PROBE.saves}


async def _start(probe: cc.Probe) -> dict[str, Any]:
    await _client()
    probe.ready()
    handle = await _begin()
    if not await _until_waiting_or_done(handle):
        return await _outcome(handle)
    if not probe.config.get("answer"):
        return {"status": "interrupted", "saves": probe.saves}
    await handle.signal(ContractWorkflow.approve, True)
    return await _outcome(handle)


async def _resume(probe: cc.Probe) -> dict[str, Any]:
    await _client()  # a new worker: Temporal hands it what the dead one held
    probe.ready()
    handle = await _handle()
    if await _until_waiting_or_done(handle):
        await handle.signal(ContractWorkflow.approve, True)
    return await _outcome(handle)


async def answer(probe: cc.Probe) -> dict[str, Any]:
    await _client()
    probe.ready()
    handle = await _handle()
    await handle.signal(ContractWorkflow.approve, True)
    return await _outcome(handle)


def _payload(payloads: Any) -> Any:
    return json.loads(payloads.payloads[0].data) if payloads.payloads else None


async def _history(run_id: str | None = None) -> list[Any]:
    return [event async for event in (await _handle(run_id)).fetch_history_events()]


def _records(events: list[Any]) -> list[dict[str, Any]]:
    """The stored run: the prompt, then each completed model request / tool call, in order."""
    scheduled: dict[int, str] = {}
    messages: list[Any] = []
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            messages.append(ModelRequest(parts=[UserPromptPart(_payload(event.workflow_execution_started_event_attributes.input))]))
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attributes = event.activity_task_completed_event_attributes
            activity, result = scheduled.get(attributes.scheduled_event_id, ""), _payload(attributes.result)
            if activity.endswith("__model_request"):
                messages.append(_RESPONSE.validate_python(result))
            elif "call_tool" in activity:  # the one tool call: {"kind": "tool_return", "result": ...}
                messages.append(ModelRequest(parts=[ToolReturnPart("charge", result.get("result"), tool_call_id=cc.CALL_ID)]))
    return shared.normalize(messages)


_RESPONSE = TypeAdapter(ModelResponse)


async def _dump(probe: cc.Probe) -> dict[str, Any]:
    return {"records": _records(await _history())}


async def _fork_points(probe: cc.Probe) -> dict[str, Any]:
    handle = await _handle()
    run_id = (await handle.describe()).run_id
    events = await _history(run_id)
    tasks = [e.event_id for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
    return {"points": [f"{run_id}/{event_id}" for event_id in tasks]}


async def _fork(probe: cc.Probe) -> dict[str, Any]:
    client = await _client()
    run_id, event_id = str(probe.config["at"]).split("/")
    reset = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=WORKFLOW, run_id=run_id),
            reason=f"fork {probe.config.get('fork')}",
            workflow_task_finish_event_id=int(event_id),
            request_id=str(uuid.uuid4()),
        )
    )
    handle = await _handle(reset.run_id)
    final = await handle.result()
    return {"records": _records(await _history(reset.run_id)), "status": "done", "final": str(final)[:200]}


async def _validity(probe: cc.Probe) -> dict[str, Any]:
    client = await _client()
    trials = []
    for i, (label, make) in enumerate(cc.REFUSED):
        workflow_id = f"validity-{i}"
        try:
            handle = await client.start_workflow(Keep.run, make(), id=workflow_id, task_queue=QUEUE, task_timeout=FAST)
        except Exception as exc:
            trials.append((label, "refused", f"{type(exc).__name__}: {exc}"))
            continue
        try:
            got = f"the run returned {await asyncio.wait_for(handle.result(), 10)!r}"
        except Exception as exc:
            got = f"the run did not return it: {type(exc).__name__}: {exc}"
            await handle.terminate("validity probe")
        events = await _history_of(client, workflow_id)
        stored = events[0].workflow_execution_started_event_attributes.input.payloads if events else []
        fate = "persisted" if stored else "not persisted"
        trials.append((label, fate, f"stored input {stored[0].data[:60]!r}; {got}" if stored else got))
    return cc.validity_outcome(trials)


async def _history_of(client: Client, workflow_id: str) -> list[Any]:
    return [event async for event in client.get_workflow_handle(workflow_id).fetch_history_events()]


if __name__ == "__main__":
    import contract_pydantic_ai_temporal as probe  # the workflows' module by its name (Temporal's sandbox re-imports it)

    loop = asyncio.new_event_loop()  # one loop for the process: its worker runs on between actions

    def run_async(coroutine: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
        return loop.run_until_complete(coroutine)

    cc.serve(
        probe,
        ("pydantic-ai-slim", "temporalio"),
        bind=[probe, shared],
        run_async=run_async,
        hard_exit=True,  # the worker would keep the process alive
    )
