"""Read timeouts: a client that sends its headers or its body slowly cannot hold a socket for long.

A *slowloris* opens connections and sends a request a few bytes at a time, so each stays open and
costs the server a socket and a little memory for as long as the client likes. Two bounds:

- **headers**: :func:`protocol_with_header_timeout` is uvicorn's HTTP/1.1 protocol (h11) with a
  timer from the moment a connection opens (or its previous response ends) to the end of the
  next request's headers; when it fires the server answers ``408`` (JSON) and closes the
  connection. ``tether serve --header-timeout`` (default 10 s). uvicorn's own
  ``timeout_keep_alive`` closes a connection idle between requests, but is cancelled by the first
  byte of a request;
- **body**: :class:`BodyTimeout`, an ASGI middleware, gives each piece of a request's body
  ``timeout`` seconds to arrive; a body that stalls is answered ``408`` and nothing is stored.
  ``--body-timeout`` (default 30 s), ``create_app(body_timeout=...)``. Once the body is read the
  middleware steps aside (an event stream waits for the client's disconnect without a bound).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import RequestError
from .logs import log

BODY_TIMEOUT = 30.0
"""The default seconds a request body may pause between two pieces."""
HEADER_TIMEOUT = 10.0
"""The default seconds a client has to send a request's headers."""


class BodyTimeout:
    """ASGI middleware: a request whose body stops arriving for ``timeout`` seconds is a 408."""

    def __init__(self, app: ASGIApp, *, timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.timeout:
            await self.app(scope, receive, send)
            return
        done = False

        async def receiving() -> Message:
            nonlocal done
            if done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                raise RequestError(f"the request body stalled for {self.timeout:g} s; send it whole", status=408) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                done = True
            return message

        await self.app(scope, receiving, send)


def protocol_with_header_timeout(timeout: float) -> Any:
    """uvicorn's h11 protocol class, with a ``timeout`` (seconds) on reading a request's headers."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    body = json.dumps({"error": {"status": 408, "message": f"the request headers took over {timeout:g} s"}}).encode()
    answer = (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )

    class HeaderTimeoutProtocol(H11Protocol):
        """H11Protocol with a header read timer (see :mod:`tether.serve.limits`)."""

        header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # the request's headers are in: its cycle began
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's headers

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if timeout > 0:
                self.header_timer = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None

        def _expired(self) -> None:
            self.header_timer = None
            if self.transport.is_closing():
                return
            client = self.client[0] if self.client else None
            log.info("408 request headers not received within %g s", timeout, extra={"event": "timeout.headers", "client": client})
            self.transport.write(answer)
            self.transport.close()

    return HeaderTimeoutProtocol


__all__ = ["BODY_TIMEOUT", "HEADER_TIMEOUT", "BodyTimeout", "protocol_with_header_timeout"]
