"""The HTTP side of ``max_result_bytes`` (see :mod:`tether.mcp.limits`): the MCP SDK's HTTP
client, reading the response to a ``tools/call`` request only up to the cap and recording how
much of it was read.

Imported only when an HTTP server is connected (it imports ``httpx2``, from the ``mcp`` extra).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator

import httpx2
from mcp.shared._httpx_utils import create_mcp_http_client

from .limits import ResponseRead, ResponseReads


def _event_limit() -> int | None:
    """The largest server-sent event the SDK's client accepts (``EventSource``'s default)."""
    default = inspect.signature(httpx2.EventSource).parameters.get("max_event_size")
    value = None if default is None else default.default
    return value if isinstance(value, int) else None


EVENT_LIMIT = _event_limit()


class ResultTooLarge(httpx2.StreamError):
    """A response passed the cap and was dropped. A stream error, so the SDK answers the waiting
    request with an error (for a JSON response) instead of leaving it to time out; the call then
    finds ``dropped`` in its :class:`~tether.mcp.limits.ResponseRead`."""


class CappedStream(httpx2.AsyncByteStream):
    """A response body counting its bytes into ``record`` and raising :class:`ResultTooLarge`
    once more than ``cap`` arrived (None: no cap); the rest is never read (the connection closes)."""

    def __init__(self, inner: httpx2.AsyncByteStream, cap: int | None, record: ResponseRead | None) -> None:
        self._inner = inner
        self._cap = cap
        self._record = record if record is not None else ResponseRead()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        record = self._record
        async for chunk in self._inner:
            record.read += len(chunk)
            if self._cap is not None and record.read > self._cap:
                record.dropped = True
                raise ResultTooLarge(f"the response passed max_result_bytes={self._cap} and was dropped unread")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def capped_http_client(headers: dict[str, str], cap: int | None, meta_key: str, reads: ResponseReads) -> httpx2.AsyncClient:
    """The SDK's HTTP client (its timeouts and redirects) with the cap on the responses to
    ``tools/call`` requests and to resumptions of them (a GET with ``Last-Event-ID``: one
    request's stream). What was read of each call's response goes to ``reads`` under its
    idempotency key (``params._meta[meta_key]`` of the request). Uncompressed responses are
    asked for, so the bytes counted are the payload's."""
    client = create_mcp_http_client(headers={"Accept-Encoding": "identity", **headers})

    async def cap_response(response: httpx2.Response) -> None:
        request = response.request
        record: ResponseRead | None = None
        if request.method == "POST":
            key = tool_call_key(request, meta_key)
            if key is None:
                return  # not a tool call: the handshake, tools/list, notifications
            streamed = response.headers.get("content-type", "").lower().startswith("text/event-stream")
            record = reads.open(key, EVENT_LIMIT if streamed else None)
        elif request.method != "GET" or "last-event-id" not in request.headers:
            return  # the standalone event stream (server notifications): not a result
        # (a resumed response stream is bounded too, though its call is not known here)
        if not isinstance(response.stream, httpx2.AsyncByteStream):
            return  # an already-read body (not the SDK's streamed requests)
        response.stream = CappedStream(response.stream, cap, record)

    hooks = client.event_hooks
    client.event_hooks = {"request": hooks["request"], "response": [*hooks["response"], cap_response]}
    return client


def tool_call_key(request: httpx2.Request, meta_key: str) -> str | None:
    """The idempotency key of a ``tools/call`` request (None for any other request)."""
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):  # a streamed or non-JSON body: not the SDK's JSON-RPC
        return None
    if not isinstance(body, dict) or body.get("method") != "tools/call":
        return None
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    key = meta.get(meta_key) if isinstance(meta, dict) else None
    return key if isinstance(key, str) else None


__all__ = ["EVENT_LIMIT", "CappedStream", "ResultTooLarge", "capped_http_client", "tool_call_key"]
