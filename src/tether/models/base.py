"""The `Model` protocol: one async stream of normalized events per request.

A provider maps its wire format to :class:`~tether.types.StreamEvent` dicts (Converse-shaped)
and its failures to :class:`~tether.errors.ModelThrottledError` (retried by the loop),
:class:`~tether.errors.ContextWindowOverflowError` (handled by the conversation manager) and
:class:`~tether.errors.ModelAuthError`. The request is JSON, so the same call can run in-process
or as a Temporal activity.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from ..types import ModelRequest, StreamEvent


@runtime_checkable
class Model(Protocol):
    """What the loop needs from a model."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream the response to ``request`` as normalized events."""
        ...

    @property
    def model_id(self) -> str:
        """A short human-readable id (``"openai:gpt-4o"``, ``"scripted"``)."""
        ...


def preflight(model: Any) -> None:
    """Raise now what a model's configuration would make its first request raise, without a request.

    A provider model may have a ``preflight()`` method that checks what it can know locally:
    its SDK installed (:class:`~tether.errors.ConfigurationError` naming the extra), its API
    key set (:class:`~tether.errors.ModelAuthError`), its URL well-formed. The ``tether``
    command calls this before it creates or changes a run, so a missing key leaves no failed
    run behind. Whether an endpoint is reachable or a key is valid is only known by calling it.
    A model without the method passes.
    """
    check = getattr(model, "preflight", None)
    if callable(check):
        check()


def output_cap(request: ModelRequest, own: Any = None) -> int | None:
    """The output-token cap of one request: the smaller of the request's ``max_tokens`` (set by
    a run's budget) and the model's own cap ``own`` (an int, or anything else for none)."""
    asked = request.get("max_tokens")
    mine = own if isinstance(own, int) and not isinstance(own, bool) else None
    if asked is None:
        return mine
    return asked if mine is None else min(asked, mine)


def config_of(model: Any) -> dict[str, Any]:
    """A model's JSON config, when it exposes one (used by snapshots' metadata and the CLI)."""
    getter = getattr(model, "get_config", None)
    return dict(getter()) if callable(getter) else {}
