"""Fork an agent run on Temporal at a step: a new workflow beside the original, which stays untouched.

Temporal's own primitive, Reset, rewinds *the same* workflow id to an event (the original run
becomes a closed earlier run of it). A Tether fork is what a local ``agent.fork`` makes instead:
a *new* run with an id of its own (default ``"<run>.fork-<n>"``), starting from the run's state
at that step; the original workflow is only read.

**Steps.** The steps of a run on Temporal are its Tether step boundaries, in order: where the
workflow is about to call the model (``turn_start`` before the first call of a prompted
invocation, ``after_tools`` once a round of tool calls is folded in, ``continued`` first in an
execution that started from carried state, e.g. a fork), about to run a round of tool calls
(``after_model``; ``resumed`` once interrupt answers were taken) or about to finish
(``after_model``). Step ``n`` is the ``n``-th such boundary of the workflow execution (the
latest run of the workflow id unless ``temporal_run_id`` names another; a run continued as new
counts its steps from its last continue-as-new).

**How.** The state at each boundary is derived from the original's event history, not kept
anywhere: the history is replayed (``temporalio``'s ``Replayer``, nothing executes: every
activity result comes from the history) against :class:`_StepProbe`, the agent workflow that
notes its carried state (what continue-as-new carries: the compact messages, the conversation's
blob reference, state, cursor, metrics, settings, manifest) at each boundary. The fork starts
workflow ``new_run_id`` with the agent, config and options of the original and that state,
exactly as ``promote`` starts a workflow from carried state. Conversation blobs are
content-addressed and immutable, so the fork reads the conversation as it was at the step. The
history must replay against this process's workflow code (the code that recorded it, or a
compatible one); otherwise the fork is refused.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.service import RPCError, RPCStatusCode

from ..errors import ConfigurationError, ForkError, RunNotFoundError
from ..loop.effects import CallModel, RunTools, Stop
from .shapes import WORKFLOW_NAME, AgentRunResult, CarriedState
from .workflow import AgentWorkflow

if TYPE_CHECKING:
    from .client import RunHandle, TetherClient

__all__ = ["ForkStep", "fork_run", "fork_steps"]

_PROBED: dict[str, list[ForkStep]] = {}  # the boundaries each probe replay noted, by its token (the replay's workflow id)
_PROBED_LOCK = threading.Lock()


@dataclass(frozen=True)
class ForkStep:
    """One step of an agent run on Temporal (see the module docstring).

    Attributes:
        step: Its number in the workflow execution, from 1.
        position: ``turn_start``, ``after_model``, ``after_tools``, ``resumed`` or ``continued``.
        cycle_index: The loop cycle the run was in.
        event_id: The ``WorkflowTaskStarted`` event of the workflow task that reached the step
            (what Temporal's Reset takes as ``workflow_task_finish_event_id`` to rewind the same
            workflow there).
        carried: The run's state at the step (a fork starts from it).
    """

    step: int
    position: str
    cycle_index: int
    event_id: int
    carried: CarriedState


@workflow.defn(name=WORKFLOW_NAME, sandboxed=False)
class _StepProbe(AgentWorkflow):
    """The agent workflow, noting its state at each step boundary; used only to replay histories."""

    def __init__(self) -> None:
        super().__init__()
        self._last = ""

    @workflow.run
    async def run(self, params: dict[str, Any]) -> AgentRunResult:
        self._last = "continued" if params.get("carried") is not None and (params["carried"] or {}).get("started") else "turn_start"
        return await super().run(params)

    def _note(self) -> None:
        run, _ = self._state()
        step = ForkStep(
            step=0,
            position=self._last,
            cycle_index=run.cursor.cycle_index,
            event_id=workflow.info().get_current_history_length(),
            carried=json.loads(json.dumps(self._carry(started=True))),
        )
        with _PROBED_LOCK:
            _PROBED.setdefault(workflow.info().workflow_id, []).append(step)

    async def _call_model(self, effect: CallModel) -> None:
        self._note()
        await super()._call_model(effect)
        self._last = "after_model"

    async def _run_tools(self, effect: RunTools) -> None:
        self._note()
        await super()._run_tools(effect)
        self._last = "after_tools"

    async def _wait_for_answers(self) -> None:
        await super()._wait_for_answers()
        self._last = "resumed"

    async def _finish(self, effect: Stop) -> AgentRunResult:
        if self._last == "after_model":  # the final model call's answer, about to end the invocation
            self._note()
        return await super()._finish(effect)


async def _history(tc: TetherClient, run_id: str, temporal_run_id: str | None) -> WorkflowHistory:
    if not isinstance(run_id, str) or not run_id:
        raise ConfigurationError(f"fork: run_id must be a non-empty string, got {run_id!r}")
    try:
        return await tc.client.get_workflow_handle(run_id, run_id=temporal_run_id).fetch_history()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        which = f" (Temporal run {temporal_run_id!r})" if temporal_run_id else ""
        raise RunNotFoundError(f"no workflow {run_id!r}{which} on this Temporal namespace; nothing to fork") from exc


def _params(tc: TetherClient, run_id: str, history: WorkflowHistory) -> dict[str, Any]:
    """The original's workflow parameters (agent, config, options), from its start event."""
    started = history.events[0].workflow_execution_started_event_attributes
    if started.workflow_type.name != WORKFLOW_NAME:
        raise ForkError(f"run {run_id!r} is a {started.workflow_type.name!r} workflow; fork forks agent runs ({WORKFLOW_NAME!r})")
    (params,) = tc.client.data_converter.payload_converter.from_payloads(list(started.input.payloads), [dict])
    if params.get("nested"):
        raise ForkError(f"run {run_id!r} is an agent tool's child run; fork its parent run")
    return dict(params)


async def fork_steps(tc: TetherClient, run_id: str, *, temporal_run_id: str | None = None) -> list[ForkStep]:
    """The steps of agent run ``run_id`` (workflow id) a fork can start from, in order.

    Raises:
        RunNotFoundError: No such workflow.
        ForkError: Not an agent run, or its history does not replay against this code.
    """
    history = await _history(tc, run_id, temporal_run_id)
    _params(tc, run_id, history)
    return await _probe(run_id, history)


async def _probe(run_id: str, history: WorkflowHistory) -> list[ForkStep]:
    from temporalio.worker import Replayer

    token = f"tether-fork-probe-{uuid.uuid4().hex}"
    try:
        outcome = await Replayer(workflows=[_StepProbe]).replay_workflow(
            WorkflowHistory(token, history.events), raise_on_replay_failure=False
        )
        with _PROBED_LOCK:
            noted = _PROBED.pop(token, [])
    finally:
        with _PROBED_LOCK:
            _PROBED.pop(token, None)
    if outcome.replay_failure is not None:
        raise ForkError(
            f"run {run_id!r}: its history does not replay against this process's workflow code ({outcome.replay_failure}); "
            "fork it from a process running the code that recorded it"
        )
    return [ForkStep(i, s.position, s.cycle_index, s.event_id, s.carried) for i, s in enumerate(noted, start=1)]


async def _exists(tc: TetherClient, workflow_id: str) -> bool:
    try:
        await tc.client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        return False
    return True


async def fork_run(
    tc: TetherClient,
    run_id: str,
    at: int,
    *,
    new_run_id: str | None = None,
    temporal_run_id: str | None = None,
    **start_options: Any,
) -> RunHandle:
    """Start workflow ``new_run_id`` from step ``at`` of agent run ``run_id``; its handle.

    ``new_run_id`` defaults to ``f"{run_id}.fork-{n}"`` with the smallest ``n`` no workflow has.
    The fork runs on ``tc``'s task queue with the original's agent, config and options.

    Raises:
        RunNotFoundError: No workflow ``run_id``.
        ForkError: ``at`` is not a step of the run, ``new_run_id`` is taken, the run is not an
            agent run, or its history does not replay against this code.
    """
    if isinstance(at, bool) or not isinstance(at, int):
        raise ForkError(f"fork at={at!r} is not a step number of run {run_id!r}; list its steps with TetherClient.fork_steps")
    history = await _history(tc, run_id, temporal_run_id)
    params = _params(tc, run_id, history)
    steps = await _probe(run_id, history)
    if not 1 <= at <= len(steps):
        raise ForkError(f"fork at={at} is not a step of run {run_id!r}: it has steps 1 to {len(steps)} (TetherClient.fork_steps)")
    if new_run_id is None:
        n = 1
        while await _exists(tc, f"{run_id}.fork-{n}"):
            n += 1
        new_run_id = f"{run_id}.fork-{n}"
    elif not isinstance(new_run_id, str) or not new_run_id:
        raise ConfigurationError(f"fork: new_run_id must be a non-empty string, got {new_run_id!r}")
    elif await _exists(tc, new_run_id):
        raise ForkError(f"fork of run {run_id!r}: workflow {new_run_id!r} exists already; pick another new_run_id (or omit it)")
    carried: CarriedState = {**steps[at - 1].carried, "forked_from": {"run_id": run_id, "step": at}}
    return await tc.start(
        params["agent"],
        None,
        run_id=new_run_id,
        config=params.get("config") or {},
        options=params.get("options"),
        carried=carried,
        **start_options,
    )
