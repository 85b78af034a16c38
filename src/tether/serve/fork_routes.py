"""``POST /runs/{id}/fork``: a new run from a past step of a served agent run.

The body is ``{"at": STEP, "run_id": NEW_ID?}``: the stored run is forked at step ``at``
(:func:`~tether.durable.fork.fork_run`; ``NEW_ID`` defaults to ``RUN.fork-N``). Nothing executes:
the fork is at rest, as ``tether fork`` leaves it (``paused`` when forked mid-turn, else the
status the run had at that step, ``interrupted`` with its questions pending, or ``finished``),
and the answer is ``201 {run_id, status, forked_from, events}``. A client goes on with the fork as
with any run: ``POST /runs/{new}/retry`` (a paused fork), ``POST /runs/{new}/interrupts``, or a new
turn. The original run is only read.

Refused, with nothing stored: no such run: 404; a step that is not an int of the run's steps or
an invalid ``NEW_ID``: 400; a ``NEW_ID`` that exists, a run executing (here, or in another
process: its lease is held), or a run that is not an agent run of this server: 409.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..durable.fork import fork_run
from ..durable.history import summary_of
from ..durable.store import with_liveness
from ..errors import RequestError, StoreError
from .bodies import read_json, run_id_of
from .registry import SERVE_KEY
from .runs import RunManager


class ForkEndpoint:
    """The fork route over the server's runs.

    Args:
        manager: The server's runs (its registry and store; a run executing here is refused).
        max_body: The largest request body accepted, in bytes.
    """

    def __init__(self, manager: RunManager, max_body: int) -> None:
        self.runs = manager
        self.store = manager.store
        self.max_body = max_body

    def routes(self) -> list[BaseRoute]:
        """``POST /runs/{run_id}/fork``."""
        return [Route("/runs/{run_id}/fork", self.fork, methods=["POST"])]

    async def fork(self, request: Request) -> Response:
        run_id = run_id_of(request.path_params["run_id"])
        body = await read_json(request, self.max_body)
        extra = sorted(set(body) - {"at", "run_id"})
        if extra:
            raise RequestError(f"unknown field {extra[0]!r}; this endpoint takes at, run_id")
        at = body.get("at")
        new_id = None if body.get("run_id") is None else run_id_of(body["run_id"])
        head = await asyncio.to_thread(self.store.head, run_id)
        if head is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        _check_agent_run(run_id, head, self.runs.registry)
        (summary,) = await asyncio.to_thread(with_liveness, [summary_of(run_id, head)], self.store.owner_alive)
        if self.runs.executing(run_id) or summary.status == "running":
            raise RequestError(f"run {run_id!r} is running; fork it once it stops (or cancel it)", status=409)
        if isinstance(at, bool) or not isinstance(at, int) or not 1 <= at <= summary.steps:
            raise RequestError(
                f"at={at!r} is not a step of run {run_id!r}: send an int from 1 to {summary.steps} (GET /runs/{run_id}/view)"
            )
        if new_id is not None and await asyncio.to_thread(self.store.head, new_id) is not None:
            raise RequestError(f"run {new_id!r} exists already; pick another run_id (or omit it to get {run_id}.fork-N)", status=409)
        try:
            forked = await asyncio.to_thread(functools.partial(fork_run, self.store, run_id, at, new_run_id=new_id))
        except StoreError as exc:
            exists = new_id is not None and await asyncio.to_thread(self.store.head, new_id) is not None
            raise RequestError(f"run {run_id!r} at step {at}: {exc}", status=409 if exists else 400) from None
        fork_head = await asyncio.to_thread(self.store.head, forked)
        status = summary_of(forked, fork_head).status if fork_head is not None else "paused"
        return JSONResponse(
            {"run_id": forked, "status": status, "forked_from": {"run_id": run_id, "step": at}, "events": f"/runs/{forked}/events"},
            status_code=201,
        )


def _check_agent_run(run_id: str, head: dict[str, Any], registry: Any) -> None:
    """409 unless the run is an agent run of this server (its state names an entry of the registry)."""
    state = head.get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    name = marker.get("agent") if isinstance(marker, dict) else None
    if not isinstance(name, str) or name not in registry:
        raise RequestError(f"run {run_id!r} is not an agent run of this server's agents: only those are forked here", status=409)


__all__ = ["ForkEndpoint"]
