"""The activities of a swarm run on Temporal: describe the swarm, a member turn's prompt and result.

The ``SwarmWorkflow`` runs each member turn as a child ``AgentWorkflow``; what it cannot compute
itself, because it needs the swarm object (built from the registry) or the blob store, happens
here: the swarm's members and limits (:meth:`SwarmActivities.describe_swarm`), a turn prompt
too large to travel inline (:meth:`SwarmActivities.swarm_prompt`) and a finished turn's
:class:`~tether.AgentResult` with its handoff, both read from the child's compact result
(:meth:`SwarmActivities.swarm_turn`). They are short bookkeeping steps: the workflow runs them
as local activities.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity

from ..errors import TetherError
from ..interrupts import Interrupt
from ..metrics import Metrics
from ..multiagent.state import encode_result
from ..multiagent.swarm_turns import HANDOFF_KEY
from ..result import AgentResult
from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT, compact_message, expand_message
from .errors import to_failure
from .payloads import DEFAULT_MAX_VALUE_BYTES, expand_interrupt, expand_state, offload
from .registry import AgentRegistry


class SwarmActivities:
    """The swarm activities a worker registers (one registry and one blob store, as
    :class:`~tether.temporal.activities.TetherActivities`)."""

    def __init__(
        self,
        registry: AgentRegistry,
        blobs: BlobStore,
        *,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
    ) -> None:
        """The activities of a worker serving ``registry``'s swarms.

        Args:
            registry: The swarm (and agent) factories.
            blobs: The blob store shared by every worker and client of the runs.
            inline_limit: Values larger than this (bytes of JSON) travel as blob references.
            max_value_bytes: The hard limit of one value (a member's result): a larger one fails
                the run with a non-retryable ``PayloadTooLargeError`` naming it (None: no limit).
        """
        self.registry = registry
        self.blobs = blobs
        self.inline_limit = inline_limit
        self.max_value_bytes = max_value_bytes

    def all(self) -> list[Any]:
        """The activity callables to register on a worker."""
        return [self.describe_swarm, self.swarm_prompt, self.swarm_turn]

    @activity.defn(name="tether.describe_swarm")
    async def describe_swarm(self, params: dict[str, Any]) -> dict[str, Any]:
        """The swarm's members, their descriptions, its entry point and limits
        (:meth:`~tether.multiagent.swarm_turns.SwarmSpec.to_dict`)."""
        try:
            swarm = self.registry.build_swarm(params["swarm"], params.get("config") or {})
        except TetherError as exc:
            raise to_failure(exc, f"cannot build swarm {params.get('swarm')!r}") from None
        return swarm.spec.to_dict()

    @activity.defn(name="tether.swarm_prompt")
    async def swarm_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        """A member turn's prompt (``params["message"]``, a user message) made compact."""
        try:
            return compact_message(self.blobs, params["message"], self.inline_limit, self.max_value_bytes, "the prompt of a member turn")
        except TetherError as exc:
            raise to_failure(exc) from None

    @activity.defn(name="tether.swarm_turn")
    async def swarm_turn(self, params: dict[str, Any]) -> dict[str, Any]:
        """A finished member turn, read from its child workflow's (compact) result ``params["out"]``.

        Returns ``result``: the turn's :class:`~tether.AgentResult` as a swarm state holds it
        (``encode_result``; one blob reference when large), and ``handoff``: what the member's
        agent state holds under ``tether.handoff`` (None: it answered).
        """
        out = params["out"]
        member = str(params.get("member"))
        try:
            message = out.get("message")
            state = expand_state(self.blobs, (out.get("run") or {}).get("state"))
            result = AgentResult(
                str(out["stop_reason"]),
                None if message is None else expand_message(self.blobs, message),
                Metrics(out["metrics"], out.get("invocation")),
                state,
                [Interrupt.from_dict(expand_interrupt(self.blobs, item)) for item in out.get("interrupts") or []],
            )
            encoded = offload(
                self.blobs,
                encode_result(result),
                f"the result of member {member!r}",
                limit=self.inline_limit,
                hard_limit=self.max_value_bytes,
            )
        except TetherError as exc:
            raise to_failure(exc, f"cannot read the turn of member {member!r}") from None
        handoff = state.get(HANDOFF_KEY)
        return {"result": encoded, "handoff": handoff if isinstance(handoff, dict) else None}


__all__ = ["SwarmActivities"]
