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
from typing import Any, cast

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle, WorkflowUpdateFailedError

from .._prompt import normalize_prompt
from ..checkpoint import Checkpoint
from ..errors import ConfigurationError, PromptError, RunNotFoundError
from ..interrupts import Interrupt
from ..metrics import Metrics
from ..result import AgentResult
from ..snapshot import Snapshot
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT, compact_message, expand_message
from .errors import from_failure
from .shapes import CarriedState, WirePrompt, WorkflowOptions, WorkflowParams
from .wire import carried_from_run, run_from_checkpoint, run_from_snapshot, snapshot_of
from .workflow import WORKFLOW_NAME

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
    ) -> None:
        self.client = client
        self.blobs = blobs
        self.task_queue = task_queue
        self.inline_limit = inline_limit
        self.options: WorkflowOptions = {**(options or {})}

    # -- starting -------------------------------------------------------------------------

    def _prompt(self, prompt: Any) -> tuple[WirePrompt, CarriedState | None]:
        normalized = normalize_prompt(prompt)
        if normalized.kind == "checkpoint":
            carried = carried_from_run(self.blobs, run_from_checkpoint(normalized.checkpoint), inline_limit=self.inline_limit)
            return {"kind": "continue"}, carried
        return {
            "kind": normalized.kind,
            "messages": [compact_message(self.blobs, message, self.inline_limit) for message in normalized.messages],
            "responses": normalized.responses,
        }, None

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
        :meth:`promote` and :meth:`continue_run`).
        """
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
        handle: WorkflowHandle[Any, dict[str, Any]] = await self.client.start_workflow(
            WORKFLOW_NAME, params, id=run_id, task_queue=self.task_queue, result_type=dict, **start_options
        )
        return handle

    async def execute(self, agent: str, prompt: Any, *, run_id: str, config: dict[str, Any] | None = None, **kwargs: Any) -> AgentResult:
        """Start an invocation and wait for its :class:`~tether.AgentResult`."""
        await self.start(agent, prompt, run_id=run_id, config=config, **kwargs)
        return await self.result(run_id)

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
        carried = carried_from_run(self.blobs, run, inline_limit=self.inline_limit)
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
        carried = carried_from_run(self.blobs, run, inline_limit=self.inline_limit)
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
        return AgentResult(
            raw["stop_reason"],
            None if message is None else expand_message(self.blobs, message),
            Metrics(raw["metrics"], raw.get("invocation")),
            raw.get("state") or {},
        )

    async def final_snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The snapshot of a finished invocation (needs no worker)."""
        raw = await self._raw_result(run_id)
        return snapshot_of(self.blobs, raw["run"], app_data)

    # -- live runs ------------------------------------------------------------------------

    async def status(self, run_id: str) -> dict[str, Any]:
        """``{"status": ..., "interrupts": [...]}`` of a live run (a query)."""
        handle = self.client.get_workflow_handle(run_id)
        status: dict[str, Any] = await handle.query("status", result_type=dict)
        return status

    async def wait_for_interrupts(self, run_id: str, *, timeout: float = 60.0, poll: float = 0.05) -> list[Interrupt]:
        """Wait until run ``run_id`` stops for interrupts; returns them."""
        async with asyncio.timeout(timeout):
            while True:
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
            outcome: dict[str, Any] = await handle.execute_update("answer_interrupts", _bodies(responses), result_type=dict)
        except WorkflowUpdateFailedError as exc:
            error = from_failure(exc)
            if error is None:
                raise
            raise error from exc
        return outcome

    async def signal_interrupts(self, run_id: str, responses: list[dict[str, Any]]) -> None:
        """Answer interrupts through a signal (fire and forget)."""
        handle = self.client.get_workflow_handle(run_id)
        await handle.signal("answer_interrupts_signal", _bodies(responses))

    async def snapshot(self, run_id: str, app_data: dict[str, Any] | None = None) -> Snapshot:
        """The current snapshot of run ``run_id`` (a query; works on running and finished runs)."""
        handle = self.client.get_workflow_handle(run_id)
        live: dict[str, Any] = await handle.query("snapshot", result_type=dict)
        return snapshot_of(self.blobs, live["run"], app_data)


def _bodies(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item["interruptResponse"] if isinstance(item, dict) and "interruptResponse" in item else item for item in responses]
