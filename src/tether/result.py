"""`AgentResult`: what one invocation returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .interrupts import Interrupt
from .metrics import Metrics
from .types import Message

if TYPE_CHECKING:
    from .checkpoint import Checkpoint


@dataclass
class AgentResult:
    """The outcome of an invocation.

    ``stop_reason`` is ``end_turn``, ``max_tokens``, ``interrupt``, ``checkpoint``,
    ``cancelled``, ``limit_cycles``, ``limit_tokens``, ``stop_sequence``, ``content_filtered``
    or ``guardrail_intervened``. ``message`` is the last assistant message (at an
    ``after_tools`` checkpoint: the one whose tool calls just ran — their results are the last
    message of the conversation). ``state`` is a copy of the agent state; ``metrics`` covers the
    whole run (``metrics.invocation`` this call alone). ``str(result)`` is the final text.
    """

    stop_reason: str
    message: Message | None
    metrics: Metrics
    state: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Interrupt] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    structured_output: Any = None

    @property
    def text(self) -> str:
        if self.message is None:
            return ""
        return "\n".join(block["text"] for block in self.message["content"] if "text" in block)

    def __str__(self) -> str:
        return self.text
