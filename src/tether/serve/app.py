"""``create_app``: the ASGI app of ``tether serve`` (Starlette), its JSON API and SSE stream.

Endpoints (see :mod:`tether.serve.openapi` for the document served at ``/openapi.json``):

- ``GET /agents``: the names of the agents served.
- ``POST /agents/{name}/runs`` ``{prompt, run_id?}`` → ``202 {run_id, events}``: the run starts
  in a server task; ``events`` is the URL of its event stream.
- ``GET /runs?status=S&limit=N&offset=K``: top-level runs, oldest first.
- ``GET /runs/{id}``: status, last answer, pending interrupts.
- ``GET /runs/{id}/events``: Server-Sent Events; ``Last-Event-ID`` or ``?after=`` resumes.
- ``POST /runs/{id}/interrupts`` ``{responses}``; ``POST /runs/{id}/cancel``; ``DELETE /runs/{id}``.
- ``POST /runs/{id}/retry``: a failed (or stopped, stalled) run goes on from its last stored step.
- ``POST /runs/{id}/compensate``: undo the run's performed effects (:mod:`tether.serve.compensate_routes`).
- ``POST /runs/{id}/fork`` ``{at, run_id?}`` → ``201 {run_id, status}``: a new run from a past step,
  at rest (:mod:`tether.serve.fork_routes`).
- ``GET /healthz``, ``GET /readyz``: the process is up; it reaches its store (:mod:`tether.serve.health`).
- ``GET /``: the chat page; ``GET /runs/{id}/view``: the run's inspector page (:mod:`tether.serve.page`).
- ``POST /agents/{name}/agui``, ``GET /agents/{name}/agui/{thread_id}``: the AG-UI protocol
  (:mod:`tether.serve.agui_routes`).
- ``GET /agents/{name}/a2a/.well-known/agent-card.json``, ``POST /agents/{name}/a2a``: the A2A
  v1.0 protocol, a task being a run (:mod:`tether.serve.a2a_routes`).

Errors are ``{"error": {"status", "message"}}`` with a 4xx status naming the problem; a refused
request changes nothing stored. More routes (a page) plug in through
``extra_routes`` over the same :class:`~tether.serve.runs.RunManager` and
:func:`~tether.serve.stream.run_events`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import secrets
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..durable.history import LISTED_STATUSES, summary_of
from ..durable.store import RunStore, with_liveness
from ..errors import RequestError
from .a2a_routes import A2AEndpoint
from .agui_routes import AguiEndpoint
from .bodies import read_json
from .bodies import run_id_of as _run_id
from .compensate_routes import CompensateEndpoint
from .drain import GRACE
from .events import Cursor, interrupts_of, last_answer
from .failures import error_body, run_error, stream_error
from .failures import handlers as failure_handlers
from .fork_routes import ForkEndpoint
from .health import PROBE_PATHS, health_routes
from .idempotency import HEADER, RequestKey, digest, key_from, run_id_for
from .limits import BODY_TIMEOUT, BodyTimeout
from .logs import AccessLog, note_run
from .metrics import metrics_routes
from .openapi import openapi_document
from .page import PAGE_PATH, page_routes
from .registry import Registry, check_registry, entry_of
from .runs import RunManager
from .security import LOOPBACK_NAMES, Gate
from .stream import run_events

MAX_BODY = 1 << 20
"""The default cap on a request body: 1 MiB."""
STATUSES = LISTED_STATUSES


def create_app(
    registry: Registry,
    store: RunStore,
    *,
    token: str | None = None,
    cors: str | Sequence[str] | None = None,
    max_body: int = MAX_BODY,
    allowed_hosts: Sequence[str] = LOOPBACK_NAMES,
    scan_interval: float = 5.0,
    poll_interval: float = 1.0,
    keepalive: float = 15.0,
    extra_routes: Sequence[BaseRoute] = (),
    grace: float = GRACE,
    body_timeout: float = BODY_TIMEOUT,
) -> Starlette:
    """The ASGI app serving ``registry``'s agents on ``store``.

    Args:
        registry: Agent names to zero-argument factories of an Agent, a Graph or a Swarm.
        store: The run store (SQLite, or PostgreSQL shared by several server processes).
        token: Require ``Authorization: Bearer TOKEN`` on every request.
        cors: Origins allowed to call the API from a browser page of another origin (none by default).
        max_body: The largest request body accepted, in bytes (larger: 413).
        allowed_hosts: The ``Host`` names the server answers to (default: loopback names; ``"*"``: any).
        scan_interval: Seconds between two scans of the store for stalled runs to take over.
        poll_interval: Seconds between two reads of the store for a stream of a run executed by
            another process.
        keepalive: Seconds of silence after which an event stream sends an SSE comment.
        extra_routes: More routes (a page, your own) over ``app.state.runs``.
        grace: Seconds a shutdown waits for the runs executing here to finish their step before
            they are handed over (:mod:`tether.serve.drain`).
        body_timeout: Seconds a request body may pause between two pieces (then 408;
            :mod:`tether.serve.limits`; 0: no bound).
    """
    checked = check_registry(registry)
    manager = RunManager(checked, store, scan_interval=scan_interval, grace=grace)
    api = _Api(manager, max_body, poll_interval, keepalive)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await manager.start()
        try:
            yield
        finally:
            await manager.stop()

    routes: list[BaseRoute] = [
        Route("/agents/{name}/runs", api.start, methods=["POST"]),
        Route("/runs", api.list, methods=["GET"]),
        Route("/runs/{run_id}", api.get, methods=["GET"]),
        Route("/runs/{run_id}", api.delete, methods=["DELETE"]),
        Route("/runs/{run_id}/events", api.events, methods=["GET"]),
        Route("/runs/{run_id}/interrupts", api.interrupts, methods=["POST"]),
        Route("/runs/{run_id}/cancel", api.cancel, methods=["POST"]),
        Route("/runs/{run_id}/retry", api.retry, methods=["POST"]),
        *CompensateEndpoint(manager).routes(),
        *ForkEndpoint(manager, max_body).routes(),
        Route("/openapi.json", api.openapi, methods=["GET"]),
        # the pages: the chat page, the agents it lists, a run's inspector page (tether.serve.page)
        Route("/agents", api.agents, methods=["GET"]),
        *page_routes(store),
        *health_routes(store),
        *metrics_routes(store, manager.metrics, manager.executing),
        *AguiEndpoint(manager, max_body=max_body, poll_interval=poll_interval, keepalive=keepalive).routes(),
        *A2AEndpoint(manager, max_body=max_body, poll_interval=poll_interval).routes(),
        *extra_routes,
    ]
    middleware = [Middleware(AccessLog), Middleware(BodyTimeout, timeout=body_timeout)]
    origins = [] if not cors else [cors] if isinstance(cors, str) else list(cors)
    if origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=origins,
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "Idempotency-Key"],
            )
        )
    middleware.append(
        Middleware(Gate, token=token, allowed_hosts=allowed_hosts, public_paths=(PAGE_PATH,), origins=origins, probe_paths=PROBE_PATHS)
    )
    handlers: Mapping[Any, Callable[..., Any]] = {**failure_handlers(), 404: _not_found, 405: _not_allowed}
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan, exception_handlers=handlers)
    app.state.runs = manager
    return app


class _Api:
    def __init__(self, manager: RunManager, max_body: int, poll_interval: float, keepalive: float) -> None:
        self.runs = manager
        self.store = manager.store
        self.max_body = max_body
        self.poll_interval = poll_interval
        self.keepalive = keepalive

    async def start(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.runs.registry:
            raise RequestError(f"unknown agent {name!r}; this server has {sorted(self.runs.registry)}", status=404)
        body = await read_json(request, self.max_body)
        _only(body, ("prompt", "run_id"))
        prompt = body.get("prompt")
        if not (isinstance(prompt, str) and prompt.strip()) and not (isinstance(prompt, list) and prompt):
            raise RequestError('prompt is missing: send {"prompt": "..."} (a non-empty string or a list of content blocks)')
        key = key_from(request.headers.get(HEADER))
        run_id = body.get("run_id")
        run_id = _run_id(run_id) if run_id is not None else run_id_for(key) if key is not None else new_run_id()
        keyed = None if key is None else RequestKey(key, digest({"agent": name, "run_id": run_id, "prompt": prompt}))
        note_run(request.scope, run_id)
        first = await self.runs.start_run(name, prompt, run_id, keyed)
        return _started(run_id, repeat=first is not None)

    async def list(self, request: Request) -> Response:
        query = request.query_params
        wanted = [part for value in query.getlist("status") for part in value.split(",") if part]
        unknown = [status for status in wanted if status not in STATUSES]
        if unknown:
            raise RequestError(f"status {unknown[0]!r} is not a run status; use {', '.join(STATUSES)}")
        limit = _int_param(query.get("limit"), "limit", 100, 1, 1000)
        offset = _int_param(query.get("offset"), "offset", 0, 0, None)
        runs = [run for run in await _thread(self.store.list_runs) if run.parent_run_id is None]
        if wanted:
            runs = [run for run in runs if run.status in wanted]
        page = runs[offset : offset + limit]
        items = []
        for run in page:
            stop_reason = await self._stop_reason(run.run_id, run.status, run.steps, run.stop_reason)
            items.append(
                {
                    "run_id": run.run_id,
                    "status": "running" if self.runs.executing(run.run_id) else run.status,
                    "turns": run.turns,
                    "steps": run.steps,
                    "stop_reason": stop_reason,
                    "error": run_error(run.status, stop_reason),
                    "created_at": run.created_at,
                    "updated_at": run.updated_at,
                }
            )
        more = offset + limit < len(runs)
        return JSONResponse({"runs": items, "total": len(runs), "next_offset": offset + limit if more else None})

    async def _stop_reason(self, run_id: str, status: str, steps: int, stop_reason: str | None) -> str | None:
        """How the run's last turn stopped: a failed or stopped turn says why in its last step
        (the error; handed over, cancelled), which the run's head does not keep."""
        if status not in ("failed", "stopped") or not steps:
            return stop_reason
        last = await _thread(functools.partial(self.store.history, run_id, after=steps - 1))
        return last[-1].stop_reason if last else stop_reason

    async def get(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        stored = await _thread(self.store.load, run_id)
        if stored is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        head = stored.head
        (summary,) = await _thread(with_liveness, [summary_of(run_id, head)], self.store.owner_alive)
        stop_reason = await self._stop_reason(run_id, summary.status, summary.steps, summary.stop_reason)
        return JSONResponse(
            {
                "run_id": run_id,
                "agent": await _thread(entry_of, self.runs.registry, head),
                "status": "running" if self.runs.executing(run_id) else summary.status,
                "stop_reason": stop_reason,
                "error": run_error(summary.status, stop_reason),
                "answer": last_answer(stored.messages),
                "interrupts": interrupts_of(head),
                "turns": summary.turns,
                "steps": summary.steps,
                "usage": (head.get("metrics") or {}).get("usage") or {},
                "created_at": summary.created_at,
                "updated_at": summary.updated_at,
                "events": f"/runs/{run_id}/events",
            }
        )

    async def events(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        after = Cursor.parse(request.query_params.get("after") or request.headers.get("last-event-id"))
        if not self.runs.executing(run_id) and await _thread(self.store.head, run_id) is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        source = run_events(self.runs, run_id, after, poll_interval=self.poll_interval, keepalive=self.keepalive)
        return StreamingResponse(
            sse(source), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        )

    async def interrupts(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        body = await read_json(request, self.max_body)
        _only(body, ("responses",))
        if "responses" not in body:
            raise RequestError('responses is missing: send {"responses": [{"interruptId": ID, "response": VALUE}]}')
        key = key_from(request.headers.get(HEADER))
        keyed = None if key is None else RequestKey(key, digest({"interrupts": run_id, "responses": body["responses"]}))
        first = await self.runs.answer(run_id, body["responses"], keyed)
        return _started(run_id, repeat=first is not None)

    async def retry(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        key = key_from(request.headers.get(HEADER))
        keyed = None if key is None else RequestKey(key, digest({"retry": run_id}))
        first = await self.runs.retry(run_id, keyed)
        return _started(run_id, repeat=first is not None)

    async def cancel(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        if not self.runs.executing(run_id) and await _thread(self.store.head, run_id) is None:
            raise RequestError(f"no run {run_id!r}", status=404)
        self.runs.cancel(run_id)
        return JSONResponse({"run_id": run_id, "status": "cancelling"}, status_code=202)

    async def delete(self, request: Request) -> Response:
        run_id = _run_id(request.path_params["run_id"])
        deleted = await self.runs.delete(run_id)
        return JSONResponse({"deleted": deleted})

    async def agents(self, request: Request) -> Response:
        return JSONResponse({"agents": sorted(self.runs.registry)})

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_document(sorted(self.runs.registry)))


async def sse(events: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    """Encode a run's events as Server-Sent Events: ``id:`` for committed events only, ``event:``
    the kind, ``data:`` the JSON payload; a comment for a keepalive tick."""
    yield b"retry: 1000\n\n"
    try:
        async for event in events:
            if event is None:
                yield b": keepalive\n\n"
                continue
            lines = []
            if "id" in event:
                lines.append(f"id: {event['id']}")
            lines.append(f"event: {event['type']}")
            lines.append("data: " + json.dumps(event.get("data", {}), ensure_ascii=False, separators=(",", ":")))
            yield ("\n".join(lines) + "\n\n").encode()
    except Exception as exc:  # the response has started: an error event, then the stream closes (the client reconnects)
        status, message = stream_error(exc, "an event stream")
        yield f"event: error\ndata: {json.dumps(error_body(status, message)['error'])}\n\n".encode()


def _started(run_id: str, *, repeat: bool = False) -> Response:
    """``202 {run_id, events}``: the answer of a request that started (or continued) a run, and of
    its repeats (``Idempotent-Replayed: true``: the first request's run; nothing new started)."""
    headers = {"Idempotent-Replayed": "true"} if repeat else None
    return JSONResponse({"run_id": run_id, "events": f"/runs/{run_id}/events"}, status_code=202, headers=headers)


def new_run_id() -> str:
    """A fresh, sortable run id: ``run-YYYYmmdd-HHMMSS-<8 hex>``."""
    return f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


def _only(body: dict[str, Any], fields: tuple[str, ...]) -> None:
    extra = sorted(set(body) - set(fields))
    if extra:
        raise RequestError(f"unknown field {extra[0]!r}; this endpoint takes {', '.join(fields)}")


def _int_param(text: str | None, name: str, default: int, low: int, high: int | None) -> int:
    if text is None:
        return default
    if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
        bound = f"{low}..{high}" if high is not None else f"{low} or more"
        raise RequestError(f"{name}={text[:20]!r} is not a whole number in {bound}")
    return int(text)


async def _thread(function: Callable[..., Any], *args: Any) -> Any:
    import asyncio

    return await asyncio.to_thread(function, *args)


async def _not_found(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": {"status": 404, "message": f"no endpoint {request.url.path!r}; see /openapi.json"}}, status_code=404)


async def _not_allowed(request: Request, exc: Exception) -> Response:
    message = f"{request.method} is not allowed on {request.url.path!r}; see /openapi.json"
    return JSONResponse({"error": {"status": 405, "message": message}}, status_code=405)


__all__ = ["MAX_BODY", "create_app", "new_run_id", "read_json", "sse"]
