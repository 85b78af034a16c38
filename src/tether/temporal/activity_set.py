"""`ActivitySet`: what the agent, graph and swarm activity classes share.

Each set of activities a worker registers (:class:`~tether.temporal.TetherActivities`,
:class:`~tether.temporal.GraphActivities`, :class:`~tether.temporal.SwarmActivities`) rebuilds
its agent, graph or swarm from the worker's registry (name + JSON config) and turns values into
payloads by one :class:`~tether.temporal.policy.PayloadPolicy`; a subclass names its activity
methods in ``ACTIVITIES`` and adds only them.
"""

from __future__ import annotations

from typing import Any, ClassVar, Unpack

from ..errors import TetherError
from ..interrupts import Interrupt
from ..metrics import Metrics
from ..result import AgentResult
from .blobs import BlobStore
from .claimcheck import expand_message
from .errors import to_failure
from .payloads import expand_interrupt, expand_state
from .policy import PayloadLimits, PayloadPolicy
from .registry import AgentRegistry

_BUILDERS = {"agent": "build", "graph": "build_graph", "swarm": "build_swarm"}


class ActivitySet:
    """A registry, a payload policy and the activity methods named in ``ACTIVITIES``."""

    ACTIVITIES: ClassVar[tuple[str, ...]] = ()
    """The names of the activity methods :meth:`all` returns."""

    def __init__(self, registry: AgentRegistry, blobs: BlobStore | PayloadPolicy, **limits: Unpack[PayloadLimits]) -> None:
        """The activities of a worker serving ``registry``'s agents, graphs and swarms.

        Args:
            registry: The agent, graph and swarm factories.
            blobs: The payload policy, or the blob store shared by every worker and client of
                the runs (with ``inline_limit`` and ``max_value_bytes`` as keywords, as for
                :func:`~tether.temporal.create_worker`).
        """
        self.registry = registry
        self.payloads = PayloadPolicy.of(blobs, **limits)

    def all(self) -> list[Any]:
        """The activity callables to register on a worker."""
        return [getattr(self, name) for name in self.ACTIVITIES]

    def _agent_result(self, out: Any) -> AgentResult:
        """The :class:`~tether.AgentResult` of a nested agent workflow (a graph node's, a swarm
        member's turn), read from its compact result ``out`` (its state and message expanded)."""
        message = out.get("message")
        return AgentResult(
            str(out["stop_reason"]),
            None if message is None else expand_message(self.payloads.blobs, message),
            Metrics(out["metrics"], out.get("invocation")),
            expand_state(self.payloads.blobs, (out.get("run") or {}).get("state")),
            [Interrupt.from_dict(expand_interrupt(self.payloads.blobs, item)) for item in out.get("interrupts") or []],
        )

    def _build(self, kind: str, name: Any, config: Any) -> Any:
        """The registry's ``kind`` (agent, graph or swarm) ``name`` built from ``config``; a
        non-retryable failure when it cannot be built."""
        try:
            return getattr(self.registry, _BUILDERS[kind])(name, config or {})
        except TetherError as exc:
            raise to_failure(exc, f"cannot build {kind} {name!r}") from None


__all__ = ["ActivitySet"]
