"""`Runnable`: the one shape of everything Tether serves and runs on Temporal.

An :class:`~tether.Agent`, a :class:`~tether.multiagent.Graph` and a
:class:`~tether.multiagent.Swarm` are each a runnable: the server (``tether serve``), the Temporal
registry and the CLI take this protocol and call its members, rather than asking which class they
were handed (as Temporal collects a workflow's handlers from a base class, each class carries what
differs). A Strands agent made durable by the provider joins by supplying the same members.

- :attr:`Runnable.kind` names the shape on the wire (a Temporal registry entry, a served entry):
  ``"agent"``, ``"graph"`` or ``"swarm"`` (:data:`KINDS`);
- :meth:`Runnable.stream_async` runs it with a prompt (a task), yielding its events, the last one
  ``{"type": "result", ...}``; :meth:`Runnable.resume_stream` continues a stored run (with the
  answers to its interrupts, or None);
- :meth:`Runnable.owns_state` says whether a stored run's agent state is a run of this runnable
  (a served graph or swarm run is matched by the spec it keeps);
- :meth:`Runnable.child` is a nested part by name (an agent tool's agent, a graph node, a swarm
  member), as a Temporal child workflow builds it;
- :meth:`Runnable.cancel` stops a running run at its next step (a
  :class:`~tether.errors.StateError` where the shape cannot be cancelled);
- :meth:`Runnable.compensate_async` undoes a stored run's performed effects, newest first, each
  at most once (a graph's or swarm's through its nodes' nested runs).

Answering a runnable's interrupts is the same for every shape: :mod:`tether.answers`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .durable.compensation import CompensationReport
    from .durable.store import RunStore

KINDS: Final = ("agent", "graph", "swarm")
"""The kinds of runnable, as the wire names them."""


@runtime_checkable  # the server and the Temporal registry check what an operator's factory returned
class Runnable(Protocol):
    """What the server, the Temporal registry and the CLI need of an agent, a graph or a swarm."""

    @property
    def kind(self) -> str:
        """``"agent"``, ``"graph"`` or ``"swarm"``: the shape on the wire."""

    store: RunStore | None
    """Where its durable runs are stored (None: the default store on first use)."""

    def stream_async(self, prompt: Any = None, /, *, run_id: str | None = None) -> AsyncIterator[Any]:
        """Run on ``prompt`` (durable with ``run_id``), yielding events; the last is the result."""
        ...

    def resume_stream(self, prompt: Any, /, *, run_id: str) -> AsyncIterator[Any]:
        """Continue stored run ``run_id`` (``prompt``: ``interruptResponse`` blocks, or None), yielding events."""
        ...

    def owns_state(self, state: Mapping[str, Any]) -> bool:
        """Whether a stored run whose agent state is ``state`` is a run of this runnable."""
        ...

    def child(self, step: str, where: str | None = None) -> object:
        """The nested part named ``step``: a runnable, or a graph's callable node
        (ConfigurationError when there is none; ``where`` names this runnable in the message)."""
        ...

    def cancel(self) -> None:
        """Ask a running run to stop at its next step."""
        ...

    async def compensate_async(self, run_id: str) -> CompensationReport:
        """Undo the performed effects of stored run ``run_id`` (see :mod:`tether.durable.compensation`)."""
        ...


def kind_of(value: object) -> str | None:
    """The kind of ``value`` when it is a runnable, else None."""
    if not isinstance(value, Runnable):
        return None
    kind = getattr(value, "kind", None)
    return kind if kind in KINDS else None


__all__ = ["KINDS", "Runnable", "kind_of"]
