"""Effects: what the loop core asks its driver to do next.

The core never performs I/O; it returns one of these and waits for the outcome to be folded in.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..types import Message, ToolChoice, ToolUse
from .state import CheckpointPosition


@dataclass(frozen=True, slots=True)
class CallModel:
    """Call the model with the run's messages; ``tool_choice`` forces a tool when set,
    ``max_tokens`` caps the reply's output (what the run's budget leaves; None: no cap)."""

    tool_choice: ToolChoice | None
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run these tool calls (the ones of the current cycle that have no recorded result)."""

    tool_uses: list[ToolUse]


@dataclass(frozen=True, slots=True)
class CloseCycle:
    """Every tool call of the open cycle already has a result (e.g. a resumed or forked run):
    the core appended the results message; the driver reports ``messages`` like any added
    messages (persist, hooks, stream) and asks for the next effect."""

    messages: list[Message]


@dataclass(frozen=True, slots=True)
class Pause:
    """Stop at a checkpoint; the run state is consistent and resumable as it is."""

    position: CheckpointPosition
    cycle_index: int


@dataclass(frozen=True, slots=True)
class Stop:
    """The invocation is over, for ``reason`` (``end_turn``, ``interrupt``, ``limit_cycles``...);
    ``detail`` says more when there is more to say (``budget_exhausted``: the limit that refused)."""

    reason: str
    detail: str | None = None


Effect = CallModel | RunTools | CloseCycle | Pause | Stop
