"""`RunWorkflow`: the skeleton the agent, graph and swarm workflows share.

Every Tether workflow stops for interrupts the same way and answers the same queries, so the
handlers live here, once, and each workflow supplies only what differs through a few hooks:

- the ``answer_interrupts`` update (its validator refuses answers the run does not wait on) and
  the ``answer_interrupts_signal`` signal, both queueing the answers (and the differences their
  sender accepts, ``allow``) in an :class:`~tether.temporal.inbox.AnswerInbox` (hook
  :meth:`RunWorkflow._check_answers`); an update whose batch the workflow refuses when it takes
  it fails with that error;
- the ``status`` query, ``{"status", "interrupts"}`` (hook :meth:`RunWorkflow._pending_interrupts`)
  and the ``snapshot`` query (hooks :meth:`RunWorkflow._started`, :meth:`RunWorkflow._snapshot`).

Temporal collects a workflow's handlers from its class and every base class (handlers are
registered by the names given to the decorators), so a subclass declares none of these again;
it overrides the undecorated hooks only (overriding a decorated method without its decorator
is refused by ``@workflow.defn``). The ``@workflow.run`` method stays on each subclass, where
Temporal requires it. The handler names and their JSON are those the workflows always had:
clients and running workflows depend on them.

The helpers below are the other parts the three share: the parameters of a nested child
workflow (its run id is the one a local durable parent gives it), short local activities, and
the end of a graph or swarm run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar, Generic, TypeVar, cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from ..answers import allow_names
    from ..durable.ids import child_run_id
    from ..errors import InterruptError, PromptError, TetherError
    from .activity_io import ChildOutcome
    from .errors import to_failure
    from .inbox import AnswerInbox, Answers, Batch
    from .shapes import AgentRunResult, CompactRecord, MultiAgentSnapshot, MultiAgentState, RunStatus

T = TypeVar("T")
S = TypeVar("S")
SnapshotT = TypeVar("SnapshotT")
LOCAL_TIMEOUT = timedelta(seconds=60)
"""Start-to-close timeout of the short bookkeeping activities graph and swarm runs make local."""
LOCAL_RETRY = RetryPolicy(maximum_attempts=5)


class RunWorkflow(Generic[SnapshotT]):
    """The interrupt handlers, the queries and the shared helpers of a Tether workflow (whose
    ``snapshot`` query answers a ``SnapshotT``)."""

    WHAT: ClassVar[str] = "run"
    """What the workflow runs, for messages: ``"run"`` (an agent's), ``"graph run"``, ``"swarm run"``."""

    def __init__(self) -> None:
        self._params: dict[str, Any] = {}  # the workflow's parameters (JSON), read key by key
        self._status = "starting"
        self._inbox = AnswerInbox()
        self._done_here = 0  # units of work (model calls, node executions, member turns) in this execution

    # -- hooks ----------------------------------------------------------------------------

    def _started(self) -> bool:
        """The run's state exists (the ``snapshot`` query can answer)."""
        raise NotImplementedError

    def _snapshot(self) -> SnapshotT:
        """The ``snapshot`` query's answer once the run started."""
        raise NotImplementedError

    def _pending_interrupts(self) -> list[CompactRecord]:
        """The interrupts the run waits on (compact records), while it is interrupted."""
        raise NotImplementedError

    def _check_answers(self, responses: Answers) -> None:
        """Raise a ``TetherError`` for answers the waiting run cannot take."""
        raise NotImplementedError

    def _label(self) -> str:
        """The run, for the refusal of answers: ``"graph run 'g1'"``."""
        return f"{self.WHAT} {self._params.get('run_id')!r}"

    # -- interrupts -----------------------------------------------------------------------

    @workflow.update(name="answer_interrupts")
    async def answer_interrupts(self, responses: Answers, allow: list[str] | None = None) -> RunStatus:
        """Answer the run's interrupts (``interruptResponse`` bodies: ``{interruptId, response}``);
        the run (a graph: each node that asked one; a swarm: the waiting member) continues with them.

        An agent's run first judges the resume against the code of the worker running it
        (:mod:`tether.manifest`): an incompatible change fails the update with
        ``IncompatibleResumeError`` (nothing changed, the run still waits) unless ``allow`` names
        every blocking difference. ``allow`` is a second argument, so senders of one still work.
        """
        refused = await self._inbox.taken(self._inbox.post(responses, allow))
        if refused is not None:
            raise to_failure(refused)
        return self.status()

    @answer_interrupts.validator
    def _validate_answers(self, responses: Answers, allow: list[str] | None = None) -> None:
        self._inbox.refuse_unless_waiting(self._status == "interrupted", self._label(), self._status)
        try:
            if allow is not None and not isinstance(allow, list):
                raise InterruptError(f"allow must be a list of difference names, got {allow!r:.80}")
            allow_names(allow, InterruptError)
            self._check_answers(responses)
        except TetherError as exc:
            raise to_failure(exc) from None

    @workflow.signal(name="answer_interrupts_signal")
    def answer_interrupts_signal(self, responses: Answers, allow: list[str] | None = None) -> None:
        """Fire-and-forget variant of :meth:`answer_interrupts` (invalid answers, and answers an
        incompatible deploy refuses, are logged and ignored)."""
        self._inbox.post(responses, allow if isinstance(allow, list) else None)

    async def _take_answers(self, apply: Callable[[Answers], T]) -> T:
        """Wait, interrupted, for the next batch of answers that ``apply`` accepts."""
        self._status = "interrupted"
        taken = await self._inbox.take(apply, f"{self.WHAT} {self._params.get('run_id')}")
        self._status = "running"
        return taken

    async def _take_checked_answers(self, apply: Callable[[Batch], Awaitable[T]]) -> T:
        """:meth:`_take_answers` with an ``apply`` that reads the whole batch (its ``allow``) and
        may run activities (the agent workflow's check of the worker's code)."""
        self._status = "interrupted"
        taken = await self._inbox.take_batch(apply, f"{self.WHAT} {self._params.get('run_id')}")
        self._status = "running"
        return taken

    # -- queries --------------------------------------------------------------------------

    @workflow.query(name="status")
    def status(self) -> RunStatus:
        """``{"status": "starting" | "running" | "interrupted" | "done", "interrupts": [...]}``
        (the pending interrupts, compact, while interrupted)."""
        return {"status": self._status, "interrupts": self._pending_interrupts() if self._status == "interrupted" else []}

    @workflow.query(name="snapshot")
    def snapshot(self) -> SnapshotT:
        """The run's current state, compact (the client expands it): an agent's carried state, a
        graph's or swarm's ``take_snapshot()`` shape."""
        if not self._started():
            raise ApplicationError(f"the {self.WHAT} has not started yet; query again in a moment", type="NotReady")
        return self._snapshot()

    # -- helpers --------------------------------------------------------------------------

    def _child_params(self, step: str, lead: dict[str, Any], *, nested: bool) -> dict[str, Any]:
        """The parameters of a child workflow (``lead`` first): this run's config, options and
        trace, and the run id a local durable parent gives the child of ``step``."""
        run_id = str(self._params.get("run_id"))
        child: dict[str, Any] = {
            **lead,
            "config": self._params.get("config") or {},
            "run_id": child_run_id(run_id, step),
            "options": self._params.get("options") or {},
        }
        if nested:
            child["nested"] = True
        child["parent_run_id"] = run_id
        if self._params.get("trace"):
            child["trace"] = self._params["trace"]
        return child

    def _prompt_child(
        self, child: dict[str, Any], answers: Answers | None, carried: Any, message: Any, *, interrupted: str, child_run: str
    ) -> None:
        """Give a nested agent child its prompt: the ``answers`` to its interrupts with the state it
        stopped in (``carried``), or a new user ``message``.

        An ``interrupted`` child (``"the interrupted turn 2 of member 'a'"``) without carried state
        was moved here from a durable local run, whose store keeps its ``child_run`` (``"member
        run"``): a ``PromptError``.
        """
        if answers is None:
            child.update(prompt={"kind": "messages", "messages": [message]}, carried=None)
            return
        if carried is None:
            where = f"a durable local {self.WHAT}: its {child_run} lives in that run's store; finish it there"
            raise to_failure(PromptError(f"{interrupted} was moved from {where}"))
        child.update(prompt={"kind": "interrupt_responses", "responses": answers}, carried=carried)

    async def _local(self, name: str, params: Any) -> Any:
        """Run a short bookkeeping activity as a local activity."""
        return await workflow.execute_local_activity(name, params, start_to_close_timeout=LOCAL_TIMEOUT, retry_policy=LOCAL_RETRY)

    def _option(self, name: str, default: int) -> int:
        """A per-execution limit of the run's options (``default`` when unset)."""
        return int((self._params.get("options") or {}).get(name) or default)

    def _continue_as_new_due(self, limit: int) -> bool:
        """After ``limit`` units of work (model calls, node executions, member turns) in this
        execution, or when Temporal suggests it (the history grew large), the run goes on in a
        fresh execution carrying its state."""
        return self._done_here >= limit or workflow.info().is_continue_as_new_suggested()

    async def _done(self) -> SnapshotT:
        """End the run once its handlers finished; its result is its snapshot."""
        self._status = "done"
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.snapshot()


@dataclass(frozen=True)
class SnapshotShape:
    """What tells a graph's run from a swarm's: its ``kind`` (``graph``, ``swarm``: the key of
    its name in the workflow's parameters), its snapshot's ``type`` and ``version`` and the
    snapshot's key of the order of executions (``execution_order``, ``node_history``)."""

    kind: str
    type: str
    version: int
    order_key: str


class MultiAgentWorkflow(RunWorkflow[MultiAgentSnapshot], Generic[S]):
    """A graph or swarm run: its spec (``S``), its state (the JSON a local graph or swarm holds)
    and its order of executions, answered by the ``snapshot`` query in the local
    ``take_snapshot()`` shape (compact: the client expands it)."""

    SHAPE: ClassVar[SnapshotShape]

    def __init__(self) -> None:
        super().__init__()
        self._spec: S | None = None
        self._data: MultiAgentState | None = None
        self._order: list[str] = []

    async def _load(
        self,
        params: dict[str, Any],
        spec_of: Callable[[Any], S],
        check: Callable[[S, Any, Any, str], Any],
        new: Callable[[S, Any], MultiAgentState],
    ) -> tuple[S, MultiAgentState, list[str]]:
        """Start the run: its spec (``spec_of`` the ``tether.describe_<kind>`` activity's answer)
        and its state, the parameters' snapshot's (``check``-ed against the spec) or a ``new``
        one on the task."""
        kind, order_key = self.SHAPE.kind, self.SHAPE.order_key
        self._params = params
        spec = self._spec = spec_of(
            await self._local(f"tether.describe_{kind}", {kind: params[kind], "config": params.get("config") or {}})
        )
        snapshot = params.get("snapshot")
        try:
            if snapshot is not None:
                check(spec, snapshot.get("state"), snapshot.get(order_key), "snapshot")
                data, order = snapshot["state"], list(snapshot[order_key])
            else:
                if params.get("task") is None:
                    raise PromptError(f"{self.WHAT} {params.get('run_id')!r}: no task and no snapshot to continue")
                data, order = new(spec, params["task"]), []
        except TetherError as exc:
            raise to_failure(exc) from None
        self._data, self._order = data, order
        self._status = "running"
        return spec, data, order

    def _state(self) -> tuple[S, MultiAgentState, list[str]]:
        assert self._spec is not None and self._data is not None
        return self._spec, self._data, self._order

    def _started(self) -> bool:
        return self._data is not None

    def _snapshot(self) -> MultiAgentSnapshot:
        snapshot: Any = {
            "type": self.SHAPE.type,
            "version": self.SHAPE.version,
            "state": self._data,
            self.SHAPE.order_key: list(self._order),
        }
        return cast(MultiAgentSnapshot, snapshot)


def child_outcome(out: AgentRunResult) -> ChildOutcome:
    """What a graph or swarm reads of a nested agent workflow's result (its state only of the run)."""
    read: Any = {key: out.get(key) for key in ("stop_reason", "message", "metrics", "invocation", "interrupts")}
    read["run"] = {"state": out["run"].get("state")}
    return cast(ChildOutcome, read)


__all__ = ["LOCAL_RETRY", "LOCAL_TIMEOUT", "MultiAgentWorkflow", "RunWorkflow", "SnapshotShape", "child_outcome"]
