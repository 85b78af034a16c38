"""What the server answers when a request cannot be carried out: a JSON error, never a traceback
for a client's mistake.

A :class:`~tether.errors.TetherError` is mapped to its status (:func:`status_of`): the client's
mistakes are 4xx; a store that does not answer (an outage: a plain ``StoreError``, or the
driver's own ``OperationalError`` that escaped it) is ``503`` with ``Retry-After`` (the request
changed nothing: send it again, to this process or another), and so is a request refused because
the server is shutting down. Only an error of the server itself is a 500, logged with its
traceback.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..errors import (
    IncompatibleResumeError,
    InterruptError,
    LeaseLostError,
    PromptError,
    RequestError,
    RunLockedError,
    RunNotFoundError,
    StoreError,
    TetherError,
)
from .logs import log

RETRY_AFTER = 5
"""The ``Retry-After`` (seconds) of a 503."""


def outage_types() -> tuple[type[BaseException], ...]:
    """The drivers' errors for a database that cannot be reached (they may escape a store)."""
    types: list[type[BaseException]] = [sqlite3.OperationalError]
    try:
        import psycopg
    except ImportError:
        pass
    else:
        types += [psycopg.OperationalError, psycopg.InterfaceError]
    return tuple(types)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the store could not be reached (not that the request was wrong)."""
    return type(exc) is StoreError or isinstance(exc, outage_types())


def status_of(exc: BaseException) -> int:
    """The HTTP status of ``exc`` (500: the server's own fault)."""
    if isinstance(exc, RequestError):
        return exc.status
    if isinstance(exc, RunNotFoundError):
        return 404
    if isinstance(exc, PromptError | InterruptError):
        return 400  # a prompt or an answer the run refuses (checked before anything is stored)
    if isinstance(exc, RunLockedError | IncompatibleResumeError | LeaseLostError):
        return 409  # the run is another process's, or this server's code cannot resume it (refused: nothing written)
    if is_outage(exc):
        return 503
    return 500


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON of every error answer."""
    return {"error": {"status": status, "message": message}}


async def error_response(request: Request, exc: Exception) -> Response:
    """The answer to a request that raised ``exc`` (an exception handler of the app)."""
    status = status_of(exc)
    if status == 503 and not isinstance(exc, RequestError):
        message = f"the store is unreachable ({type(exc).__name__}: {str(exc)[:300]}); nothing was changed: try again in {RETRY_AFTER} s"
        log.warning("store unreachable during %s %s: %s", request.method, request.url.path, exc, extra={"event": "store.unreachable"})
    elif status < 500:
        message = str(exc)
    else:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc, extra={"event": "server.error"})
        message = f"{type(exc).__name__}: {exc}"
    headers = {"Retry-After": str(RETRY_AFTER)} if status == 503 else {"Connection": "close"} if status == 408 else None
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


def stream_error(exc: Exception, what: str) -> tuple[int, str]:
    """The status and message of an error inside a stream whose response has started (it can
    only end with an error event, and the client reconnects); re-raises a server fault (500).

    Args:
        exc: The error.
        what: The stream, for the log line of an outage (``"an event stream"``).
    """
    status = status_of(exc)
    if status == 500:
        raise exc
    if status == 503:
        log.warning("%s closed: the store is unreachable (%s)", what, exc, extra={"event": "store.unreachable"})
        return status, f"the store is unreachable; reconnect with your last event id ({type(exc).__name__})"
    return status, str(exc)


def run_error(status: str, stop_reason: str | None) -> dict[str, str] | None:
    """The error of a ``failed`` run, as ``GET /runs/{id}`` shows it: ``{"type", "message"}``
    from the stop reason its failed turn recorded (``"ModelDown: the model is down"``; the
    durable layer keeps its first 200 characters); None for a run that did not fail.

    Args:
        status: The run's status.
        stop_reason: The stop reason of its last turn.
    """
    if status != "failed" or not stop_reason:
        return None
    kind, sep, message = stop_reason.partition(": ")
    if not sep or not kind.replace(".", "").replace("_", "").isalnum():
        return {"type": "Error", "message": stop_reason}
    return {"type": kind, "message": message}


def handlers() -> dict[Any, Callable[..., Any]]:
    """The app's exception handlers: Tether errors and the drivers' outage errors."""
    table: dict[Any, Callable[..., Any]] = {TetherError: error_response}
    table.update(dict.fromkeys(outage_types(), error_response))
    return table


__all__ = ["RETRY_AFTER", "error_body", "error_response", "handlers", "is_outage", "run_error", "status_of", "stream_error"]
