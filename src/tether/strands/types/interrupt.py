"""Strands' `strands.types.interrupt`: the interrupt record and the answer block."""

from __future__ import annotations

from typing import Any, TypedDict

from ...interrupts import Interrupt


class InterruptResponse(TypedDict):
    """The answer to one interrupt: its ``interruptId`` and the ``response``."""

    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """A prompt content block answering an interrupt."""

    interruptResponse: InterruptResponse


__all__ = ["Interrupt", "InterruptResponse", "InterruptResponseContent"]
