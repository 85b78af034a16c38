"""Consume-once at the HTTP edge: a request that starts or continues work is idempotent by a key.

A client (or a proxy) that sends a request again, because it did not see the answer, must not
start the work twice. Every request that starts or continues a run (a new run, a new turn, the
answers to its interrupts, an AG-UI ``RunAgentInput``) may carry a client key: the
``Idempotency-Key`` header on the JSON API, ``runId`` on AG-UI. The key is recorded **in the
run**, in the agent state under :data:`~tether.serve.registry.SERVE_KEY` (``requests``: key →
``{digest, after}``), by a ``BeforeInvocation`` hook of the run's agent (:class:`KeyRecorder`).
The hook runs under the run's lease, after the stored run is loaded and before the turn's first
write, so the key is stored by the same atomic write (the store's compare-and-swap on the head
revision) as the work it starts: a new turn's prompt, or the step that consumes interrupt
answers. Nothing else is stored, and the store needs no new table or statement.

How a repeat is answered, whichever server process gets it, before or after a restart:

- **the key is recorded** (:func:`recorded`): the same request body (its :func:`digest`) returns
  the first request's run and stream; another body is a 422;
- **a new run without a ``run_id``** takes its id from the key (:func:`run_id_for`), so every
  repeat names the same run;
- **the run is busy** (executing here or in another process: its lease is held) while the
  repeat comes: it waits for the key to appear in the run's head (:func:`await_record`), which
  the first request's first write puts there;
- **two requests race** for one run: the run's lease lets one of them in at a time; the one that
  comes second finds the key in the state it loaded, and its hook raises :class:`Duplicate`
  before anything is written.

A key is scoped to its run (the thread, for AG-UI): keys are kept per run, the last
:data:`KEPT` (32) of them. Graph and swarm runs keep no agent state of the server's: for them a key
only names a new run (its id from the key; a copy that finds the run gets it, without comparing
bodies), and a key on any other request for them is refused (400); an AG-UI input on a graph or
swarm thread is not kept (its ``runId`` is no opt-in).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError, TetherError
from ..hooks import BeforeInvocation, HookRegistry
from .registry import SERVE_KEY

HEADER = "idempotency-key"
"""The header that carries a JSON API request's key."""
KEPT = 32
"""How many keys a run keeps (the oldest is dropped first): they travel in the head, written at
every step, so a run keeps the keys of its recent requests, not all of them."""
WAIT = 30.0
"""Seconds a repeat waits for a busy run to record its key before it is answered 409."""
_MAX_KEY = 255


@dataclass(frozen=True)
class RequestKey:
    """A request's client key and the digest of what it asks.

    Attributes:
        key: The client's key (namespaced: ``agui:RUNID`` for AG-UI).
        digest: The SHA-256 of the request's canonical JSON (:func:`digest`).
        after: The run's step count when the request came (where its stream starts).
        explicit: The client asked for it (a header): a run that cannot keep keys (a graph's, a
            swarm's) refuses the request rather than run it unkept. AG-UI's ``runId`` is always
            there: on such a thread it is not kept, and the input runs.
        note: More JSON fields its record keeps (AG-UI: the id the client gave its prompt).
    """

    key: str
    digest: str
    after: int = 0
    explicit: bool = True
    note: Mapping[str, Any] | None = None


class Duplicate(TetherError):
    """The run already records this request's key: it is a repeat (raised by :class:`KeyRecorder`
    under the run's lease, before anything is written)."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        super().__init__("this request's key is recorded in the run already")
        self.record = dict(record)


def key_from(value: str | None, namespace: str = "") -> str | None:
    """The key a request carries (None: no key), or a RequestError naming what is wrong with it.

    Args:
        value: The header's (or field's) value.
        namespace: A prefix keeping keys of one protocol apart from another's.
    """
    if value is None:
        return None
    if not (0 < len(value) <= _MAX_KEY) or not value.isascii() or not value.isprintable():
        raise RequestError(f"Idempotency-Key must be 1-{_MAX_KEY} printable ASCII characters, got {value[:40]!r}")
    return namespace + value


def digest(what: Mapping[str, Any]) -> str:
    """The SHA-256 of ``what`` as canonical JSON (its first 128 bits, hex): two requests ask the
    same thing when it is equal."""
    text = json.dumps(what, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def run_id_for(key: str) -> str:
    """The id of the new run a keyed request without a ``run_id`` starts: every repeat names it."""
    return "req-" + hashlib.sha256(key.encode()).hexdigest()[:40]


def has_marker(head: Mapping[str, Any]) -> bool:
    """Whether a stored run is an agent run of the server (it keeps request keys), not a graph's or a swarm's."""
    state = head.get("state")
    return isinstance(state, dict) and isinstance(state.get(SERVE_KEY), dict)


def recorded(head: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    """The record of ``key`` in a stored run's head (None: not recorded)."""
    state = (head or {}).get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    requests = marker.get("requests") if isinstance(marker, dict) else None
    record = requests.get(key) if isinstance(requests, dict) else None
    return dict(record) if isinstance(record, dict) else None


def same_request(run_id: str, request: RequestKey, record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` when it is this request's (same digest); a 422 RequestError when the key was used
    with another body."""
    if record.get("digest") != request.digest:
        raise RequestError(
            f"Idempotency-Key {request.key!r} was used for another request on run {run_id!r}; send a new key for a new request",
            status=422,
        )
    return dict(record)


class KeyRecorder:
    """The hook that records a request's key in the run it starts, or refuses a repeat.

    Registered on the served agent for one invocation. On ``BeforeInvocation`` (under the
    lease, the stored run loaded, nothing of the turn written yet) it raises :class:`Duplicate`
    when the run's state records the key already, and otherwise records it: the turn's first
    write stores it.
    """

    def __init__(self, request: RequestKey) -> None:
        self.request = request

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeInvocation, self.before)

    def before(self, event: BeforeInvocation) -> None:
        state = event.agent.state
        marker = state.get(SERVE_KEY) or {}
        requests = dict(marker.get("requests") or {})
        if self.request.key in requests:
            raise Duplicate(requests[self.request.key])
        requests[self.request.key] = {**(self.request.note or {}), "digest": self.request.digest, "after": self.request.after}
        for old in list(requests)[: max(0, len(requests) - KEPT)]:
            del requests[old]
        state.set(SERVE_KEY, {**marker, "requests": requests})


async def await_record(
    run_id: str,
    request: RequestKey,
    read_head: Callable[[], Awaitable[Mapping[str, Any] | None]],
    busy: Callable[[], Awaitable[bool]],
    refusal: RequestError,
    *,
    wait: float = WAIT,
) -> dict[str, Any]:
    """The record of ``request``'s key once the run records it (a repeat of a request that is
    being carried out by this or another server process); ``refusal`` when the run comes to rest
    without it, or ``wait`` seconds pass.

    Args:
        run_id: The run.
        request: The request's key.
        read_head: Reads the run's head from the store.
        busy: Whether the run still executes (here, or in any process: its lease is held).
        refusal: What to raise when the key never appears.
        wait: The longest wait, in seconds.
    """
    deadline = time.monotonic() + wait
    while True:
        executing = await busy()
        record = recorded(await read_head(), request.key)  # read after: a run at rest shows its last write
        if record is not None:
            return same_request(run_id, request, record)
        if not executing or time.monotonic() > deadline:
            raise refusal
        await asyncio.sleep(0.05)


__all__ = [
    "HEADER",
    "KEPT",
    "Duplicate",
    "KeyRecorder",
    "RequestKey",
    "await_record",
    "digest",
    "has_marker",
    "key_from",
    "recorded",
    "run_id_for",
    "same_request",
]
