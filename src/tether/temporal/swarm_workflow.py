"""`SwarmWorkflow`: a :class:`~tether.multiagent.Swarm` run on Temporal, each member turn a child workflow.

The workflow holds the swarm run's state, the same JSON a local swarm holds (``take_snapshot()``
shape), and drives it with the pure turn logic of :mod:`tether.multiagent.swarm_turns`, so it
starts the same turns, builds the same prompts, applies handoffs and limits and fails exactly
as a local swarm does. Each member turn is an ``AgentWorkflow`` (``tether.agent``) child of
agent ``"<swarm>/<member>"`` (a fresh member agent with the handoff tool, resolved by the
worker's :class:`~tether.temporal.AgentRegistry`) whose workflow id is the run id a local
durable swarm gives that turn: ``child_run_id(swarm_run_id, f"{member}:{n}")``. The child runs
``nested``: it returns when it stops on interrupts, and the swarm, whose status becomes
``interrupted``, waits for an ``answer_interrupts`` update (the body an ``AgentWorkflow`` takes,
so :meth:`TetherClient.answer_interrupts` and ``wait_for_interrupts`` work on swarm runs), then
starts the same child workflow id again with the child's carried state and the answers: no
finished turn, and no finished step of the interrupted turn, runs again.

Member results stay compact in the workflow (one blob reference when large); the client
expands them (:meth:`TetherClient.swarm_result`, :meth:`TetherClient.swarm_snapshot`). An
interrupted turn keeps the child's carried state and pending interrupts in ``running``
(``carried``, ``pending``), which the client turns into the agent snapshot a local swarm keeps
(``paused``) and back.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from ..answers import answers_from, route_answers
    from ..multiagent.swarm import SWARM_KEY
    from ..multiagent.swarm_turns import SwarmSpec, begin, check_state, member_failed, new_state, record_turn, start_turn
    from .activity_io import SwarmPromptInput, Turn, TurnInput
    from .base_workflow import MultiAgentWorkflow, SnapshotShape, child_outcome
    from .blobs import canonical_json
    from .claimcheck import DEFAULT_INLINE_LIMIT
    from .shapes import WORKFLOW_NAME, AgentRunResult, Answers, CompactMessage, CompactRecord, MultiAgentSnapshot

SWARM_WORKFLOW_NAME = "tether.swarm"
SNAPSHOT_VERSION = 1
DEFAULT_TURNS_PER_EXECUTION = 100
"""Member turns per workflow execution before the swarm run continues as new (option ``turns_per_execution``)."""


@workflow.defn(name=SWARM_WORKFLOW_NAME)
class SwarmWorkflow(MultiAgentWorkflow[SwarmSpec]):
    """One run of a registered swarm, durable across workers, restarts and time."""

    WHAT = "swarm run"
    SHAPE = SnapshotShape("swarm", SWARM_KEY, SNAPSHOT_VERSION, "node_history")

    # -- run ------------------------------------------------------------------------------

    @workflow.run
    async def run(self, params: dict[str, Any]) -> MultiAgentSnapshot:
        # ``params``: swarm, config, run_id, task (JSON) or snapshot (compact), options, trace.
        spec, data, order = await self._load(params, SwarmSpec.from_dict, check_state, new_state)
        if data["status"] == "completed" or (data["status"] != "interrupted" and not begin(data)):
            return await self._done()  # finished, or stopped by a limit, earlier: the outcome stands
        while True:
            if data["status"] == "interrupted":
                responses = await self._wait_for_answers()
                begin(data)
            elif data["status"] == "executing":
                responses = None
            else:
                break
            running = data["running"]
            if running is None:
                if self._continue_as_new_due(self._option("turns_per_execution", DEFAULT_TURNS_PER_EXECUTION)):
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    workflow.continue_as_new({**params, "task": None, "snapshot": self.snapshot()})
                running = start_turn(spec, data, order)
                if running is None:
                    break
                self._done_here += 1
            await self._turn(running, responses)
        if data["status"] == "executing":
            data["status"] = "completed"
        return await self._done()

    async def _turn(self, running: Any, responses: Answers | None) -> None:
        """Run (or, with ``responses``, continue) one member turn as a child workflow and record it."""
        spec, data, order = self._state()
        name, n = str(running["member"]), int(running["n"])
        run_id = str(self._params["run_id"])
        child = self._child_params(f"{name}:{n}", {"agent": f"{self._params['swarm']}/{name}"}, nested=True)
        message = None if responses is not None else await self._prompt(running["input"])
        asked = f"the interrupted turn {n} of member {name!r}"
        self._prompt_child(child, responses, running.get("carried"), message, interrupted=asked, child_run="member run")
        try:
            out: AgentRunResult = await workflow.execute_child_workflow(WORKFLOW_NAME, child, id=child["run_id"])
        except ChildWorkflowError as exc:
            member_failed(data, name, str(exc.cause or exc))
            self._status = "done"
            raise ApplicationError(f"swarm run {run_id!r}: member {name!r} failed", type="SwarmMemberFailed", non_retryable=True) from exc
        turn: Turn = await self._local("tether.swarm_turn", TurnInput(member=name, out=child_outcome(out)))
        data["nodes"][name]["result"] = turn["result"]
        interrupted = out["stop_reason"] == "interrupt"
        record_turn(spec, data, order, name, n, interrupted=interrupted, handoff=turn["handoff"])
        if interrupted:
            data["running"].update(carried=out["run"], pending=out.get("interrupts") or [])

    async def _prompt(self, value: Any) -> CompactMessage:
        """A turn's prompt as a (compact) user message; a large one is made compact by an activity."""
        message = {"role": "user", "content": [{"text": value}] if isinstance(value, str) else list(value)}
        if len(canonical_json(message)) <= DEFAULT_INLINE_LIMIT:
            return message
        compact: CompactMessage = await self._local("tether.swarm_prompt", SwarmPromptInput(message=message))
        return compact

    # -- interrupts and queries (the handlers are RunWorkflow's) -----------------------------

    async def _wait_for_answers(self) -> Answers:
        def accept(responses: Answers) -> Answers:
            self._check_answers(responses)
            return responses

        return await self._take_answers(accept)

    def _check_answers(self, responses: Answers) -> None:
        """Refuse answers to interrupts the waiting member does not wait on (InterruptError)."""
        route_answers(answers_from(responses), {"member": self._pending_interrupts()}, "member of this swarm")

    def _pending_interrupts(self) -> list[CompactRecord]:
        """The interrupted member's pending interrupts (compact)."""
        running = (self._data or {}).get("running") or {}
        return list(running.get("pending") or [])


__all__ = ["SWARM_WORKFLOW_NAME", "SwarmWorkflow"]
