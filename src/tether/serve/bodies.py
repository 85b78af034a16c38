"""Reading a request: its JSON object body (capped) and a run id it names, or a RequestError.

Shared by the JSON API (:mod:`tether.serve.app`) and the AG-UI endpoint
(:mod:`tether.serve.agui_routes`).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect, Request

from .._unicode import find_lone_surrogate
from ..durable.store import validate_run_id
from ..errors import RequestError, StoreError, json_path


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body; RequestError 415 unless sent as ``application/json`` (a
    cross-site page cannot send that without a CORS preflight), 413 over ``limit`` bytes, 400
    when not a JSON object.

    Args:
        request: The request.
        limit: The largest body accepted, in bytes.
    """
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise RequestError(f"send the body as Content-Type: application/json (got {media or 'none'!r})", status=415)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(f"the request body is {int(declared)} bytes, over the limit of {limit}", status=413)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise RequestError(f"the request body is over the limit of {limit} bytes", status=413)
            chunks.append(chunk)
    except ClientDisconnect:  # the client went away mid-body: nothing to do, nothing stored
        raise RequestError("the client disconnected before its request body was read", status=400) from None
    raw = b"".join(chunks)
    if not raw.strip():
        raise RequestError("the request body is empty: send a JSON object")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"the request body is not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(body, dict):
        raise RequestError(f"the request body must be a JSON object, got {type(body).__name__}")
    found = find_lone_surrogate(body, [])
    if found is not None:  # valid JSON, but no store can hold it: refused before anything is stored
        raise RequestError(f"{json_path(found)} holds a lone surrogate (such as '\\ud800'): send valid Unicode text")
    return body


def run_id_of(value: Any) -> str:
    """``value`` as a run id (``[A-Za-z0-9._:-]{1,128}``), or a RequestError (400) naming it.

    Args:
        value: The id a request gave (a path parameter, a body field).
    """
    try:
        return validate_run_id(value)
    except StoreError as exc:
        raise RequestError(str(exc)) from None


__all__ = ["read_json", "run_id_of"]
