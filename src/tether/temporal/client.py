"""`TetherClient`: start, finish, answer, inspect, promote and export agent runs on Temporal.

A run is a workflow whose id is the run id. ``execute`` runs an invocation to its end and
returns an :class:`~tether.AgentResult` (the same object a local call returns);
``answer_interrupts`` answers a waiting run through an update (or a signal); ``snapshot``
reads the live run through a query. ``promote`` moves a local run (a durable store's run, a
snapshot or a checkpoint) into Temporal, and ``snapshot`` / ``AgentResult`` carry it back.
Prompts are offloaded to the blob store like everything else, so a huge prompt is no
problem for history either. A run that failed with a Tether error raises that same error class
here (:func:`tether.temporal.errors.from_failure`), with the Temporal failure as its cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.service import RPCError

from .._json import json_copy
from .._prompt import normalize_prompt
from ..checkpoint import Checkpoint
from ..errors import ConfigurationError, PromptError, RunEndedError, RunNotFoundError
from ..interrupts import Interrupt
from ..loop.tracing import NULL_SPAN, NULL_TRACER, Span, Tracer, span_ids
from ..metrics import Metrics
from ..result import AgentResult
from ..snapshot import Snapshot
from ..telemetry import resolve_tracer
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT, compact_message, expand_message
from .errors import from_failure
from .payloads import DEFAULT_MAX_VALUE_BYTES, check_compact, expand_interrupt, expand_state, offload
from .shapes import CarriedState, WirePrompt, WorkflowOptions, WorkflowParams
from .wire import carried_from_run, run_from_checkpoint, run_from_snapshot, snapshot_of
from .workflow import WORKFLOW_NAME

if TYPE_CHECKING:
    from ..multiagent.graph import GraphResult
    from ..multiagent.swarm import SwarmResult

__all__ = ["TetherClient"]


class TetherClient:
    """Agent runs on a Temporal task queue served by workers of :func:`tether.temporal.create_worker`."""

    def __init__(
        self,
        client: Client,
        blobs: BlobStore,
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
            blobs: The blob store the workers of ``task_queue`` use.
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
        self.blobs = blobs
        self.task_queue = task_queue
        self.inline_limit = inline_limit
        self.max_value_bytes = max_value_bytes
        self.options: WorkflowOptions = {**(options or {})}
        self.tracer = tracer

    # -- starting -------------------------------------------------------------------------

    def _prompt(self, prompt: Any) -> tuple[WirePrompt, CarriedState | None]:
        normalized = normalize_prompt(prompt)
        if normalized.kind == "checkpoint":
            carried = self._carried(run_from_checkpoint(normalized.checkpoint))
            return {"kind": "continue"}, carried
        return {
            "kind": normalized.kind,
            "messages": [
                compact_message(self.blobs, message, self.inline_limit, self.max_value_bytes, f"prompt[{i}]")
                for i, message in enumerate(normalized.messages)
            ],
            "responses": self._compact_responses(normalized.responses),
        }, None

    def _carried(self, run: Any) -> CarriedState:
        return carried_from_run(self.blobs, run, inline_limit=self.inline_limit, max_value_bytes=self.max_value_bytes)

    def _compact_responses(self, responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Interrupt answers with large responses offloaded (the workflow keeps them as references)."""
        out: list[dict[str, Any]] = []
        for item in _bodies(responses):
            if isinstance(item, dict) and "response" in item:
                field = f"the response to interrupt {item.get('interruptId')}"
                response = offload(self.blobs, item["response"], field, limit=self.inline_limit, hard_limit=self.max_value_bytes)
                item = {**item, "response": response}
            out.append(item)
        return out

    async def start(
        self,
        agent: str,
        prompt: Any,
        *,
        run_id: str,
        config: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        carried: CarriedState | None = None,
        **start_options: Any,
    ) -> WorkflowHandle[Any, dict[str, Any]]:
        """Start one invocation of ``agent`` as workflow ``run_id``; returns its handle.

        ``prompt`` is anything ``Agent.__call__`` accepts (a ``checkpointResume`` block
        promotes that checkpoint). ``carried`` is a compact run state to continue from (see
        :meth:`promote` and :meth:`continue_run`). With tracing on, the invocation's span ends
        once the workflow is started (its activities' spans, children of it, come later).
        """
        span = self._invocation_span(agent, run_id, carried)
        try:
            handle = await self._start(agent, prompt, run_id, config, options, carried, span, start_options)
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
        config: dict[str, Any] | None,
        options: WorkflowOptions | None,
        carried: CarriedState | None,
        span: Span,
        start_options: dict[str, Any],
    ) -> WorkflowHandle[Any, dict[str, Any]]:
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
        handle: WorkflowHandle[Any, dict[str, Any]] = await self.client.start_workflow(
            WORKFLOW_NAME, params, id=run_id, task_queue=self.task_queue, result_type=dict, **start_options
        )
        return handle

    async def execute(self, agent: str, prompt: Any, *, run_id: str, config: dict[str, Any] | None = None, **kwargs: Any) -> AgentResult:
        """Start an invocation and wait for its :class:`~tether.AgentResult` (the invocation's
        span, with tracing on, lasts until the result)."""
        options: WorkflowOptions | None = kwargs.pop("options", None)
        carried: CarriedState | None = kwargs.pop("carried", None)
        span = self._invocation_span(agent, run_id, carried)
        try:
            await self._start(agent, prompt, run_id, config, options, carried, span, kwargs)
            result = await self.result(run_id)
        except Exception as exc:
            span.end(exc)
            raise
        span.set_attributes({"tether.stop_reason": result.stop_reason, "tether.cycles": result.metrics.invocation.cycle_count})
        span.end()
        return result

    async def continue_run(
        self, agent: str, prompt: Any, *, previous_run_id: str, run_id: str, config: dict[str, Any] | None = None, **kwargs: Any
    ) -> WorkflowHandle[Any, dict[str, Any]]:
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
        config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> WorkflowHandle[Any, dict[str, Any]]:
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
        config: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> WorkflowHandle[Any, dict[str, Any]]:
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
        return await self.start(agent, prompt, run_id=run.run_id, config=config, carried=carried, **kwargs)

    # -- results --------------------------------------------------------------------------

    async def _raw_result(self, run_id: str) -> dict[str, Any]:
        handle = self.client.get_workflow_handle(run_id, result_type=dict)
        try:
            raw: dict[str, Any] = await handle.result()
        except WorkflowFailureError as exc:
            error = from_failure(exc)
            if error is None:
                raise
            raise error from exc
        return raw

    async def result(self, run_id: str) -> AgentResult:
        """Wait for run ``run_id``'s invocation to end; its :class:`~tether.AgentResult`."""
        raw = await self._raw_result(run_id)
        message = raw.get("message")
        state = raw["state"] if "state" in raw else expand_state(self.blobs, raw["run"].get("state"))  # "state": older workers
        return AgentResult(
            raw["stop_reason"],
            None if message is None else expand_message(self.blobs, message),
            Metrics(raw["metrics"], raw.get("invocation")),
            state or {},
        )

    async def final_snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The snapshot of a finished invocation (needs no worker)."""
        raw = await self._raw_result(run_id)
        return snapshot_of(self.blobs, raw["run"], app_data)

    # -- live runs ------------------------------------------------------------------------

    async def status(self, run_id: str) -> dict[str, Any]:
        """``{"status": ..., "interrupts": [...]}`` of a live run (a query; reasons expanded)."""
        handle = self.client.get_workflow_handle(run_id)
        status: dict[str, Any] = await handle.query("status", result_type=dict)
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
                    status = {"status": "starting"}
                if status["status"] == "interrupted":
                    return [Interrupt.from_dict(item) for item in status["interrupts"]]
                await asyncio.sleep(poll)

    async def answer_interrupts(self, run_id: str, responses: list[dict[str, Any]]) -> dict[str, Any]:
        """Answer interrupts through an update; refused (with the reason) when the answers are invalid.

        ``responses`` are ``interruptResponse`` blocks or their bodies (``{interruptId, response}``).
        """
        handle = self.client.get_workflow_handle(run_id)
        try:
            outcome: dict[str, Any] = await handle.execute_update("answer_interrupts", self._compact_responses(responses), result_type=dict)
        except WorkflowUpdateFailedError as exc:
            error = from_failure(exc)
            if error is None:
                raise
            raise error from exc
        return outcome

    async def signal_interrupts(self, run_id: str, responses: list[dict[str, Any]]) -> None:
        """Answer interrupts through a signal (fire and forget)."""
        handle = self.client.get_workflow_handle(run_id)
        await handle.signal("answer_interrupts_signal", self._compact_responses(responses))

    async def snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The current snapshot of run ``run_id`` (a query; works on running and finished runs)."""
        handle = self.client.get_workflow_handle(run_id)
        live: dict[str, Any] = await handle.query("snapshot", result_type=dict)
        return snapshot_of(self.blobs, live["run"], app_data)

    # -- graphs and swarms ----------------------------------------------------------------

    async def _start_multiagent(
        self,
        workflow_name: str,
        kind: str,
        name: str,
        task: Any,
        snapshot: dict[str, Any] | None,
        encode: Callable[[Any], Any],
        to_temporal: Callable[..., Any],
        run_id: str,
        config: dict[str, Any] | None,
        options: WorkflowOptions | None,
        start_options: dict[str, Any],
    ) -> WorkflowHandle[Any, dict[str, Any]]:
        """Start a graph or swarm workflow (``kind``) on a task (``encode``d) or a local-shape
        snapshot (converted by ``to_temporal``); see :meth:`start_graph` and :meth:`start_swarm`."""
        if not isinstance(run_id, str) or not run_id:
            raise ConfigurationError(f"run_id must be a non-empty string, got {run_id!r}")
        if (task is None) == (snapshot is None):
            raise PromptError(f"start_{kind}: pass a task to start a {kind} run, or a snapshot to continue one (not both)")
        params: dict[str, Any] = {
            kind: name,
            "config": config or {},
            "run_id": run_id,
            "task": None if task is None else encode(task),
            "snapshot": None,
            "options": {**self.options, **(options or {})},
        }
        if snapshot is not None:
            params["snapshot"] = to_temporal(self.blobs, snapshot, inline_limit=self.inline_limit, max_value_bytes=self.max_value_bytes)
        handle: WorkflowHandle[Any, dict[str, Any]] = await self.client.start_workflow(
            workflow_name, params, id=run_id, task_queue=self.task_queue, result_type=dict, **start_options
        )
        return handle

    # -- swarms ---------------------------------------------------------------------------

    async def start_swarm(
        self,
        swarm: str,
        task: Any = None,
        *,
        run_id: str,
        config: dict[str, Any] | None = None,
        snapshot: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        **start_options: Any,
    ) -> WorkflowHandle[Any, dict[str, Any]]:
        """Start a run of swarm ``swarm`` as workflow ``run_id`` (``tether.swarm``); returns its handle.

        Each member turn runs as a child agent workflow whose id is the run id a local durable
        swarm gives that turn (``child_run_id(run_id, "<member>:<n>")``).

        Args:
            swarm: The swarm's registered name (``AgentRegistry.register_swarm``).
            task: The task: a string or content blocks (None: continue ``snapshot``).
            run_id: The swarm run's id (its workflow id).
            config: The JSON config the workers build the swarm (and its member agents) from.
            snapshot: A swarm snapshot to continue instead of a new task: what a local
                ``Swarm.take_snapshot()`` or :meth:`swarm_snapshot` returned.
            options: Workflow options of the member turns' agent workflows (over the client's).
            **start_options: Passed to ``temporalio.client.Client.start_workflow``.

        Raises:
            PromptError: Both or neither of ``task`` and ``snapshot``, or a task that is neither a
                string nor content blocks.
            SnapshotError: ``snapshot`` is not a swarm snapshot.
            PayloadTooLargeError: The task is too large to travel inline.
        """
        from ..multiagent.graph import _check_task
        from .swarm_wire import swarm_to_temporal
        from .swarm_workflow import SWARM_WORKFLOW_NAME

        def encode(task: Any) -> Any:
            checked = json_copy(_check_task(task), "task")
            check_compact(checked, "task")
            return checked

        return await self._start_multiagent(
            SWARM_WORKFLOW_NAME, "swarm", swarm, task, snapshot, encode, swarm_to_temporal, run_id, config, options, start_options
        )

    async def execute_swarm(
        self,
        swarm: str,
        task: Any = None,
        *,
        run_id: str,
        config: dict[str, Any] | None = None,
        snapshot: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        **start_options: Any,
    ) -> SwarmResult:
        """Start a swarm run and wait for its :class:`~tether.multiagent.SwarmResult` (the object
        a local ``swarm(task)`` returns). A run stopped by a limit returns a result with status
        ``failed``, as locally; a run waiting on a member's interrupts keeps waiting until they
        are answered (:meth:`answer_interrupts`).

        Args:
            swarm: The swarm's registered name.
            task: The task: a string or content blocks (None: continue ``snapshot``).
            run_id: The swarm run's id (its workflow id).
            config: The JSON config the workers build the swarm from.
            snapshot: A swarm snapshot to continue instead of a new task.
            options: Workflow options of the member turns' agent workflows.
            **start_options: Passed to ``temporalio.client.Client.start_workflow``.
        """
        await self.start_swarm(swarm, task, run_id=run_id, config=config, snapshot=snapshot, options=options, **start_options)
        return await self.swarm_result(run_id)

    async def swarm_result(self, run_id: str) -> SwarmResult:
        """Wait for swarm run ``run_id`` to end; its :class:`~tether.multiagent.SwarmResult`.

        Args:
            run_id: The swarm run's id.

        Raises:
            TetherError: The run failed because a member's turn failed (the member's error class).
        """
        from ..multiagent.state import GraphRunState
        from ..multiagent.swarm import swarm_result
        from .swarm_wire import swarm_to_local

        local = swarm_to_local(self.blobs, await self._raw_result(run_id))
        return swarm_result(GraphRunState(local["state"], list(local["node_history"])), run_id)

    async def swarm_snapshot(self, run_id: str) -> dict[str, Any]:
        """The state of swarm run ``run_id`` (running, waiting or finished) in the shape a local
        ``Swarm.take_snapshot()`` returns: ``Swarm.load_snapshot`` takes it, and so does
        :meth:`start_swarm` (``snapshot=``).

        Args:
            run_id: The swarm run's id.
        """
        from .swarm_wire import swarm_to_local

        handle = self.client.get_workflow_handle(run_id)
        live: dict[str, Any] = await handle.query("snapshot", result_type=dict)
        return swarm_to_local(self.blobs, live)

    # -- graphs ---------------------------------------------------------------------------

    async def start_graph(
        self,
        graph: str,
        task: Any = None,
        *,
        run_id: str,
        config: dict[str, Any] | None = None,
        snapshot: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        **start_options: Any,
    ) -> WorkflowHandle[Any, dict[str, Any]]:
        """Start a run of graph ``graph`` as workflow ``run_id`` (``tether.graph``); returns its handle.

        Each agent node execution runs as a child agent workflow (a nested graph node as a child
        graph workflow) whose id is the run id a local durable graph gives that execution
        (``child_run_id(run_id, "<node>:<n>")``); callable nodes run in an activity.

        Args:
            graph: The graph's registered name (``AgentRegistry.register_graph``).
            task: The task: a string or content blocks (None: continue ``snapshot``).
            run_id: The graph run's id (its workflow id).
            config: The JSON config the workers build the graph (and its node agents) from.
            snapshot: A graph snapshot to continue instead of a new task: what a local
                ``Graph.take_snapshot()`` or :meth:`graph_snapshot` returned.
            options: Workflow options of the agent nodes' workflows (over the client's).
            **start_options: Passed to ``temporalio.client.Client.start_workflow``.

        Raises:
            ConfigurationError: ``run_id`` is not a non-empty string.
            PromptError: Both or neither of ``task`` and ``snapshot``, or a task that is neither a
                string nor content blocks.
            SnapshotError: ``snapshot`` is not a graph snapshot.
            PayloadTooLargeError: The task is too large to travel inline.
        """
        from ..multiagent.graph import _check_task
        from .graph_wire import graph_to_temporal
        from .graph_workflow import GRAPH_WORKFLOW_NAME

        def encode(task: Any) -> Any:
            checked = json_copy(_check_task(task), "task")
            return offload(self.blobs, checked, "task", limit=self.inline_limit, hard_limit=self.max_value_bytes)

        return await self._start_multiagent(
            GRAPH_WORKFLOW_NAME, "graph", graph, task, snapshot, encode, graph_to_temporal, run_id, config, options, start_options
        )

    async def execute_graph(
        self,
        graph: str,
        task: Any = None,
        *,
        run_id: str,
        config: dict[str, Any] | None = None,
        snapshot: dict[str, Any] | None = None,
        options: WorkflowOptions | None = None,
        **start_options: Any,
    ) -> GraphResult:
        """Start a graph run and wait for its :class:`~tether.multiagent.GraphResult` (the object
        a local ``graph(task)`` returns). A run stopped by the execution limit returns a result
        with status ``failed``, as locally; a run waiting on a node's interrupts keeps waiting
        until they are answered (:meth:`answer_interrupts`).

        Args:
            graph: The graph's registered name.
            task: The task: a string or content blocks (None: continue ``snapshot``).
            run_id: The graph run's id (its workflow id).
            config: The JSON config the workers build the graph from.
            snapshot: A graph snapshot to continue instead of a new task.
            options: Workflow options of the agent nodes' workflows.
            **start_options: Passed to ``temporalio.client.Client.start_workflow``.
        """
        await self.start_graph(graph, task, run_id=run_id, config=config, snapshot=snapshot, options=options, **start_options)
        return await self.graph_result(run_id)

    async def graph_result(self, run_id: str) -> GraphResult:
        """Wait for graph run ``run_id`` to end; its :class:`~tether.multiagent.GraphResult`.

        Args:
            run_id: The graph run's id.

        Raises:
            TetherError: The run failed because a node failed (the node's error class when it
                was a Tether error).
        """
        from ..multiagent.graph import graph_result
        from ..multiagent.state import GraphRunState
        from .graph_wire import graph_to_local

        local = graph_to_local(self.blobs, await self._raw_result(run_id))
        return graph_result(GraphRunState(local["state"], list(local["execution_order"])), run_id)

    async def graph_snapshot(self, run_id: str) -> dict[str, Any]:
        """The state of graph run ``run_id`` (running, waiting or finished) in the shape a local
        ``Graph.take_snapshot()`` returns: ``Graph.load_snapshot`` takes it, and so does
        :meth:`start_graph` (``snapshot=``).

        Args:
            run_id: The graph run's id.
        """
        from .graph_wire import graph_to_local

        handle = self.client.get_workflow_handle(run_id)
        live: dict[str, Any] = await handle.query("snapshot", result_type=dict)
        return graph_to_local(self.blobs, live)


def _bodies(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item["interruptResponse"] if isinstance(item, dict) and "interruptResponse" in item else item for item in responses]
