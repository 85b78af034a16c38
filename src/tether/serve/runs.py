"""Runs that belong to the server: each one executes in a task of the server, not of a request.

:class:`RunManager` starts a run (a new one, a new turn, the answer to its interrupts, the
resumption of a stalled one) as an ``asyncio`` task that drives the durable run to its end or its
next interrupt. A client that disconnects does not touch the task; the event stream it reads is
rebuilt from the store (:mod:`tether.serve.stream`).

Ownership is the store's run lease: the task holds the run's lease while it executes, so on one
store (SQLite, or PostgreSQL shared by several server processes) a run executes in one process
at a time. A lease is freed by the operating system or the database the moment its owner
process dies, and the run is then ``stalled``. Every server scans its store when it starts and
then every ``scan_interval`` seconds, and resumes every stalled run that belongs to its registry
(:func:`~tether.serve.registry.entry_of`), with the durable layer's in-doubt semantics: an
idempotent tool that started but whose result was not recorded runs again with the same
idempotency key; a non-idempotent one becomes a ``tether.in_doubt`` interrupt, answered over
HTTP. So a run whose server died is taken over by another server on the store within
``scan_interval`` seconds (or at once by a server started on it). Two servers that find the same
stalled run race for its lease: one wins, the other leaves it.

A run the server stopped when it shut down (its task cancelled: status ``stopped``) is resumed
the same way by the next server on the store. A client stops a run with ``cancel``, which ends
its turn (stop reason ``cancelled``): such a run is ``finished`` and not resumed. A ``failed``
run is never resumed by the scan (its failure would repeat at every scan); a client retries it
(:meth:`RunManager.retry`), which resumes it from its last stored step.

A request that starts or continues a run may carry a client key (:mod:`tether.serve.idempotency`):
the turn records it with its first write, and a copy of the request starts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..agent import Agent
from ..answers import answers_from, as_blocks
from ..answers import check_answers as check
from ..durable.commits import COMMIT_OBSERVER
from ..durable.history import Step, summary_of
from ..durable.store import RunStore, with_liveness
from ..errors import InterruptError, PromptError, RequestError, RunLockedError, RunNotFoundError, StateError
from ..types import Message
from .clientturn import ClientTurn, ClientTurnRecorder, install, stored_tools
from .drain import Drain, HandOver, handover_reason, previous_server
from .eventlog import HEAD_KEYS, EventLogs
from .events import LIVE_KINDS, interrupts_of
from .idempotency import Duplicate, KeyRecorder, RequestKey, await_record, has_marker, recorded, run_id_for, same_request
from .logs import log as _log
from .metrics import Metrics
from .registry import SERVE_KEY, Registry, Runnable, build, entry_of

RESUMABLE = ("stalled", "stopped")
"""The statuses of runs a server takes over by itself: their owner died, or a server stopped them
at shutdown. A ``failed`` run is never resumed by the scan: its turn raised (a model or provider
error, a bug in a tool), and running it again at every scan would repeat the failure in a loop;
a client retries it (:meth:`RunManager.retry`, ``POST /runs/{id}/retry``)."""
RETRYABLE = ("failed", "stopped", "stalled", "paused")
"""The statuses of runs a client may retry: the turn goes on from its last stored step, exactly as
a resume does (no recorded model or tool call is made again)."""

Notice = tuple[str, dict[str, Any] | None, int]
"""What a run's listeners are sent: ``("changed", None, g)`` (the store may hold new steps),
``("delta", event, g)`` (a live delta) or ``("ended", None, g)`` (the task ended). ``g`` is the
run's generation (:meth:`RunManager.generation`) when the notice was sent: a delta sent before
the generation a reader saw after reading the store may be superseded by a message it read."""


@dataclass
class Execution:
    """One run executing in this server: its registry entry, runnable and task."""

    run_id: str
    name: str
    runner: Runnable
    task: asyncio.Task[None] | None = None
    started: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Resolved once the run's first event came (its first step is committed) or the task ended
    (with the task's error, if it failed before)."""


class RunManager:
    """The runs this server executes, and the listeners waiting for their events.

    Args:
        registry: Agent names to zero-argument factories.
        store: The run store (shared with other server processes when it is PostgreSQL).
        scan_interval: Seconds between two scans for stalled runs to take over.
        grace: Seconds a graceful stop (SIGTERM) lets running steps finish before the runs are
            handed over where they are (see :mod:`tether.serve.drain`).
    """

    def __init__(self, registry: Registry, store: RunStore, *, scan_interval: float = 5.0, grace: float = 30.0) -> None:
        self.registry = registry
        self.store = store
        self.scan_interval = scan_interval
        self.executions: dict[str, Execution] = {}
        self.listeners: dict[str, set[asyncio.Queue[Notice]]] = {}
        self.generations: dict[str, int] = {}
        self.logs = EventLogs(store)
        """The shared event log of each run that has a stream here (:mod:`tether.serve.eventlog`)."""
        self.refused: dict[str, Any] = {}  # run id -> the head revision a resume failed at (not retried until it changes)
        self._scanner: asyncio.Task[None] | None = None
        self._closing = False
        self.metrics = Metrics()
        """This process's figures (``GET /metrics``, :mod:`tether.serve.metrics`)."""
        self.drain = Drain(grace)
        """The server's shutdown (:mod:`tether.serve.drain`): new work refused, runs handed over."""

    # -- life of the server ----------------------------------------------------------------

    async def start(self) -> None:
        """Begin scanning: at once (stalled runs of a previous process), then periodically."""
        self._closing = False
        self.drain = Drain(self.drain.grace)  # an app started again (its lifespan) serves again
        self._scanner = asyncio.create_task(self._scan_forever(), name="tether-serve-scan")

    def begin_drain(self) -> None:
        """Start the shutdown (a SIGTERM): refuse new work, stop scanning, let the runs executing
        here finish their step (a tool call under way returns) and hand them over
        (:mod:`tether.serve.drain`); the streams of runs not executing here close at once."""
        self._closing = True
        if self._scanner is not None:
            self._scanner.cancel()
        if self.drain.begin():
            asyncio.get_running_loop().call_later(self.drain.grace, self._hand_over_late)
            _log.info("draining: %d runs executing; grace %.0f s", len(self.executions), self.drain.grace, extra={"event": "drain.started"})
            for run_id in list(self.listeners):
                self._notify(run_id, "changed")  # wakes their streams, which close unless their run executes here

    async def stop(self) -> None:
        """Drain (:meth:`begin_drain`), wait up to the grace period for the runs executing here to
        hand over at their next step, then cancel the rest (each records ``stopped``, *handed
        over*, at its last stored step; the next server on the store resumes it)."""
        self.begin_drain()
        tasks = [e.task for e in self.executions.values() if e.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self.drain.remaining())
        late = self._hand_over_late()
        for task in [*late, *([self._scanner] if self._scanner is not None else [])]:
            with contextlib.suppress(BaseException):
                await task
        _log.info("drained", extra={"event": "drain.finished"})

    def _hand_over_late(self) -> list[asyncio.Task[None]]:
        """Cancel the runs still executing once the grace period is over (handed over where they
        are: a call under way is in doubt for the next server)."""
        late = [e.task for e in self.executions.values() if e.task is not None and not e.task.done()]
        for task in late:
            task.cancel(handover_reason(late=True, grace=self.drain.grace))
        return late

    async def _scan_forever(self) -> None:
        while True:
            try:
                await self.scan()
            except Exception as exc:
                _log.warning(
                    "scanning the store for stalled runs failed (%s: %s); trying again in %.1f s",
                    type(exc).__name__,
                    exc,
                    self.scan_interval,
                    extra={"event": "scan.failed"},
                )
            await asyncio.sleep(self.scan_interval)

    async def scan(self) -> list[str]:
        """Resume every stalled (or shut-down) top-level run of the registry no one executes; returns their ids."""
        runs = await asyncio.to_thread(self.store.list_runs)
        taken: list[str] = []
        for run in runs:
            if self._closing:
                break
            if run.status not in RESUMABLE or run.parent_run_id is not None or run.run_id in self.executions:
                continue
            head = await asyncio.to_thread(self.store.head, run.run_id)
            name = None if head is None else await asyncio.to_thread(entry_of, self.registry, head)
            if name is None or head is None:
                continue  # not a run of this registry (started by the CLI, another app)
            if run.run_id in self.refused and self.refused[run.run_id] == head.get("rev"):
                continue  # its resume failed at this very revision: not again at every scan
            try:
                await self._launch(run.run_id, name, None, resume=True, head=head, why="taken over")
            except RunLockedError:
                continue  # another server took it first
            except Exception as exc:
                _log.warning(
                    "resuming run %r failed (%s: %s); it is tried again once it changes",
                    run.run_id,
                    type(exc).__name__,
                    exc,
                    extra={"event": "run.takeover_failed", "run_id": run.run_id, "error": f"{type(exc).__name__}: {exc}"},
                )
                self.refused[run.run_id] = head.get("rev")
                continue
            old = previous_server(head)
            _log.info(
                "took over run %r (%s, from %s)",
                run.run_id,
                run.status,
                old or "an unknown server",
                extra={"event": "run.taken_over", "run_id": run.run_id, "agent": name, "old_owner": old or "unknown"},
            )
            self.metrics.count("takeovers")
            taken.append(run.run_id)
        return taken

    # -- what the API asks -----------------------------------------------------------------

    async def start_run(
        self, name: str, prompt: Any, run_id: str, request: RequestKey | None = None, client: ClientTurn | None = None
    ) -> dict[str, Any] | None:
        """Start a new run of agent ``name`` (or a new turn of run ``run_id``) on ``prompt``.

        With ``request`` (a client key, :mod:`tether.serve.idempotency`) the turn records the key;
        a repeat starts nothing and returns the first request's record (None: this request started
        the turn). ``client`` adds what the client brings to the turn (:mod:`tether.serve.clientturn`)."""
        if name not in self.registry:
            raise RequestError(f"unknown agent {name!r}; this server has {sorted(self.registry)}", status=404)
        return await self._once(run_id, request, lambda: self._start(name, prompt, run_id, request, client))

    async def _start(self, name: str, prompt: Any, run_id: str, request: RequestKey | None, client: ClientTurn | None = None) -> None:
        self._not_executing(run_id)
        head = await asyncio.to_thread(self.store.head, run_id)
        if head is not None:
            owner = await asyncio.to_thread(entry_of, self.registry, head)
            if owner != name:
                raise RequestError(f"run {run_id!r} exists and is not a run of agent {name!r}; choose another run_id", status=409)
            status = summary_of(run_id, head).status
            if status != "finished":
                raise RequestError(
                    f"run {run_id!r} is {status}: a new prompt needs a finished turn "
                    "(answer its interrupts at /runs/{id}/interrupts, retry a failed one at /runs/{id}/retry, or wait for it)",
                    status=409,
                )
        await self._launch(run_id, name, prompt, resume=False, request=request, head=head, client=client, why="started")

    async def answer(
        self, run_id: str, responses: Any, request: RequestKey | None = None, client: ClientTurn | None = None
    ) -> dict[str, Any] | None:
        """Resume interrupted run ``run_id`` with ``responses`` (checked here first: nothing is
        stored unless every pending interrupt gets a valid answer). With ``request``, as
        :meth:`start_run`: a repeat returns the first request's record."""
        return await self._once(run_id, request, lambda: self._answer(run_id, responses, request, client))

    async def _answer(self, run_id: str, responses: Any, request: RequestKey | None, client: ClientTurn | None = None) -> None:
        self._not_executing(run_id)
        head = await self._head(run_id)
        name = await asyncio.to_thread(entry_of, self.registry, head)
        if name is None:
            raise RequestError(f"run {run_id!r} is not a run of this server's agents", status=409)
        status = summary_of(run_id, head).status
        pending = {item["id"]: item for item in interrupts_of(head)}
        if status != "interrupted" or not pending:
            raise RequestError(f"run {run_id!r} is {status}: it waits for no answer", status=409)
        blocks = check_answers(run_id, responses, pending)
        await self._launch(run_id, name, blocks, resume=True, request=request, head=head, client=client, why="answered")

    async def _once(self, run_id: str, request: RequestKey | None, start: Callable[[], Awaitable[None]]) -> dict[str, Any] | None:
        """Carry out ``start`` once per client key (see :mod:`tether.serve.idempotency`): a
        recorded key returns its record; a busy run (this key's first request may be under way,
        here or in another process) is waited for until it records the key or comes to rest."""
        if request is None:
            await start()
            return None
        head = await asyncio.to_thread(self.store.head, run_id)
        record = recorded(head, request.key)
        if record is None and head is not None and run_id == run_id_for(request.key) and not has_marker(head):
            record = {"digest": request.digest, "after": 0}  # a graph or swarm run the key named: no body to compare
        if record is None:
            try:
                await start()
                return None
            except Duplicate as duplicate:  # the run recorded the key while this request waited for its lease
                record = duplicate.record
            except (RequestError, RunLockedError) as exc:
                if isinstance(exc, RequestError) and exc.status != 409:
                    raise
                refusal = (
                    exc if isinstance(exc, RequestError) else RequestError(f"run {run_id!r} is executing in another process", status=409)
                )
                read = functools.partial(asyncio.to_thread, self.store.head, run_id)
                record = await await_record(run_id, request, read, functools.partial(self._busy, run_id), refusal)
        first = same_request(run_id, request, record)
        _log.info("run %r: request key %r is a repeat; answered with the first request's run", run_id, request.key)
        return first

    async def _busy(self, run_id: str) -> bool:
        return self.executing(run_id) or await asyncio.to_thread(self.store.owner_alive, run_id)

    async def retry(self, run_id: str, request: RequestKey | None = None) -> dict[str, Any] | None:
        """Go on with failed (or stopped, or stalled) run ``run_id`` from its last stored step: a
        resume, so every model and tool call the run recorded is used, not made again; a call
        that started but whose result was not recorded is in doubt, as on a takeover. With
        ``request``, as :meth:`start_run`: a repeat returns the first request's record."""
        return await self._once(run_id, request, lambda: self._retry(run_id, request))

    async def _retry(self, run_id: str, request: RequestKey | None) -> None:
        self._not_executing(run_id)
        head = await self._head(run_id)
        name = await asyncio.to_thread(entry_of, self.registry, head)
        if name is None:
            raise RequestError(f"run {run_id!r} is not a run of this server's agents", status=409)
        (summary,) = await asyncio.to_thread(with_liveness, [summary_of(run_id, head)], self.store.owner_alive)
        if summary.status not in RETRYABLE:
            hint = "answer its interrupts at /runs/{id}/interrupts" if summary.status == "interrupted" else "nothing to retry"
            raise RequestError(
                f"run {run_id!r} is {summary.status}: only a failed, stopped, stalled or paused run is retried ({hint})", status=409
            )
        self.refused.pop(run_id, None)
        try:
            await self._launch(run_id, name, None, resume=True, request=request, head=head, why="retried")
        except RunLockedError:
            raise RequestError(f"run {run_id!r} is executing in another server process", status=409) from None

    def cancel(self, run_id: str) -> None:
        """Ask a run executing here to stop at its next step (its turn ends, stop reason ``cancelled``)."""
        execution = self.executions.get(run_id)
        if execution is None:
            raise RequestError(f"run {run_id!r} is not executing in this server process", status=409)
        try:
            execution.runner.cancel()
        except StateError as exc:  # a graph or swarm run
            raise RequestError(f"run {run_id!r}: {exc}", status=409) from None

    async def delete(self, run_id: str) -> list[str]:
        """Delete run ``run_id`` with its nested runs (refused while it executes)."""
        self._not_executing(run_id)
        try:
            return await asyncio.to_thread(self.store.delete_run, run_id)
        except RunNotFoundError:
            raise RequestError(f"no run {run_id!r}", status=404) from None
        except RunLockedError:
            raise RequestError(f"run {run_id!r} is executing in another server process; cancel it there first", status=409) from None

    def executing(self, run_id: str) -> bool:
        """Whether ``run_id`` executes in this server process."""
        return run_id in self.executions

    def generation(self, run_id: str) -> int:
        """How many events other than deltas the run's executions here have produced (each one
        comes after the store write it reports)."""
        return self.generations.get(run_id, 0)

    # -- listeners -------------------------------------------------------------------------

    @contextlib.contextmanager
    def listen(self, run_id: str) -> Any:
        """A queue of :data:`Notice` for ``run_id`` while the block runs."""
        queue: asyncio.Queue[Notice] = asyncio.Queue()
        self.listeners.setdefault(run_id, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self.listeners.get(run_id)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self.listeners[run_id]

    def _notify(self, run_id: str, kind: str, payload: dict[str, Any] | None = None) -> None:
        if kind != "delta":
            self.generations[run_id] = self.generation(run_id) + 1
        notice = (kind, payload, self.generation(run_id))
        for queue in self.listeners.get(run_id, ()):
            queue.put_nowait(notice)

    # -- executing -------------------------------------------------------------------------

    def _not_executing(self, run_id: str) -> None:
        if run_id in self.executions:
            raise RequestError(f"run {run_id!r} is running; wait for it (or cancel it) first", status=409)

    async def _head(self, run_id: str) -> dict[str, Any]:
        head = await asyncio.to_thread(self.store.head, run_id)
        if head is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        return head

    async def _launch(
        self,
        run_id: str,
        name: str,
        prompt: Any,
        *,
        resume: bool,
        request: RequestKey | None = None,
        head: dict[str, Any] | None = None,
        client: ClientTurn | None = None,
        why: str = "started",
    ) -> None:
        """Run ``run_id`` in a task of its own; returns once its first step is committed (or raises
        what failed before that: the run's lease held elsewhere, a prompt it refuses).

        An agent gets the client tools of ``client`` (a new turn's), else those its stored run
        ``head`` recorded (a resume goes on with the tools it was interrupted with).

        No ``await`` comes between the check that the run does not execute here and its entry in
        :attr:`executions`: two requests racing for one run id start it once."""
        self._not_executing(run_id)
        self.drain.refuse_new_work()
        runner = build(self.registry, name)
        runner.store = self.store
        if isinstance(runner, Agent) and not resume:
            runner.state.set(SERVE_KEY, {"agent": name})  # a new run records its entry (a stored run keeps its own)
        if isinstance(runner, Agent) and request is not None:
            runner.hooks.add(KeyRecorder(request))  # records the key with the turn's first write, or refuses a repeat
        if isinstance(runner, Agent):
            install(runner, client.tools if client is not None and client.tools is not None else stored_tools(head))
            if client is not None:
                runner.hooks.add(ClientTurnRecorder(client))
        elif client is not None and (client.tools or client.state):
            _log.warning("run %r: a %s takes no client tools or state; they are not used", run_id, type(runner).__name__)
        elif request is not None and request.explicit and (resume or run_id != run_id_for(request.key)):
            raise RequestError(
                f"Idempotency-Key: entry {name!r} is a {type(runner).__name__}, whose runs keep no request keys; "
                "a key names only a new run of it (without run_id)"
            )
        if isinstance(runner, Agent):
            runner.hooks.add(HandOver(self.drain))  # at its next model call once the server drains
        execution = Execution(run_id, name, runner)
        self.executions[run_id] = execution
        execution.task = asyncio.create_task(self._drive(execution, _events(runner, prompt, run_id, resume)), name=f"tether-run-{run_id}")
        try:
            await asyncio.shield(execution.started)
        except (PromptError, InterruptError) as exc:
            await self._moved_on(run_id, head, exc)
            raise
        if why != "taken over":  # the scan logs its own line, with the old owner
            _log.info("run %r %s", run_id, why, extra={"event": f"run.{why.replace(' ', '_')}", "run_id": run_id, "agent": name})

    async def _moved_on(self, run_id: str, head: dict[str, Any] | None, refusal: Exception) -> None:
        """A run that refused this request's prompt or answers because another request (here or in
        another server process) moved it on after this one checked it: a conflict (409), like a
        request refused by that check, not the client's mistake (400). A run still as checked:
        nothing (the refusal stands)."""
        now = await asyncio.to_thread(self.store.head, run_id)
        if now is not None and (head is None or now.get("rev") != head.get("rev")):
            raise RequestError(
                f"run {run_id!r} changed while this request was handled (another request moved it on first): {refusal}", status=409
            ) from None

    def _offered(self, run_id: str, step: Step | None, messages: dict[int, Message]) -> None:
        """A write committed by a run executing here: to its streams' log in memory (on the loop)."""
        if run_id in self.executions and self.logs.offer(run_id, step, messages) and step is not None:
            self._notify(run_id, "changed")

    async def _drive(self, execution: Execution, events: Callable[[], AsyncIterator[dict[str, Any]]]) -> None:
        run_id = execution.run_id
        if getattr(self.store, "redaction", None) is None:  # a redacted store returns less than the live rows
            COMMIT_OBSERVER.set(_Handoff(self))  # this task's context: the run's sessions hand their commits over
        offsets = dict.fromkeys(LIVE_KINDS, 0)  # characters of each live kind since the last other event
        outcome: Any = None
        last = time.monotonic()
        try:
            async for event in events():
                if event.get("type") == "result":
                    outcome = event.get("result")
                if not execution.started.done():
                    execution.started.set_result(None)
                kind = event.get("type")
                if kind in LIVE_KINDS:
                    if "path" not in event:
                        text = event.get("text", "")
                        self._notify(run_id, "delta", {"type": kind, "data": {"text": text, "offset": offsets[kind]}})
                        offsets[kind] += len(text)
                else:
                    offsets = dict.fromkeys(LIVE_KINDS, 0)
                    self._notify(run_id, "changed")
                    if kind == "message":  # a committed step: a model reply, or a cycle's tool results
                        now = time.monotonic()
                        self.metrics.step(now - last)
                        last = now
        except asyncio.CancelledError as exc:
            reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else "cancelled"
            extra = {"event": "run.handed_over" if self.drain.draining else "run.stopped", "run_id": run_id, "agent": execution.name}
            _log.info("run %r %s", run_id, reason, extra=extra)
            self.metrics.count("handovers" if self.drain.draining else "stopped")
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            if not execution.started.done():
                execution.started.set_exception(exc)  # the request that started it answers with it
            else:
                self.metrics.count("runs_failed")
                _log.warning("run %r failed: %s", run_id, error, extra={"event": "run.failed", "run_id": run_id, "error": error[:500]})
        else:
            status = _status_of(outcome)
            extra = {"event": "run.finished", "run_id": run_id, "agent": execution.name, "status": status}
            _log.info("run %r %s", run_id, status, extra=extra)
        finally:
            if not execution.started.done():
                execution.started.set_result(None)
            if self.executions.get(run_id) is execution:
                del self.executions[run_id]
            self._notify(run_id, "ended")


class _Handoff:
    """The commit observer (:mod:`tether.durable.commits`) of the runs a manager executes: each
    committed write goes to :meth:`RunManager._offered` on the manager's event loop."""

    head_keys: tuple[str, ...] | None = HEAD_KEYS

    def __init__(self, manager: RunManager) -> None:
        self.manager = manager
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def committed(self, run_id: str, step: Step | None, messages: dict[int, Message]) -> None:
        if threading.get_ident() == self.thread:
            self.manager._offered(run_id, step, messages)
        else:  # committed on a writer thread: queued ahead of that thread's own return to the loop
            self.loop.call_soon_threadsafe(self.manager._offered, run_id, step, messages)


def _status_of(result: Any) -> str:
    """The status a turn's result leaves its run in (for the log line)."""
    stop = getattr(result, "stop_reason", None)
    if stop == "interrupt":
        return "interrupted"
    status = getattr(result, "status", None)
    if isinstance(status, str):
        return status.lower()
    return "finished"


def _events(runner: Runnable, prompt: Any, run_id: str, resume: bool) -> Callable[[], AsyncIterator[dict[str, Any]]]:
    """The event stream that drives ``runner``'s run (deltas included)."""
    if resume:
        return lambda: runner.resume_stream(prompt, run_id=run_id)
    return lambda: runner.stream_async(prompt, run_id=run_id)


def check_answers(run_id: str, responses: Any, pending: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """``responses`` as ``interruptResponse`` blocks, each checked against ``pending``
    (:mod:`tether.answers`; a RequestError naming the run otherwise).

    ``responses`` is a list of ``{"interruptId", "response"}`` (or of ``interruptResponse``
    blocks), or an object ``{interrupt id: response}``. Every pending interrupt must be answered
    once; an in-doubt question (``tether.in_doubt``) takes ``"rerun"`` or the result to record.
    """
    try:
        answers = answers_from(responses, what="responses")
        check(answers, pending, every=True)
    except InterruptError as exc:
        raise RequestError(f"run {run_id!r}: {exc}") from None
    return as_blocks(answers)


__all__ = ["RESUMABLE", "RETRYABLE", "Execution", "Notice", "RunManager", "check_answers"]
