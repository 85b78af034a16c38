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

from temporalio import activity

from ..errors import TetherError
from ..multiagent.state import encode_result
from ..multiagent.swarm_turns import HANDOFF_KEY
from .activity_io import SpecData, SwarmPromptInput, SwarmRef, Turn, TurnInput
from .activity_set import ActivitySet
from .errors import to_failure
from .shapes import CompactMessage


class SwarmActivities(ActivitySet):
    """The swarm activities a worker registers: ``tether.describe_swarm``, ``tether.swarm_prompt``
    and ``tether.swarm_turn``.

    Args:
        registry: The swarm factories (and those of the member agents).
        blobs: The payload policy or the blob store, as for :class:`~tether.temporal.TetherActivities`.
    """

    ACTIVITIES = ("describe_swarm", "swarm_prompt", "swarm_turn")

    @activity.defn(name="tether.describe_swarm")
    async def describe_swarm(self, params: SwarmRef) -> SpecData:
        """The swarm's members, their descriptions, its entry point and limits
        (:meth:`~tether.multiagent.swarm_turns.SwarmSpec.to_dict`)."""
        spec: SpecData = self._build("swarm", params["swarm"], params.get("config")).spec.to_dict()
        return spec

    @activity.defn(name="tether.swarm_prompt")
    async def swarm_prompt(self, params: SwarmPromptInput) -> CompactMessage:
        """A member turn's prompt (``params["message"]``, a user message) made compact."""
        try:
            return self.payloads.compact_message(params["message"], "the prompt of a member turn")
        except TetherError as exc:
            raise to_failure(exc) from None

    @activity.defn(name="tether.swarm_turn")
    async def swarm_turn(self, params: TurnInput) -> Turn:
        """A finished member turn, read from its child workflow's (compact) result ``params["out"]``.

        Returns ``result``: the turn's :class:`~tether.AgentResult` as a swarm state holds it
        (``encode_result``; one blob reference when large), and ``handoff``: what the member's
        agent state holds under ``tether.handoff`` (None: it answered).
        """
        out = params["out"]
        member = str(params.get("member"))
        try:
            result = self._agent_result(out)
            encoded = self.payloads.offload(encode_result(result), f"the result of member {member!r}")
        except TetherError as exc:
            raise to_failure(exc, f"cannot read the turn of member {member!r}") from None
        handoff = result.state.get(HANDOFF_KEY)
        return {"result": encoded, "handoff": handoff if isinstance(handoff, dict) else None}


__all__ = ["SwarmActivities"]
