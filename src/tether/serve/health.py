"""Health probes of ``tether serve``: ``GET /healthz`` (the process is up) and ``GET /readyz``
(the process can reach its store, so it can take requests).

A load balancer or an orchestrator (a Kubernetes liveness and readiness probe) calls them by the
server's address, often without its token: they hold no data, so they pass the Host and token
checks (:class:`~tether.serve.security.Gate`'s ``probe_paths``). ``/readyz`` reads one head by
primary key (a run id no run has), the cheapest round trip to the store; when that fails or takes
longer than :data:`READY_TIMEOUT` seconds it answers ``503`` with ``Retry-After``, so the proxy
sends requests to another process until the store is back.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..durable.store import RunStore

PROBE_PATHS = ("/healthz", "/readyz")
"""The probe routes (served without the token or the Host check: see the module docstring)."""
READY_TIMEOUT = 5.0
"""Seconds ``/readyz`` waits for the store before it answers 503."""
RETRY_AFTER = 5
"""The ``Retry-After`` (seconds) of a 503 from ``/readyz``."""
_PROBE_RUN = "tether.readyz"
"""The run id ``/readyz`` reads (no run has it: the read returns nothing, cheaply)."""

_log = logging.getLogger(__name__)


def health_routes(store: RunStore) -> list[BaseRoute]:
    """``GET /healthz`` and ``GET /readyz`` over ``store``."""

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        try:
            await asyncio.wait_for(asyncio.to_thread(store.head, _PROBE_RUN), READY_TIMEOUT)
        except Exception as exc:  # any failure of the store (its driver's, a timeout) means: not ready
            reason = f"no answer within {READY_TIMEOUT:.0f} s" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            _log.warning("not ready: the store is unreachable (%s)", reason)
            message = f"the store is unreachable ({reason[:300]}); try again in {RETRY_AFTER} s"
            body = {"error": {"status": 503, "message": message}}
            return JSONResponse(body, status_code=503, headers={"Retry-After": str(RETRY_AFTER)})
        return JSONResponse({"status": "ready"})

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]


__all__ = ["PROBE_PATHS", "READY_TIMEOUT", "RETRY_AFTER", "health_routes"]
