"""The server's gate: the Host header (no DNS rebinding) and the bearer token, on every request.

A page of another site whose name an attacker re-points at 127.0.0.1 (DNS rebinding) reaches a
loopback server from the user's browser, but its requests carry the attacker's name in ``Host``:
they are answered 421 without touching a run. The header is parsed strictly (:func:`parse_host`):
a value that is not a well-formed host (``127.0.0.1:80@evil.example``) is refused too. Without ``allowed_hosts`` the server answers only
to loopback names (``127.0.0.1``, ``localhost``, ``[::1]``, any port); behind a proxy, list the
public names (``"*"`` turns the check off, e.g. when every request carries the token anyway).

``GET`` and ``HEAD`` of the ``probe_paths`` (``/healthz``, ``/readyz``) pass without either
check: a load balancer or an orchestrator probes a server by its address, and the answers hold
no data.

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
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
"""The names a loopback server answers to by default (with any port)."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


_HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?)(?::(?P<port>[0-9]{1,5}))?")
"""A ``Host`` header as RFC 9110 allows it: a name (letters, digits, dots, hyphens), an IPv4
address or a bracketed IPv6 literal, then an optional numeric port. Nothing else (no ``@``, no
path, no second colon outside brackets) is a host."""


def parse_host(header: str) -> tuple[str, str | None] | None:
    """``header`` as ``(name, port)`` (lowercase; port None when absent), or None when it is not
    a well-formed ``Host`` value (``127.0.0.1:80@evil.example``, a bare IPv6 address, a path)."""
    match = _HOST.fullmatch(header.strip().lower())
    if match is None:
        return None
    port = match["port"]
    if port is not None and int(port) > 65535:
        return None
    return match["name"], port


def host_allowed(header: str | None, allowed: Sequence[str]) -> bool:
    """Whether a ``Host`` header names this server: a well-formed host (:func:`parse_host`) that
    is one of ``allowed`` (a bare name matches any port, ``name:port`` that port only; ``*`` any
    well-formed host, or none)."""
    if not header:
        return "*" in allowed
    parsed = parse_host(header)
    if parsed is None:
        return False
    if "*" in allowed:
        return True
    name, port = parsed
    value = name if port is None else f"{name}:{port}"
    return any(entry.lower() in (value, name) for entry in allowed)


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
        probe_paths: Sequence[str] = (),
    ) -> None:
        self.app = app
        self.probes = frozenset(probe_paths)
        self.token = token
        self.allowed = tuple(allowed_hosts)
        self.public = frozenset(public_paths)
        self.origins = tuple(origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no websocket route exists: the router refuses those
            await self.app(scope, receive, send)
            return
        method = scope.get("method")
        if method in ("GET", "HEAD") and scope.get("path") in self.probes:
            await self.app(scope, receive, send)  # a health probe (a load balancer's, by address): holds no data
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        if not host_allowed(headers.get("host"), self.allowed):
            host = headers.get("host", "")[:100]
            await _refuse(send, 421, f"this server does not answer to Host {host!r}; allowed: {list(self.allowed)}")
            return
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


__all__ = ["LOOPBACK_NAMES", "SAFE_METHODS", "Gate", "host_allowed", "is_loopback", "origin_allowed", "parse_host"]
