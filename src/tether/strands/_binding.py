"""What a :class:`~tether.strands.session_manager.TetherSessionManager` tracks about one agent in this process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..types import Message
from ._run import StrandsRun

if TYPE_CHECKING:
    from strands import Agent


@dataclass
class AgentBinding:
    """One initialized agent's run and what the manager tracks about it in this process."""

    agent: Agent
    run: StrandsRun
    recovering: bool = False
    """The stored turn was cut off: the next invocation finishes it (see the module docstring)."""
    held: Message | None = None
    """The model's last response of a cut-off turn, kept out of ``agent.messages`` until the turn resumes."""
    held_interrupts: dict[str, Any] | None = None
    """Strands' interrupt state of a cut-off turn that stopped for interrupts, re-activated when it resumes."""
    restored: list[Any] | None = None
    """The conversation a cut-off turn was restored with (the agent's list), until the turn resumes."""
    replay: Message | None = None
    """A final answer to hand back instead of the next model call (the resumed turn's)."""
    replayed: Message | None = None
    reused: Message | None = None
    """The cut-off turn's recorded model response the resumed turn reuses (its usage counted once: :mod:`._metrics`)."""
    echo: list[Any] = field(default_factory=list)
    """Recorded messages of the resumed turn that no model call gives back: their events are handed
    to the callback handler at the start of the invocation (:mod:`tether.strands._echo`)."""
    replay_installed: bool = False
    """The replay middleware is on the agent (added at the first replay)."""
    premarked: set[str] = field(default_factory=set)
    """Calls this process recorded as started with the model's response (not in doubt here)."""
    turn_new: bool = False
    prompt_latest: bool = False
    """The turn's recorded prompt ends the conversation (no model response yet): a redaction of the
    latest message redacts the prompt too."""
    reading: bool = False
    """The current invocation is ``Agent.structured_output()``'s (its hooks fire without messages): no turn."""
    resumed: bool = False
    written: dict[str, Any] = field(default_factory=dict)
    state_seen: tuple[Any, int, Any] | None = None
    """The agent's state object, its change count and its value when last read (see
    :func:`tether.strands.session_manager._agent_state`)."""
    stops: list[dict[str, Any]] = field(default_factory=list)
    """The cut-off turn's interrupt stops that were answered, to hand back again (oldest first)."""
    replaying: dict[str, Any] | None = None
    """The recorded stop the current (or last) invocation handed back, until the program answers it."""
    arm_stop: dict[str, Any] | None = None
    """A recorded stop to hand back instead of running the current invocation."""
    full: list[Any] | None = None
    """The cut-off turn's whole restored conversation while recorded stops are handed back."""
    crash_interrupts: dict[str, Any] = field(default_factory=dict)
    """Strands' interrupt state as restored (at the crash), put back once the recorded stops are answered."""
    usage_base: dict[str, int] = field(default_factory=dict)
    metrics_restored: bool = False
    """A cut-off turn's metrics were restored (:mod:`tether.strands._metrics`): its usage up to the
    turn's last cycle boundary is counted already."""

    def messages(self) -> list[Message]:
        """The live conversation as stored: the agent's, plus a response held aside."""
        live = cast("list[Message]", self.agent.messages)  # the agent's own list: no copy per write
        return live if self.held is None else [*live, self.held]


__all__ = ["AgentBinding"]
