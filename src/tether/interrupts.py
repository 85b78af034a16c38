"""Interrupts: a tool or hook stops the run to ask a human, and resumes with the answer.

An interrupt's id is derived from where it was raised (the source, the tool-use id and the
interrupt's name), so the same call raises the same id after a resume, in any process. A tool
that asks twice under the same name gets the first answer twice; use distinct names for
distinct questions.

The run's ``interrupt_state`` (JSON, it travels in snapshots and checkpoints) holds:

- ``interrupts``: id -> ``{id, name, reason, source, tool_use_id}``, plus ``response`` once
  answered, in tool-call order;
- ``activated``: true while the run is stopped (or about to stop) for interrupts;
- ``context``: the loop cursor of the interrupted cycle (results of the tools that finished), so
  a fresh agent that loads the snapshot resumes the cycle without re-running them;
- ``output_tool``: the structured-output tool of the interrupted call, if any;
- ``metrics``: the run's accumulated metrics at the stop, so a fresh agent that loads the
  snapshot keeps counting from there (consumed by the resume).

It is cleared when the interrupted cycle closes. Its shape is
:class:`~tether.types.InterruptState` (each interrupt an :class:`~tether.types.InterruptRecord`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .answers import answers_from, check_answers, json_value
from .errors import InterruptError
from .types import InterruptRecord, InterruptState, JSONValue


@dataclass(frozen=True)
class Interrupt:
    """A request for a human answer: ``id`` to answer it, ``name`` and ``reason`` to show.

    ``source`` is ``"tool"`` (raised by ``ToolContext.interrupt``) or ``"hook"`` (raised by
    ``BeforeToolCall.interrupt``); ``tool_use_id`` is the tool call it belongs to.

    Attributes:
        id: The id to answer with (``{"interruptResponse": {"interruptId": id, "response": ...}}``).
        name: What is asked, as named by the tool or hook (``"approve"``).
        reason: JSON details for whoever answers (what to approve, the options, ...).
        source: ``"tool"`` or ``"hook"``: what raised it.
        tool_use_id: The tool call it belongs to, or None.
    """

    id: str
    name: str
    reason: JSONValue = None
    source: str = "tool"
    tool_use_id: str | None = None

    def to_dict(self) -> InterruptRecord:
        """The interrupt as a record of ``interrupt_state["interrupts"]`` (JSON)."""
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "source": self.source,
            "tool_use_id": self.tool_use_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interrupt:
        """An interrupt from a record (or any mapping with ``id`` and ``name``)."""
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


class PauseSignal(BaseException):
    """Raised by a tool whose work paused at a checkpoint (an agent tool whose child agent
    paused): its caller pauses too, with a checkpoint of its own, and runs the call again when
    resumed (the tool finds its paused work in the run's state). Only a call whose
    ``ToolContext.pausable`` is true may raise it.
    """


class InterruptRaiser:
    """Looks up the answer to an interrupt, or raises it; shared by tool contexts and hooks."""

    __slots__ = ("_source", "_state", "_tool_use_id")

    def __init__(self, interrupt_state: InterruptState, source: str, tool_use_id: str) -> None:
        self._state = interrupt_state
        self._source = source
        self._tool_use_id = tool_use_id

    def __call__(self, name: str, reason: JSONValue = None, *, ident: str | None = None) -> JSONValue:
        """The answer to interrupt ``name`` of this call, or raise it (:class:`InterruptSignal`).

        ``ident`` is the interrupt's id; by default Tether's deterministic
        :func:`interrupt_id`. A caller passing its own must derive it from the call and the name
        alone, so a resume finds the answer again.
        """
        if not isinstance(name, str) or not name:
            raise InterruptError(f"interrupt name must be a non-empty string, got {name!r}")
        if ident is None:
            ident = interrupt_id(self._source, self._tool_use_id, name)
        table = self._state.get("interrupts") or {}
        known = table.get(ident)
        if known is not None and "response" in known:
            return known["response"]
        # The reason is persisted with the run, so it must be JSON; say so where it is raised.
        reason = json_value(reason, f"interrupt {name!r} reason")
        raise InterruptSignal(Interrupt(ident, name, reason, self._source, self._tool_use_id))


def pending_interrupts(interrupt_state: InterruptState) -> list[Interrupt]:
    """The interrupts of a run that still wait for an answer, in tool-call order."""
    table = interrupt_state.get("interrupts") or {}
    return [Interrupt.from_dict(item) for item in table.values() if "response" not in item]


def is_interrupted(interrupt_state: InterruptState) -> bool:
    """True when the run stopped for interrupts and at least one still waits for an answer."""
    return bool(interrupt_state.get("activated")) and any(
        "response" not in item for item in (interrupt_state.get("interrupts") or {}).values()
    )


def apply_responses(interrupt_state: InterruptState, responses: list[dict[str, Any]]) -> None:
    """Record ``interruptResponse`` answers.

    Everything is checked before anything is recorded (:mod:`tether.answers`), so a bad list
    changes nothing: unknown ids, an id answered twice (in this list or earlier), a missing or
    non-JSON response, an in-doubt question answered with neither ``"rerun"``, a string nor an
    object, and responses when nothing is interrupted are ``InterruptError``s. Answering only
    some of the pending interrupts is allowed; the run then stops again for the others.
    """
    table = interrupt_state.get("interrupts") or {}
    if not interrupt_state.get("activated") or not table:
        raise InterruptError("interrupt responses were given but nothing is interrupted; send a normal prompt instead")
    where = "prompt[{i}].interruptResponse"
    answers = answers_from(responses, where)
    check_answers(answers, table, where=where)
    for answer in answers:
        table[answer["interruptId"]]["response"] = answer["response"]


__all__ = [
    "Interrupt",
    "InterruptRaiser",
    "InterruptSignal",
    "PauseSignal",
    "apply_responses",
    "interrupt_id",
    "is_interrupted",
    "pending_interrupts",
]
