"""Interrupts: a tool or hook stops the run to ask a human, and resumes with the answer.

An interrupt's id is derived from where it was raised (the tool-use id and the interrupt's
name), so the same call raises the same id after a resume, in any process. The answers live in
the run's ``interrupt_state`` (JSON), which travels in snapshots and checkpoints.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .errors import InterruptError
from .types import JSONValue


@dataclass(frozen=True)
class Interrupt:
    """A request for a human answer: ``id`` to answer it, ``name`` and ``reason`` to show."""

    id: str
    name: str
    reason: JSONValue = None
    source: str = "tool"
    tool_use_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "source": self.source,
            "tool_use_id": self.tool_use_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        return cls(
            id=data["id"],
            name=data["name"],
            reason=data.get("reason"),
            source=data.get("source", "tool"),
            tool_use_id=data.get("tool_use_id"),
        )


def interrupt_id(source: str, tool_use_id: str, name: str) -> str:
    """The deterministic id of an interrupt raised by ``source`` for one tool call."""
    digest = hashlib.sha256(f"{source}\x00{tool_use_id}\x00{name}".encode()).hexdigest()
    return f"int_{digest[:24]}"


class InterruptSignal(BaseException):
    """Raised inside a tool or hook to stop for a human answer.

    A ``BaseException`` so that a tool's ``except Exception`` does not swallow it.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt.name)
        self.interrupt = interrupt


class InterruptRaiser:
    """Looks up the answer to an interrupt, or raises it; shared by tool contexts and hooks."""

    __slots__ = ("_source", "_state", "_tool_use_id")

    def __init__(self, interrupt_state: dict[str, Any], source: str, tool_use_id: str) -> None:
        self._state = interrupt_state
        self._source = source
        self._tool_use_id = tool_use_id

    def __call__(self, name: str, reason: JSONValue = None) -> JSONValue:
        if not isinstance(name, str) or not name:
            raise InterruptError("interrupt name must be a non-empty string")
        ident = interrupt_id(self._source, self._tool_use_id, name)
        table = self._state.get("interrupts") or {}
        known = table.get(ident)
        if known is not None and "response" in known:
            return known["response"]
        raise InterruptSignal(Interrupt(ident, name, reason, self._source, self._tool_use_id))


def pending_interrupts(interrupt_state: dict[str, Any]) -> list[Interrupt]:
    """The interrupts of a run that still wait for an answer, in the order they were raised."""
    table = interrupt_state.get("interrupts") or {}
    return [Interrupt.from_dict(item) for item in table.values() if "response" not in item]


def apply_responses(interrupt_state: dict[str, Any], responses: list[dict[str, Any]]) -> None:
    """Record ``interruptResponse`` answers; unknown ids and answered-twice are errors."""
    table = interrupt_state.get("interrupts") or {}
    if not interrupt_state.get("activated") or not table:
        raise InterruptError("interrupt responses were given but nothing is interrupted")
    for i, item in enumerate(responses):
        ident = item.get("interruptId") if isinstance(item, dict) else None
        if not isinstance(ident, str):
            raise InterruptError(f"prompt[{i}].interruptResponse.interruptId must be a string")
        if "response" not in item:
            raise InterruptError(f"prompt[{i}].interruptResponse.response is missing (interrupt {ident})")
        if ident not in table:
            known = ", ".join(table) or "none"
            raise InterruptError(f"unknown interrupt id {ident!r}; pending interrupts: {known}")
    for item in responses:
        table[item["interruptId"]]["response"] = item["response"]
