"""HTTP requests that carry the tool call's idempotency key as ``Idempotency-Key``.

A tool that calls an API with side effects (create a charge, send a message) is re-run after a
crash left its call *in doubt* (started, no result recorded). The API can recognise the second
request only if it carries the same key as the first: ``ToolContext.idempotency_key``
(``run_id/toolUseId``) is stable across resumes, so these clients send it, as the
``Idempotency-Key`` header of the IETF HTTP API draft (the header Stripe, Adyen, PayPal and
others read).

The key is attached when the request is sent, from the tool call the request is made in (a
context variable the loop sets around every tool call; threads of a synchronous tool and tasks
the tool starts inherit it). So one client may serve many calls, and :func:`http_client` made at
import time works as well as ``context.http``. Only requests whose method is not idempotent by
HTTP's own semantics carry it (``POST`` and ``PATCH``; ``GET``, ``PUT``, ``DELETE``... are
idempotent already); a request that sets the header itself keeps its own value; a request made
outside any tool call carries none.

A call that sends several such requests gets the key on the first and ``<key>#2``, ``<key>#3``...
on the next ones, so each distinct request has a key of its own (an API would otherwise answer
the second with the first one's stored response) and a re-run of the call numbers them the
same way, as long as it sends them in the same order.

httpx is not a dependency of Tether itself: install ``tether[http]`` (the provider extras bring
it too).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    import httpx

IDEMPOTENCY_HEADER = "Idempotency-Key"
"""The header the clients set (draft-ietf-httpapi-idempotency-key-header)."""

KEYED_METHODS: frozenset[str] = frozenset({"POST", "PATCH"})
"""The methods whose requests carry the key by default: the ones HTTP does not define as idempotent."""


class CallKey:
    """The idempotency key of the tool call running in this context, and how many keyed
    requests it has sent (so the n-th gets ``<key>#n``).

    Args:
        key: The call's ``ToolContext.idempotency_key``.
    """

    __slots__ = ("_sent", "key")

    def __init__(self, key: str) -> None:
        self.key = key
        self._sent = itertools.count(1)  # next() on it is atomic: a synchronous tool may send from several threads

    def next_key(self) -> str:
        """The key for the call's next keyed request."""
        sent = next(self._sent)
        return self.key if sent == 1 else f"{self.key}#{sent}"


_CURRENT: ContextVar[CallKey | None] = ContextVar("tether_tool_call_key", default=None)


class keyed_call:
    """Run the block as the tool call whose idempotency key is ``key`` (the loop wraps every
    tool call in it; a small class rather than a generator: it runs once per tool call).

    Args:
        key: The call's ``ToolContext.idempotency_key``.
    """

    __slots__ = ("_token", "key")

    def __init__(self, key: str) -> None:
        self.key = key
        self._token: Token[CallKey | None] | None = None

    def __enter__(self) -> CallKey:
        call = CallKey(self.key)
        self._token = _CURRENT.set(call)
        return call

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None


def current_key() -> CallKey | None:
    """The key of the tool call running in this context (None outside a tool call)."""
    return _CURRENT.get()


def stamp(request: httpx.Request, methods: Collection[str] = KEYED_METHODS) -> None:
    """Set ``Idempotency-Key`` on ``request`` when it is sent from a tool call, its method is
    one of ``methods`` and it does not set the header itself.

    Args:
        request: The request about to be sent.
        methods: The methods whose requests carry the key (upper case).
    """
    if request.method.upper() not in methods or IDEMPOTENCY_HEADER in request.headers:
        return
    call = _CURRENT.get()
    if call is not None:
        request.headers[IDEMPOTENCY_HEADER] = call.next_key()


def _httpx() -> Any:
    try:
        import httpx
    except ImportError as exc:
        raise ConfigurationError(
            "tether.effects' HTTP clients need the 'httpx' package, which is not installed; install it with pip install 'tether[http]'"
        ) from exc
    return httpx


def _hooks(kwargs: dict[str, Any], hook: Any) -> dict[str, Any]:
    """``kwargs`` with ``hook`` first among the request event hooks (the caller's are kept)."""
    hooks = dict(kwargs.pop("event_hooks", None) or {})
    hooks["request"] = [hook, *hooks.get("request", [])]
    return {**kwargs, "event_hooks": hooks}


def http_client(*, methods: Collection[str] = KEYED_METHODS, **kwargs: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose requests carry the idempotency key of the tool call they
    are sent from (see the module docstring); close it yourself (``async with``), or use
    ``context.http``, the run's shared one, closed with the invocation.

    Args:
        methods: The HTTP methods whose requests carry the key (default ``POST`` and ``PATCH``).
        **kwargs: Passed to ``httpx.AsyncClient`` (``base_url``, ``timeout``, ``headers``,
            ``event_hooks``: yours run after the one that sets the key).

    Returns:
        The client.

    Raises:
        ConfigurationError: httpx is not installed (``pip install 'tether[http]'``).
    """
    lib = _httpx()
    keyed = frozenset(m.upper() for m in methods)

    async def on_request(request: httpx.Request) -> None:
        stamp(request, keyed)

    client: httpx.AsyncClient = lib.AsyncClient(**_hooks(kwargs, on_request))
    return client


def sync_http_client(*, methods: Collection[str] = KEYED_METHODS, **kwargs: Any) -> httpx.Client:
    """The blocking ``httpx.Client`` form of :func:`http_client`, for synchronous tools (they run
    in a worker thread, which inherits the call's key).

    Args:
        methods: The HTTP methods whose requests carry the key (default ``POST`` and ``PATCH``).
        **kwargs: Passed to ``httpx.Client``.

    Returns:
        The client (close it, or use it in a ``with`` block).

    Raises:
        ConfigurationError: httpx is not installed (``pip install 'tether[http]'``).
    """
    lib = _httpx()
    keyed = frozenset(m.upper() for m in methods)

    def on_request(request: httpx.Request) -> None:
        stamp(request, keyed)

    client: httpx.Client = lib.Client(**_hooks(kwargs, on_request))
    return client
