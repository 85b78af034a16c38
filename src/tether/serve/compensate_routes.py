"""``POST /runs/{id}/compensate``: undo a served run's performed effects (issue 46).

The run's tools' compensations undo its performed calls newest first, each at most once, each a
recorded step of the run (:mod:`tether.durable.compensation`), nested runs with it; the run's
event stream shows the unwinding (``status`` events, and one ``compensation`` event per step).
The unwinding runs in a server task: a client that disconnects does not cut it short (and a kill
of the server leaves a run that a new request, on any server, goes on with). The answer is the
report, ``200 {run_id, status, trigger, undos, events}``.

Refused, with nothing stored: a run that executes (here, or in another process: its lease is
held) or is over (``compensated`` or ``compensation_failed``): 409; a run of no entry of this
server: 409; no such run: 404. A graph's or a swarm's run unwinds its nodes' nested runs
(:mod:`tether.multiagent.compensation`); it keeps no request keys, so a key on it is a 400.

Idempotent by ``Idempotency-Key`` like every request that starts work
(:mod:`tether.serve.idempotency`): the key is recorded in the run, in the same write as the
unwinding's first step; a repeat (any server, after a restart) unwinds nothing and answers the
stored report (``Idempotent-Replayed: true``), after waiting for a first request still under way;
a repeat of a request whose unwinding was cut short (its server died) goes on with it, undoing
nothing twice, and answers the finished report.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..agent import Agent
from ..durable.compensation import CompensationReport, compensate_run, report_of
from ..durable.history import summary_of
from ..durable.session import DurableSession
from ..durable.store import with_liveness
from ..errors import RequestError, RunLockedError
from .bodies import run_id_of
from .idempotency import HEADER, KEPT, Duplicate, RequestKey, await_record, digest, key_from, recorded, same_request
from .registry import SERVE_KEY, build, entry_of
from .runs import RunManager

OVER = ("compensated", "compensation_failed")
"""The statuses of a run whose effects were undone: it cannot be compensated again."""


class CompensateEndpoint:
    """The compensate route over the server's runs.

    Args:
        manager: The server's runs (its registry and store; a run executing here is refused).
    """

    def __init__(self, manager: RunManager) -> None:
        self.runs = manager
        self.store = manager.store

    def routes(self) -> list[BaseRoute]:
        """``POST /runs/{run_id}/compensate``."""
        return [Route("/runs/{run_id}/compensate", self.compensate, methods=["POST"])]

    async def compensate(self, request: Request) -> Response:
        run_id = run_id_of(request.path_params["run_id"])
        key = key_from(request.headers.get(HEADER))
        keyed = None if key is None else RequestKey(key, digest({"compensate": run_id}))
        head = await asyncio.to_thread(self.store.head, run_id)
        if head is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        if keyed is not None and (record := recorded(head, keyed.key)) is not None:
            same_request(run_id, keyed, record)
            stored = head.get("compensation")
            if isinstance(stored, dict) and not stored.get("done") and not await self._busy(run_id):
                # the first request's unwinding was cut short (its server died): this copy goes on with it
                return _answer(await self._unwind(run_id, head, None), replayed=True)
            return self._replayed(run_id, keyed, record, head)
        try:
            report = await self._unwind(run_id, head, keyed)
        except Duplicate as duplicate:  # a copy of this request recorded the key while this one waited
            assert keyed is not None
            return self._replayed(run_id, keyed, duplicate.record, await asyncio.to_thread(self.store.head, run_id))
        except (RequestError, RunLockedError) as exc:
            refusal = exc if isinstance(exc, RequestError) else RequestError(f"run {run_id!r} is executing in another process", status=409)
            now = await asyncio.to_thread(self.store.head, run_id)
            if keyed is None or refusal.status != 409 or now is None or summary_of(run_id, now).status != "compensating":
                raise refusal from None  # a copy of this request waits only for a run being unwound (its first copy)
            read = functools.partial(asyncio.to_thread, self.store.head, run_id)
            record = await await_record(run_id, keyed, read, functools.partial(self._busy, run_id), refusal)
            return self._replayed(run_id, keyed, record, await asyncio.to_thread(self.store.head, run_id))
        return _answer(report)

    async def _unwind(self, run_id: str, head: dict[str, Any], keyed: RequestKey | None) -> CompensationReport:
        """Check the run can be compensated, then unwind it in a server task (shielded from the request)."""
        if self.runs.executing(run_id):
            raise RequestError(f"run {run_id!r} is running; wait for it (or cancel it) first", status=409)
        name = await asyncio.to_thread(entry_of, self.runs.registry, head)
        if name is None:
            raise RequestError(f"run {run_id!r} is not a run of this server's agents", status=409)
        (summary,) = await asyncio.to_thread(with_liveness, [summary_of(run_id, head)], self.store.owner_alive)
        _check_status(run_id, summary.status)
        runner = build(self.runs.registry, name)
        unwinding: Coroutine[Any, Any, CompensationReport]
        if isinstance(runner, Agent):
            prepare = functools.partial(_record_key, keyed)
            unwinding = compensate_run(self.store, run_id, runner.tool_registry.get, prepare=prepare)
        elif keyed is not None:
            raise RequestError(
                f"Idempotency-Key: entry {name!r} is a {type(runner).__name__}, whose runs keep no request keys; "
                "compensate it without one (a repeat returns the stored report)"
            )
        else:
            runner.store = self.store
            unwinding = runner.compensate_async(run_id)  # its nodes' nested runs unwind
        task = asyncio.create_task(unwinding, name=f"tether-undo-{run_id}")
        return await asyncio.shield(task)

    async def _busy(self, run_id: str) -> bool:
        return self.runs.executing(run_id) or await asyncio.to_thread(self.store.owner_alive, run_id)

    def _replayed(self, run_id: str, keyed: RequestKey, record: dict[str, Any], head: dict[str, Any] | None) -> Response:
        """The answer to a repeat: the stored report (the run's unwinding, as far as it went)."""
        same_request(run_id, keyed, record)
        stored = (head or {}).get("compensation")
        if not isinstance(stored, dict):
            raise RequestError(f"run {run_id!r} records this key but no compensation; the store was changed behind the server", status=409)
        return _answer(report_of(run_id, stored), replayed=True)


def _check_status(run_id: str, status: str) -> None:
    """409 for a run that cannot be compensated now: running (a live owner) or over."""
    if status == "running":
        raise RequestError(f"run {run_id!r} is running in another process; wait for it (or cancel it) first", status=409)
    if status in OVER:
        raise RequestError(f"run {run_id!r} is {status} already: its effects were undone; GET /runs/{run_id} shows them", status=409)


def _record_key(keyed: RequestKey | None, session: DurableSession) -> None:
    """Under the run's lease, before the unwinding writes: refuse a run compensated meanwhile (409)
    or a repeat whose key a copy recorded meanwhile (:class:`Duplicate`), else record the key in
    the run's state, stored by the unwinding's first write."""
    record = session.compensation
    if record is not None and record.get("done"):
        status = report_of(session.run_id, record).status
        _check_status(session.run_id, status)
    if keyed is None:
        return
    state = session.run.state
    found = state.get(SERVE_KEY)
    marker: dict[str, Any] = found if isinstance(found, dict) else {}
    requests = dict(marker.get("requests") or {})
    if keyed.key in requests:
        raise Duplicate(requests[keyed.key])
    requests[keyed.key] = {"digest": keyed.digest, "after": keyed.after}
    for old in list(requests)[: max(0, len(requests) - KEPT)]:
        del requests[old]
    state[SERVE_KEY] = {**marker, "requests": requests}


def _answer(report: CompensationReport, *, replayed: bool = False) -> Response:
    headers = {"Idempotent-Replayed": "true"} if replayed else None
    return JSONResponse({**report.to_dict(), "events": f"/runs/{report.run_id}/events"}, headers=headers)


__all__ = ["OVER", "CompensateEndpoint"]
