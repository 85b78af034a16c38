"""`MultiAgentBase`: what every multi-agent runnable (:class:`~tether.multiagent.Graph`,
:class:`~tether.multiagent.Swarm`) does the same way.

A multi-agent run's whole state is one :class:`~tether.multiagent.state.GraphRunState` (a JSON
object and an execution order). Given a pattern's three parts (a fresh state for a task,
validating a stored or snapshot state, and driving a state to its end as a stream of events),
this class supplies the rest once: ``__call__``, ``invoke_async``, ``stream_async``, ``resume``,
the choice between a run kept in memory and a durable run (:func:`.durable_graph.open_run`,
its recorder passed to the drive), interrupt answers given as the task, and ``take_snapshot`` /
``load_snapshot``. A new pattern subclasses it and writes only its own decisions.
"""

from __future__ import annotations

import contextlib
import copy
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from .._sync import run_sync
from ..answers import answer_list
from ..durable.compensation import CompensationReport
from ..durable.store import RunStore
from ..errors import PromptError, SnapshotError, StateError, TetherError
from ..events import final_result
from .compensation import compensate_multiagent
from .durable_graph import GraphRecorder, open_run
from .nodes import AgentTemplate
from .results import GraphResult
from .state import GraphRunState

R = TypeVar("R", bound=GraphResult)

ANSWER_AT = "responses[{i}].interruptResponse"
"""How a refusal names answer ``i`` of a multi-agent run (:mod:`tether.answers`)."""

RunEvent = dict[str, Any]
"""An event of a multi-agent run: ``node_start``, ``node_event``, ``node_result`` (and a swarm's
``handoff``), finally ``result`` with the run's result."""


class Described(Protocol):
    """A pattern's spec: the part of it its pure decision functions read, as JSON."""

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON (stored in the run's state for the inspector; never read back as code)."""
        ...


class MultiAgentBase(ABC, Generic[R]):
    """A multi-agent runnable: run it with ``x(task)``, ``invoke_async``, ``stream_async`` or
    ``resume``; move a run kept in memory with ``take_snapshot`` / ``load_snapshot``.

    One object may run several runs at once: a run's state lives in the run, and agents execute
    as fresh copies of their configuration. ``take_snapshot`` reads the state of the run started
    (or loaded) last.
    """

    kind: ClassVar[str]
    """The shape on the wire (:class:`~tether.runnable.Runnable`): ``"graph"``, ``"swarm"``."""
    label: ClassVar[str]
    """What the pattern is called in messages (``graph``, ``swarm``)."""
    state_key: ClassVar[str]
    """Where a durable run's head ``state`` holds the run's JSON."""
    snapshot_type: ClassVar[str]
    snapshot_version: ClassVar[int] = 1
    order_key: ClassVar[str]
    """The snapshot's key of the execution order."""
    no_state_error: ClassVar[type[TetherError]] = StateError
    """What ``take_snapshot`` raises before any run (kept per pattern: it is what callers catch)."""

    store: RunStore | None
    spec: Described
    _templates: dict[str, AgentTemplate]
    """The agent configurations, by node or member (the first with a store gives the default store)."""
    _current: GraphRunState | None

    # -- what a pattern supplies -----------------------------------------------------------------

    @abstractmethod
    def _new(self, task: Any) -> GraphRunState:
        """The state of a fresh run of ``task`` (a checked string or content blocks)."""

    @abstractmethod
    def _restore(self, data: Any, order: Any, where: str) -> GraphRunState:
        """A stored or snapshot state, validated (SnapshotError naming ``where`` otherwise)."""

    @abstractmethod
    def _drive(
        self, run: GraphRunState, recorder: GraphRecorder | None, answers: list[dict[str, Any]] | None, forward: bool
    ) -> AsyncGenerator[RunEvent, None]:
        """Execute ``run`` to its end (or its next interrupt), yielding its events and finally
        ``result``; ``recorder``: the durable run's (None in memory); ``answers``: interrupt
        responses; ``forward``: also yield the agents' own events (``node_event``)."""

    @abstractmethod
    def child(self, step: str, where: str | None = None) -> object:
        """The nested part ``step`` (a node, a member): see :class:`~tether.runnable.Runnable`."""

    @abstractmethod
    def _result(self, run: GraphRunState, run_id: str | None) -> R:
        """The result of ``run``'s state."""

    # -- running ---------------------------------------------------------------------------------

    def __call__(self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None) -> R:
        """Run synchronously; see :meth:`invoke_async`."""
        return run_sync(self.invoke_async(task, run_id=run_id, parent_run_id=parent_run_id))

    async def invoke_async(self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None) -> R:
        """Run on ``task`` and return the result.

        Args:
            task: A string or content blocks. ``None`` continues the state loaded with
                :meth:`load_snapshot` (or, with ``run_id``, the stored run). A list of
                ``interruptResponse`` blocks answers the interrupts the run waits on (the
                result's ``interrupts``) and continues it.
            run_id: Make this a durable run in the runnable's store; an existing run of that id
                is resumed (``task`` must then be None).
            parent_run_id: With ``run_id``: the run this run is nested in.
        """
        answers = answer_list(task)
        resume = answers is not None and run_id is not None
        return await self._last(self._stream(None if answers is not None else task, run_id, parent_run_id, resume, answers, forward=False))

    def resume(self, run_id: str, responses: list[dict[str, Any]] | None = None) -> R:
        """Finish durable run ``run_id`` (in any process): finished node executions are read from
        the store, unfinished nested runs resume from their last step. A finished run returns
        its result.

        Args:
            run_id: The durable run.
            responses: ``interruptResponse`` blocks answering interrupts the run waits on (the
                result's ``interrupts``); each goes to the agent that raised it, whose run
                resumes with it.
        """
        return run_sync(self.resume_async(run_id, responses))

    async def resume_async(self, run_id: str, responses: list[dict[str, Any]] | None = None) -> R:
        """Async :meth:`resume`."""
        answers = None if responses is None else answer_list(responses)
        if responses is not None and answers is None:
            raise PromptError(f"{self.label}.resume: responses must be a list of interruptResponse blocks")
        return await self._last(self._stream(None, run_id, None, True, answers, forward=False))

    def compensate(self, run_id: str) -> CompensationReport:
        """Undo durable run ``run_id``'s effects: each node's (member's) nested run unwinds with
        its agent's compensations, the latest first, each undo at most once and recorded (see
        :mod:`tether.multiagent.compensation`)."""
        return run_sync(self.compensate_async(run_id))

    async def compensate_async(self, run_id: str) -> CompensationReport:
        """Async :meth:`compensate`."""
        return await compensate_multiagent(self._store(), run_id, self._templates, self.state_key)

    async def stream_async(
        self, task: Any = None, *, run_id: str | None = None, parent_run_id: str | None = None
    ) -> AsyncIterator[RunEvent]:
        """Run, yielding :data:`RunEvent` dicts; the parameters are :meth:`invoke_async`'s."""
        answers = answer_list(task)
        resume = answers is not None and run_id is not None
        stream = self._stream(None if answers is not None else task, run_id, parent_run_id, resume, answers, forward=True)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                yield event

    def resume_stream(self, prompt: Any, /, *, run_id: str) -> AsyncIterator[RunEvent]:
        """The events of continuing durable run ``run_id`` (``prompt``: ``interruptResponse``
        blocks answering its interrupts, or None), as :meth:`resume_async` runs it."""
        return self.stream_async(prompt, run_id=run_id)

    def owns_state(self, state: Mapping[str, Any]) -> bool:
        """Whether a stored run's agent state is a run of this pattern (the spec it keeps is this one's)."""
        stored = state.get(self.state_key)
        return isinstance(stored, dict) and stored.get("spec") == self.spec.to_dict()

    def cancel(self) -> None:
        """Refused (StateError): a multi-agent run stops at its nodes' ends, not on request."""
        raise StateError(f"a {self.label} run cannot be cancelled; only agent runs can")

    async def _last(self, events: AsyncGenerator[RunEvent, None]) -> R:
        """The ``result`` of a run's events (drained to the end)."""
        return cast(R, await final_result(events))

    def _store(self) -> RunStore:
        if self.store is None:
            for template in self._templates.values():
                if template.agent.store is not None:
                    self.store = template.agent.store
                    break
            else:
                from ..durable.runner import default_store

                self.store = default_store()
        return self.store

    async def _stream(
        self,
        task: Any,
        run_id: str | None,
        parent_run_id: str | None,
        resume: bool,
        answers: list[dict[str, Any]] | None,
        *,
        forward: bool,
    ) -> AsyncGenerator[RunEvent, None]:
        """The events of a run: kept in memory (``run_id`` None) or durable (leased, loaded or
        created, and recorded: the one durable binding of every pattern)."""
        if run_id is None:
            if parent_run_id is not None:
                raise PromptError(f"parent_run_id names the parent of a durable {self.label} run: pass run_id too")
            if task is None:
                run = self._current
                if run is None or run.data["status"] == "completed":
                    raise PromptError(
                        f"{self.label}(task): no task, and no unfinished {self.label} state loaded (load_snapshot) to continue"
                    )
            else:
                run = self._new(check_task(task))
            self._current = run
            async for event in self._drive(run, None, answers, forward):
                yield event
            return
        opened = open_run(
            self._store(),
            run_id,
            task if task is None else check_task(task),
            parent_run_id,
            resume=resume,
            new=self._new,
            restore=self._restore,
            key=self.state_key,
        )
        with opened as (run, recorder):
            self._current = run
            run.data["spec"] = self.spec.to_dict()  # what the inspector shows (never read back as code)
            if run.data["status"] == "completed":
                yield {"type": "result", "result": self._result(run, recorder.run_id)}
                return
            async for event in self._drive(run, recorder, answers, forward):
                yield event

    # -- snapshots -------------------------------------------------------------------------------

    def take_snapshot(self) -> dict[str, Any]:
        """The state of the run started or loaded last, as JSON (``load_snapshot`` takes it back).

        Raises:
            StateError: Nothing ran and nothing was loaded (a swarm raises SnapshotError).
        """
        run = self._current
        if run is None:
            raise self.no_state_error(f"take_snapshot: this {self.label} has no state yet (run it or load_snapshot first)")
        return {
            "type": self.snapshot_type,
            "version": self.snapshot_version,
            "state": copy.deepcopy(run.flush()),
            self.order_key: list(run.order),
        }

    def load_snapshot(self, snapshot: dict[str, Any]) -> None:
        """Make ``snapshot`` (from :meth:`take_snapshot`, possibly of another object of the same
        shape, in another process) this runnable's state; calling it with no task then continues
        it: completed executions are kept, executions that were in flight run again.

        Raises:
            SnapshotError: Not a snapshot of this pattern, or one naming nodes it does not have.
        """
        if not isinstance(snapshot, dict) or snapshot.get("type") != self.snapshot_type:
            raise SnapshotError(f"load_snapshot: not a {self.label} snapshot (type must be {self.snapshot_type!r})")
        if snapshot.get("version") != self.snapshot_version:
            raise SnapshotError(f"load_snapshot: unsupported {self.label} snapshot version {snapshot.get('version')!r}")
        self._current = self._restore(snapshot.get("state"), snapshot.get(self.order_key), "snapshot")


def check_task(task: Any) -> Any:
    """``task`` if it is a string or a list of content blocks (a copy); PromptError otherwise."""
    if isinstance(task, str):
        return task
    if isinstance(task, list) and all(isinstance(b, dict) for b in task):
        return copy.deepcopy(task)
    raise PromptError(f"a graph task must be a string or a list of content blocks, got {type(task).__name__}")


__all__ = ["ANSWER_AT", "MultiAgentBase", "RunEvent", "check_task"]
