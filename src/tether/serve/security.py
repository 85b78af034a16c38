"""The server's gate: the Host header (no DNS rebinding) and the bearer token, on every request.

A page of another site whose name an attacker re-points at 127.0.0.1 (DNS rebinding) reaches a
loopback server from the user's browser, but its requests carry the attacker's name in ``Host``:
they are answered 421 without touching a run. Without ``allowed_hosts`` the server answers only
to loopback names (``127.0.0.1``, ``localhost``, ``[::1]``, any port); behind a proxy, list the
public names (``"*"`` turns the check off, e.g. when every request carries the token anyway).

With a token, every request needs ``Authorization: Bearer TOKEN`` (compared in constant time),
except ``GET`` of the few ``public_paths`` that hold no data (the chat page at ``/``: a browser
navigating to it cannot send the header; the page then sends it on every request it makes);
``tether serve`` refuses to bind a non-loopback address without one.

Cross-site requests: a page of another site can make the user's browser send a "simple" POST
(no preflight) to a loopback server, and without a token nothing else would stop it. Every
request that changes something (any method but GET, HEAD and OPTIONS) whose ``Origin`` header
names another origin than the server's own (the ``Host`` it was sent to) or one of the CORS
origins (``--cors``) is answered 403; clients that send no ``Origin`` (curl, SDKs) are not
browsers acting for a page and pass. JSON bodies must also be sent as ``application/json``
(:func:`tether.serve.app.read_json`: 415 otherwise), which a cross-site page cannot do without a
CORS preflight.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
"""The names a loopback server answers to by default (with any port)."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def host_allowed(header: str | None, allowed: Sequence[str]) -> bool:
    """Whether a ``Host`` header names this server: one of ``allowed`` (a bare name matches any
    port, ``name:port`` that port only; ``*`` anything)."""
    if "*" in allowed:
        return True
    if not header:
        return False
    value = header.strip().lower()
    name = value.rsplit(":", 1)[0] if value.count(":") == 1 or (value.startswith("[") and "]:" in value) else value
    return any(value == entry.lower() or name == entry.lower() for entry in allowed)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing: a cross-site ``Origin`` is not checked on them."""


def origin_allowed(origin: str | None, host: str | None, allowed: Sequence[str]) -> bool:
    """Whether a state-changing request with this ``Origin`` may proceed: no ``Origin`` (not a
    browser page), the server's own origin (its host and port equal ``Host``), or one of ``allowed``."""
    if origin is None:
        return True
    value = origin.strip().lower().rstrip("/")
    if value in (entry.lower().rstrip("/") for entry in allowed):
        return True
    if value == "null" or not host:
        return False  # a sandboxed frame or a file: page
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and parts.netloc == host.strip().lower()


class Gate:
    """ASGI middleware: the Host check, then the bearer token (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_hosts: Sequence[str],
        public_paths: Sequence[str] = (),
        origins: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.token = token
        self.allowed = tuple(allowed_hosts)
        self.public = frozenset(public_paths)
        self.origins = tuple(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no websocket route exists: the router refuses those
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        if not host_allowed(headers.get("host"), self.allowed):
            host = headers.get("host", "")[:100]
            await _refuse(send, 421, f"this server does not answer to Host {host!r}; allowed: {list(self.allowed)}")
            return
        method = scope.get("method")
        if method not in SAFE_METHODS and not origin_allowed(headers.get("origin"), headers.get("host"), self.origins):
            origin = headers.get("origin", "")[:100]
            await _refuse(send, 403, f"cross-site request from Origin {origin!r} refused (allow a page's origin with --cors)")
            return
        public = method in ("GET", "HEAD") and scope.get("path") in self.public
        if self.token is not None and not public:
            given = headers.get("authorization", "")
            scheme, _, credential = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.token.encode()):
                await _refuse(send, 401, "missing or wrong bearer token: send Authorization: Bearer TOKEN", bearer=True)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str, *, bearer: bool = False) -> None:
    body = json.dumps({"error": {"status": status, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if bearer:
        headers.append((b"www-authenticate", b'Bearer realm="tether"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["LOOPBACK_NAMES", "SAFE_METHODS", "Gate", "host_allowed", "is_loopback", "origin_allowed"]
