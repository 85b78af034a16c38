"""`TetherClient`: start, finish, answer, inspect, promote and export agent runs on Temporal.

A run is a workflow whose id is the run id. ``execute`` runs an invocation to its end and
returns an :class:`~tether.AgentResult` (the same object a local call returns);
``answer_interrupts`` answers a waiting run through an update (or a signal); ``snapshot``
reads the live run through a query. ``promote`` moves a local run (a durable store's run, a
snapshot or a checkpoint) into Temporal, and ``snapshot`` / ``AgentResult`` carry it back;
``fork`` starts a new run from a step of another (:mod:`tether.temporal.fork`).
Prompts are offloaded to the blob store like everything else, so a huge prompt is no
problem for history either. A run that failed with a Tether error raises that same error class
here (:func:`tether.temporal.errors.from_failure`), with the Temporal failure as its cause.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError

from .._prompt import normalize_prompt
from ..answers import allow_names, bodies_of
from ..checkpoint import Checkpoint
from ..errors import ConfigurationError, PromptError, RunEndedError, RunNotFoundError
from ..interrupts import Interrupt
from ..loop.tracing import NULL_SPAN, NULL_TRACER, Span, Tracer, span_ids
from ..result import AgentResult
from ..snapshot import Snapshot
from ..telemetry import resolve_tracer
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT
from .compensation_client import compensate_ended
from .errors import from_failure
from .payloads import DEFAULT_MAX_VALUE_BYTES, expand_interrupt
from .policy import PayloadPolicy
from .run_kinds import KINDS, MultiAgentKind, RunKind
from .shapes import WORKFLOW_NAME, Answers, CarriedState, Config, MultiAgentSnapshot, RunStatus, WirePrompt, WorkflowOptions, WorkflowParams
from .wire import carried_from_run, run_from_checkpoint, run_from_snapshot, snapshot_of

if TYPE_CHECKING:
    from ..multiagent.graph import GraphResult
    from ..multiagent.swarm import SwarmResult
    from .fork import ForkStep

RunHandle: TypeAlias = WorkflowHandle[Any, dict[str, Any]]
"""The handle of a run's workflow (its result is JSON: read it with the client's ``run_result``)."""

__all__ = ["RunHandle", "TetherClient"]


class TetherClient:
    """Agent runs on a Temporal task queue served by workers of :func:`tether.temporal.create_worker`."""

    def __init__(
        self,
        client: Client,
        blobs: BlobStore | PayloadPolicy,
        task_queue: str,
        *,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        options: WorkflowOptions | None = None,
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
        tracer: Tracer | None = None,
    ) -> None:
        """A client of the agent runs on ``task_queue``.

        Args:
            client: A connected Temporal client.
            blobs: The blob store the workers of ``task_queue`` use, or a
                :class:`~tether.temporal.policy.PayloadPolicy` (the store and both limits).
            task_queue: Where the agent workers listen.
            inline_limit: Values larger than this (bytes of JSON) travel as blob references.
            options: Default workflow options of the runs this client starts.
            max_value_bytes: The hard limit of one value this client sends (a prompt part, an
                interrupt answer, a promoted run's state value): a larger one raises
                ``PayloadTooLargeError`` naming it (None: no limit).
            tracer: Opens the ``invoke_agent`` span of each invocation this client starts; its
                ids travel with the workflow to the activities, whose ``chat`` and
                ``execute_tool`` spans go under it (default: the global tracer provider's, if the
                application set one, else no tracing). See :mod:`tether.telemetry`.
        """
        self.client = client
        self.payloads = PayloadPolicy.of(blobs, inline_limit, max_value_bytes)
        self.task_queue = task_queue
        self.options: WorkflowOptions = {**(options or {})}
        self.tracer = tracer

    @property
    def blobs(self) -> BlobStore:
        """The blob store of the runs' large values."""
        return self.payloads.blobs

    @property
    def inline_limit(self) -> int:
        return self.payloads.inline_limit

    @property
    def max_value_bytes(self) -> int | None:
        return self.payloads.max_value_bytes

    # -- starting -------------------------------------------------------------------------

    def _prompt(self, prompt: Any) -> tuple[WirePrompt, CarriedState | None]:
        normalized = normalize_prompt(prompt)
        if normalized.kind == "checkpoint":
            carried = self._carried(run_from_checkpoint(normalized.checkpoint))
            return {"kind": "continue"}, carried
        return {
            "kind": normalized.kind,
            "messages": [self.payloads.compact_message(message, f"prompt[{i}]") for i, message in enumerate(normalized.messages)],
            "responses": self._compact_responses(normalized.responses),
        }, None

    def _carried(self, run: Any) -> CarriedState:
        return carried_from_run(self.payloads, run)

    def _compact_responses(self, responses: Answers) -> Answers:
        """Interrupt answers with large responses offloaded (the workflow keeps them as references)."""
        out: Answers = []
        for item in bodies_of(responses):
            if isinstance(item, dict) and "response" in item:
                field = f"the response to interrupt {item.get('interruptId')}"
                item = {**item, "response": self.payloads.offload(item["response"], field)}
            out.append(item)
        return out

    async def start(
        self,
        agent: str,
        prompt: Any,
        *,
        run_id: str,
        config: Config | None = None,
        options: WorkflowOptions | None = None,
        carried: CarriedState | None = None,
        allow: list[str] | None = None,
        **start_options: Any,
    ) -> RunHandle:
        """Start one invocation of ``agent`` as workflow ``run_id``; returns its handle.

        ``prompt`` is anything ``Agent.__call__`` accepts (a ``checkpointResume`` block
        promotes that checkpoint). ``carried`` is a compact run state to continue from (see
        :meth:`promote` and :meth:`continue_run`): it is judged against the worker's code first
        (:mod:`tether.manifest`; an incompatible change fails the run with
        ``IncompatibleResumeError`` unless ``allow`` names every blocking difference). With
        tracing on, the invocation's span ends once the workflow is started (its activities'
        spans, children of it, come later).
        """
        span = self._invocation_span(agent, run_id, carried)
        try:
            handle = await self._start(agent, prompt, run_id, config, options, carried, span, start_options, allow)
        except Exception as exc:
            span.end(exc)
            raise
        span.end()
        return handle

    def _invocation_span(self, agent: str, run_id: str, carried: CarriedState | None) -> Span:
        tracer = resolve_tracer(self.tracer)
        if tracer is NULL_TRACER:
            return NULL_SPAN
        attributes: dict[str, str | bool] = {
            "tether.run_id": run_id if isinstance(run_id, str) else "",
            "tether.resumed": carried is not None,
            "tether.temporal": True,
        }
        return tracer.start_span("invocation", agent, attributes)

    async def _start(
        self,
        agent: str,
        prompt: Any,
        run_id: str,
        config: Config | None,
        options: WorkflowOptions | None,
        carried: CarriedState | None,
        span: Span,
        start_options: dict[str, Any],
        allow: list[str] | None = None,
    ) -> RunHandle:
        if not isinstance(run_id, str) or not run_id:
            raise ConfigurationError(f"run_id must be a non-empty string, got {run_id!r}")
        encoded, from_checkpoint = self._prompt(prompt)
        if from_checkpoint is not None:
            if carried is not None:
                raise PromptError("a checkpointResume prompt cannot be combined with carried state")
            carried = from_checkpoint
        params: WorkflowParams = {
            "agent": agent,
            "config": config or {},
            "run_id": run_id,
            "prompt": encoded,
            "carried": carried,
            "options": {**self.options, **(options or {})},
        }
        ids = span_ids(span)
        if ids is not None:
            params["trace"] = ids
        if allow is not None:
            params["allow"] = allow_names(allow)
        handle: RunHandle = await self.client.start_workflow(
            WORKFLOW_NAME, params, id=run_id, task_queue=self.task_queue, result_type=dict, **start_options
        )
        return handle

    async def execute(self, agent: str, prompt: Any, *, run_id: str, config: Config | None = None, **kwargs: Any) -> AgentResult:
        """Start an invocation and wait for its :class:`~tether.AgentResult` (the invocation's
        span, with tracing on, lasts until the result)."""
        options: WorkflowOptions | None = kwargs.pop("options", None)
        carried: CarriedState | None = kwargs.pop("carried", None)
        allow: list[str] | None = kwargs.pop("allow", None)
        span = self._invocation_span(agent, run_id, carried)
        try:
            await self._start(agent, prompt, run_id, config, options, carried, span, kwargs, allow)
            result = await self.result(run_id)
        except Exception as exc:
            span.end(exc)
            raise
        span.set_attributes({"tether.stop_reason": result.stop_reason, "tether.cycles": result.metrics.invocation.cycle_count})
        span.end()
        return result

    async def continue_run(
        self, agent: str, prompt: Any, *, previous_run_id: str, run_id: str, config: Config | None = None, **kwargs: Any
    ) -> RunHandle:
        """Start the next turn of a finished run (workflow ``previous_run_id``) as workflow ``run_id``."""
        raw = await self._raw_result(previous_run_id)
        # The carried state of the finished run (the workflow's result, as JSON); settings None
        # makes the next run read the agent's settings again: its config may differ.
        carried = cast(CarriedState, {**raw["run"], "settings": None})
        return await self.start(agent, prompt, run_id=run_id, config=config, carried=carried, **kwargs)

    async def promote(
        self,
        agent: str,
        source: Snapshot | Checkpoint | dict[str, Any],
        *,
        run_id: str,
        prompt: Any = None,
        config: Config | None = None,
        **kwargs: Any,
    ) -> RunHandle:
        """Continue a local run on Temporal from a snapshot or a checkpoint (object or dict).

        ``prompt`` is what the local agent would be called with next: ``None`` to continue a
        checkpoint or to wait for the answers of an interrupted run, interrupt responses, or a
        new prompt for a finished run.
        """
        is_checkpoint = isinstance(source, Checkpoint) or (isinstance(source, dict) and "position" in source)
        run = run_from_checkpoint(source) if is_checkpoint else run_from_snapshot(source)  # type: ignore[arg-type]
        run.run_id = run_id
        carried = self._carried(run)
        return await self.start(agent, prompt, run_id=run_id, config=config, carried=carried, **kwargs)

    async def promote_stored(
        self,
        agent: str,
        store: Any,
        stored_run_id: str,
        *,
        run_id: str | None = None,
        prompt: Any = None,
        config: Config | None = None,
        **kwargs: Any,
    ) -> RunHandle:
        """Continue a durable local run (``tether.durable`` store, e.g. ``SQLiteStore``) on Temporal.

        The run keeps its id (``run_id`` defaults to ``stored_run_id``). The store's lease is
        taken while the run is read, so a local process still driving it is refused.
        """
        from ..durable.session import run_state_of

        with store.lease(stored_run_id):
            stored = store.load(stored_run_id)
        if stored is None:
            raise RunNotFoundError(f"no run {stored_run_id!r} in the store; nothing to promote")
        run = run_state_of(stored)
        run.run_id = run_id or stored_run_id
        carried = self._carried(run)
        manifest = stored.head.get("manifest")
        if isinstance(manifest, dict):  # the run's manifest: the workflow judges the worker's code against it
            carried["manifest"] = manifest
        return await self.start(agent, prompt, run_id=run.run_id, config=config, carried=carried, **kwargs)

    async def fork(
        self, run_id: str, at: int, *, new_run_id: str | None = None, temporal_run_id: str | None = None, **kwargs: Any
    ) -> RunHandle:
        """Start a new run from step ``at`` of agent run ``run_id``, beside it (the original is only
        read); its handle. ``new_run_id`` defaults to ``f"{run_id}.fork-{n}"``; ``at`` is a step of
        :meth:`fork_steps` (see :mod:`tether.temporal.fork` for what a step is on Temporal).

        Raises:
            RunNotFoundError: No workflow ``run_id``.
            ForkError: ``at`` is not a step of the run, ``new_run_id`` is taken, or the run is not
                an agent run whose history this code replays.
        """
        from .fork import fork_run

        return await fork_run(self, run_id, at, new_run_id=new_run_id, temporal_run_id=temporal_run_id, **kwargs)

    async def fork_steps(self, run_id: str, *, temporal_run_id: str | None = None) -> list[ForkStep]:
        """The steps of agent run ``run_id`` a :meth:`fork` can start from, in order (derived from
        its event history; the run may still be going on)."""
        from .fork import fork_steps

        return await fork_steps(self, run_id, temporal_run_id=temporal_run_id)

    # -- results --------------------------------------------------------------------------

    async def _raw_result(self, run_id: str) -> Any:
        handle = self.client.get_workflow_handle(run_id, result_type=dict)
        try:
            raw = await handle.result()
        except WorkflowFailureError as exc:
            error = from_failure(exc)
            if error is None:
                raise
            raise error from exc
        return raw

    async def result(self, run_id: str) -> AgentResult:
        """Wait for run ``run_id``'s invocation to end; its :class:`~tether.AgentResult`."""
        result: AgentResult = await self.run_result("agent", run_id)
        return result

    async def run_result(self, kind: str, run_id: str) -> Any:
        """Wait for run ``run_id`` of ``kind`` to end; the result a local call returns.

        Args:
            kind: ``"agent"`` (an :class:`~tether.AgentResult`), ``"graph"`` (a
                :class:`~tether.multiagent.GraphResult`) or ``"swarm"`` (a
                :class:`~tether.multiagent.SwarmResult`). A graph or swarm run stopped by a limit
                returns a result with status ``failed``, as locally.
            run_id: The run's id (its workflow id).

        Raises:
            TetherError: The run failed with a Tether error (a graph's node's or a swarm's
                member's error class when one of them failed).
        """
        return _kind(kind).result(self.payloads, await self._raw_result(run_id), run_id)

    async def compensate(self, run_id: str) -> dict[str, Any]:
        """Undo ended agent run ``run_id``'s performed effects with its tools' compensations, one
        activity per undo, newest first, once however often asked (:mod:`tether.temporal.compensation_client`);
        the unwinding's record ``{"trigger", "plan", "undos", "status"}``."""
        return await compensate_ended(self.client, self.task_queue, run_id, dict(self.options))

    async def final_snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The snapshot of a finished invocation (needs no worker)."""
        raw = await self._raw_result(run_id)
        return snapshot_of(self.blobs, raw["run"], app_data)

    # -- live runs ------------------------------------------------------------------------

    async def status(self, run_id: str) -> RunStatus:
        """``{"status": ..., "interrupts": [...]}`` of a live run (a query; reasons expanded)."""
        handle = self.client.get_workflow_handle(run_id)
        status: RunStatus = await handle.query("status", result_type=dict)
        status["interrupts"] = [expand_interrupt(self.blobs, item) for item in status.get("interrupts") or []]
        return status

    async def wait_for_interrupts(self, run_id: str, *, timeout: float = 60.0, poll: float = 0.05) -> list[Interrupt]:
        """Wait until run ``run_id`` stops for interrupts; returns them.

        Raises:
            RunEndedError: The run ended (completed, failed, cancelled, terminated, timed out)
                without stopping for interrupts: it never will, so this does not wait on.
            RunNotFoundError: There is no workflow ``run_id``.
            TimeoutError: ``timeout`` seconds passed with the run still running.
        """
        handle = self.client.get_workflow_handle(run_id)
        async with asyncio.timeout(timeout):
            while True:
                try:
                    description = await handle.describe()
                except RPCError as exc:
                    if "not found" in str(exc).lower():
                        raise RunNotFoundError(f"no workflow {run_id!r} on this Temporal namespace; start the run first") from exc
                    raise
                if description.status is not None and description.status != WorkflowExecutionStatus.RUNNING:
                    raise RunEndedError(
                        f"run {run_id!r} has ended ({description.status.name.lower()}) and will not stop for interrupts; "
                        "read its result (TetherClient.result) instead"
                    )
                try:
                    status = await self.status(run_id)
                except Exception:  # the workflow may not have run its first task yet
                    status = {"status": "starting", "interrupts": []}
                if status["status"] == "interrupted":
                    return [Interrupt.from_dict(item) for item in status["interrupts"]]
                await asyncio.sleep(poll)

    async def answer_interrupts(self, run_id: str, responses: Answers, *, allow: list[str] | None = None) -> RunStatus:
        """Answer interrupts through an update; refused (with the reason) when the answers are invalid.

        The run first judges the resume against the code of the worker running it (see
        :mod:`tether.manifest`): an incompatible change (a pending call's tool gone, a required
        parameter added under it, its effect contract weakened) refuses the answers with
        ``IncompatibleResumeError`` naming every difference; the run still waits, unchanged.

        Args:
            run_id: The waiting run.
            responses: ``interruptResponse`` blocks or their bodies (``{interruptId, response}``).
            allow: Incompatible differences to accept, by name (``"tool_removed:charge"``) or code.
        """
        handle = self.client.get_workflow_handle(run_id)
        compact = self._compact_responses(responses)
        args: list[Any] = [compact] if allow is None else [compact, allow_names(allow)]
        try:
            outcome: RunStatus = await handle.execute_update("answer_interrupts", args=args, result_type=dict)
        except WorkflowUpdateFailedError as exc:
            error = from_failure(exc)
            if error is None:
                raise
            raise error from exc
        return outcome

    async def signal_interrupts(self, run_id: str, responses: Answers, *, allow: list[str] | None = None) -> None:
        """Answer interrupts through a signal (fire and forget: answers the run refuses, invalid
        or refused by an incompatible deploy, are logged by the worker and skipped).

        Args:
            run_id: The waiting run.
            responses: ``interruptResponse`` blocks or their bodies.
            allow: Incompatible differences to accept (see :meth:`answer_interrupts`).
        """
        handle = self.client.get_workflow_handle(run_id)
        compact = self._compact_responses(responses)
        await handle.signal("answer_interrupts_signal", args=[compact] if allow is None else [compact, allow_names(allow)])

    async def snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The current snapshot of run ``run_id`` (a query; works on running and finished runs)."""
        snapshot: Snapshot = await self.run_snapshot("agent", run_id, app_data)
        return snapshot

    async def run_snapshot(self, kind: str, run_id: str, app_data: dict[str, Any] | None = None) -> Any:
        """The current state of run ``run_id`` of ``kind`` (a query; works on running, waiting and
        finished runs), in the shape a local object takes.

        Args:
            kind: ``"agent"`` (a :class:`~tether.Snapshot` with ``app_data``), ``"graph"`` or
                ``"swarm"`` (the dict a local ``take_snapshot()`` returns: ``load_snapshot`` takes
                it, and so does :meth:`start_run`'s ``snapshot=``).
            run_id: The run's id.
            app_data: The application's JSON to put in an agent's snapshot.
        """
        handle = self.client.get_workflow_handle(run_id)
        live = await handle.query("snapshot", result_type=dict)
        return _kind(kind).snapshot(self.payloads, live, app_data)

    # -- graphs and swarms ----------------------------------------------------------------

    async def start_run(
        self,
        kind: str,
        name: str,
        task: Any = None,
        *,
        run_id: str,
        config: Config | None = None,
        snapshot: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        **start_options: Any,
    ) -> RunHandle:
        """Start a run of graph or swarm ``name`` as workflow ``run_id``; returns its handle.

        Each agent node execution (swarm: member turn) runs as a child agent workflow (a nested
        graph node as a child graph workflow) whose id is the run id a local durable graph or
        swarm gives it (``child_run_id(run_id, "<node>:<n>")``); a graph's callable nodes run
        in an activity.

        Args:
            kind: ``"graph"`` (workflow ``tether.graph``) or ``"swarm"`` (``tether.swarm``).
            name: The registered name (``AgentRegistry.register_graph`` / ``register_swarm``).
            task: The task: a string or content blocks (None: continue ``snapshot``).
            run_id: The run's id (its workflow id).
            config: The JSON config the workers build the graph or swarm (and its agents) from.
            snapshot: A snapshot to continue instead of a new task: what a local
                ``take_snapshot()`` or :meth:`run_snapshot` returned.
            options: Workflow options of the agents' workflows (over the client's).
            **start_options: Passed to ``temporalio.client.Client.start_workflow``.

        Raises:
            ConfigurationError: ``run_id`` is not a non-empty string.
            PromptError: Both or neither of ``task`` and ``snapshot``, or a task that is neither a
                string nor content blocks.
            SnapshotError: ``snapshot`` is not a snapshot of this kind.
            PayloadTooLargeError: The task is too large to travel.
        """
        run_kind = _kind(kind)
        if not isinstance(run_kind, MultiAgentKind):
            raise ConfigurationError(f"start_run starts graph and swarm runs, not {kind!r} runs; start an agent's invocation with start()")
        if not isinstance(run_id, str) or not run_id:
            raise ConfigurationError(f"run_id must be a non-empty string, got {run_id!r}")
        if (task is None) == (snapshot is None):
            raise PromptError(f"start_{kind}: pass a task to start a {kind} run, or a snapshot to continue one (not both)")
        options = {**self.options, **(options or {})}
        params = run_kind.params(self.payloads, name, task, snapshot, config=config or {}, run_id=run_id, options=options)
        handle: RunHandle = await self.client.start_workflow(
            run_kind.workflow, params, id=run_id, task_queue=self.task_queue, result_type=dict, **start_options
        )
        return handle

    async def execute_run(self, kind: str, name: str, task: Any = None, *, run_id: str, **kwargs: Any) -> Any:
        """:meth:`start_run` and :meth:`run_result`: the result a local graph or swarm call
        returns (a run waiting on interrupts keeps waiting until they are answered with
        :meth:`answer_interrupts`)."""
        await self.start_run(kind, name, task, run_id=run_id, **kwargs)
        return await self.run_result(kind, run_id)

    # The per-kind names of the generic methods (documented API; each is one call).

    async def start_swarm(self, swarm: str, task: Any = None, *, run_id: str, **kwargs: Any) -> RunHandle:
        """:meth:`start_run` of kind ``"swarm"``: each member turn runs as a child agent workflow
        of agent ``"<swarm>/<member>"``, whose id is ``child_run_id(run_id, "<member>:<n>")``."""
        return await self.start_run("swarm", swarm, task, run_id=run_id, **kwargs)

    async def execute_swarm(self, swarm: str, task: Any = None, *, run_id: str, **kwargs: Any) -> SwarmResult:
        """:meth:`execute_run` of kind ``"swarm"``: the :class:`~tether.multiagent.SwarmResult` a local
        ``swarm(task)`` returns (a run stopped by a limit has status ``failed``, as locally; a
        member's interrupts wait for :meth:`answer_interrupts` on the swarm's run id)."""
        return cast("SwarmResult", await self.execute_run("swarm", swarm, task, run_id=run_id, **kwargs))

    async def swarm_result(self, run_id: str) -> SwarmResult:
        """:meth:`run_result` of kind ``"swarm"`` (a member's failure raises its error class)."""
        return cast("SwarmResult", await self.run_result("swarm", run_id))

    async def swarm_snapshot(self, run_id: str) -> MultiAgentSnapshot:
        """:meth:`run_snapshot` of kind ``"swarm"``: ``Swarm.load_snapshot`` and ``start_swarm(snapshot=...)`` take it."""
        return cast("MultiAgentSnapshot", await self.run_snapshot("swarm", run_id))

    async def start_graph(self, graph: str, task: Any = None, *, run_id: str, **kwargs: Any) -> RunHandle:
        """:meth:`start_run` of kind ``"graph"``: each agent node execution runs as a child agent
        workflow (a nested graph node as a child graph workflow) whose id is
        ``child_run_id(run_id, "<node>:<n>")``; callable nodes run in an activity."""
        return await self.start_run("graph", graph, task, run_id=run_id, **kwargs)

    async def execute_graph(self, graph: str, task: Any = None, *, run_id: str, **kwargs: Any) -> GraphResult:
        """:meth:`execute_run` of kind ``"graph"``: the :class:`~tether.multiagent.GraphResult` a local
        ``graph(task)`` returns (a run stopped by the execution limit has status ``failed``)."""
        return cast("GraphResult", await self.execute_run("graph", graph, task, run_id=run_id, **kwargs))

    async def graph_result(self, run_id: str) -> GraphResult:
        """:meth:`run_result` of kind ``"graph"``: a failed node raises its error class (a Tether
        error's), as a local graph does."""
        return cast("GraphResult", await self.run_result("graph", run_id))

    async def graph_snapshot(self, run_id: str) -> MultiAgentSnapshot:
        """:meth:`run_snapshot` of kind ``"graph"``: ``Graph.load_snapshot`` and ``start_graph(snapshot=...)`` take it."""
        return cast("MultiAgentSnapshot", await self.run_snapshot("graph", run_id))


def _kind(kind: str) -> RunKind:
    try:
        return KINDS[kind]
    except KeyError:
        raise ConfigurationError(f"unknown run kind {kind!r}; use one of {', '.join(KINDS)}") from None
