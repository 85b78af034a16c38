"""Strands' `strands.types.interrupt`: the interrupt record and the answer block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from ...interrupts import Interrupt as _TetherInterrupt
from ...types import InterruptRecord


@dataclass(frozen=True)
class Interrupt(_TetherInterrupt):
    """Tether's interrupt with Strands' ``response`` attribute (the human's answer, None
    until answered), so ``interrupt.response`` reads as in Strands; ``id``, ``name`` and
    ``reason`` are the same."""

    response: Any = None

    @classmethod
    def of(cls, interrupt: _TetherInterrupt, response: Any = None) -> Interrupt:
        """The Strands view of Tether's ``interrupt`` (with its ``response``, if answered)."""
        return cls(
            id=interrupt.id,
            name=interrupt.name,
            reason=interrupt.reason,
            source=interrupt.source,
            tool_use_id=interrupt.tool_use_id,
            response=response,
        )

    def to_dict(self) -> InterruptRecord:
        """The record, with ``response`` when the interrupt has one."""
        record = super().to_dict()
        if self.response is not None:
            record["response"] = self.response
        return record


class InterruptResponse(TypedDict):
    """The answer to one interrupt: its ``interruptId`` and the ``response``."""

    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """A prompt content block answering an interrupt."""

    interruptResponse: InterruptResponse


__all__ = ["Interrupt", "InterruptResponse", "InterruptResponseContent"]
