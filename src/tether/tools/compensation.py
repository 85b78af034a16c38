"""Compensation: how a tool undoes its own effect, part of the tool's effect contract.

A tool with a real side effect (a booking, a charge) may declare ``@tool(compensate=cancel)``.
When a durable run is *compensated* (it failed, was cancelled or ran out of budget with the
agent's ``compensate_on`` naming that, or an application called ``agent.compensate(run_id)`` /
``tether compensate RUN``), the runtime calls the compensation of every performed call of the
run, newest first, each at most once (see :mod:`tether.durable.compensation`). The callable
receives one :class:`Undo`: the call's input, its recorded result and its idempotency key.

A compensation is run again only when a crash caught it between its start and its recorded
outcome (the undo is then *in doubt*): it gets the same :attr:`Undo.undo_key`, so a system that
deduplicates by key (the ``Idempotency-Key`` header, a unique column) undoes once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import CompensationError, ToolError
from ..types import ToolResult

TRIGGERS = ("failed", "cancelled", "budget", "requested")
"""Why a run is compensated: its turn raised, it was cancelled (``agent.cancel()``), it stopped
on its budget, or an application asked. ``Agent(compensate_on=...)`` takes the first three."""
UNDO_SUFFIX = "/undo"
"""What an undo's idempotency key adds to its call's key (``run_id/toolUseId/undo``)."""


@dataclass(frozen=True)
class Undo:
    """What a compensation is told about the call it undoes.

    Attributes:
        run_id: The durable run the call belongs to.
        tool_use_id: The call's ``toolUseId``.
        tool: The tool's name.
        input: The call's input, as the model gave it (JSON).
        result: The call's recorded ``toolResult``; None when the call is *in doubt* (it started
            and a crash lost its result: it may or may not have had its effect).
        idempotency_key: The key the call itself saw (``run_id/toolUseId``): look the effect up
            by it.
        undo_key: The key of this undo (``idempotency_key + "/undo"``): the same in every
            attempt, so a repeated undo (after a crash caught it in doubt) can be deduplicated.
    """

    run_id: str
    tool_use_id: str
    tool: str
    input: dict[str, Any]
    result: ToolResult | None
    idempotency_key: str
    undo_key: str

    @property
    def in_doubt(self) -> bool:
        """True when the call's result was never recorded (see :attr:`result`)."""
        return self.result is None

    @property
    def output(self) -> Any:
        """The call's value: the first ``json`` (else ``text``) content of its result; None
        when there is none (an in-doubt call)."""
        if self.result is None:
            return None
        for block in self.result.get("content") or []:
            if "json" in block:
                return block["json"]
        for block in self.result.get("content") or []:
            if "text" in block:
                return block["text"]
        return None


Compensate: TypeAlias = Callable[[Undo], Any]
"""A compensation: called with an :class:`Undo` (sync or ``async``); what it returns is recorded
as text; raising marks the undo failed (recorded, the unwinding goes on)."""


def compensation_name(compensate: Compensate | None) -> str | None:
    """The name a manifest records for a compensation (``module:qualname``), part of its tool's
    contract digest; None for none. Only the name is recorded: comparing manifests never imports it.

    Args:
        compensate: The compensation, or None.
    """
    if compensate is None:
        return None
    module = getattr(compensate, "__module__", None) or "?"
    qualname = getattr(compensate, "__qualname__", None) or type(compensate).__qualname__
    return f"{module}:{qualname}"


def checked_compensation(compensate: Any, tool: str) -> Compensate | None:
    """``compensate`` if it is None or callable, else a :class:`~tether.errors.ToolError` naming the tool.

    Args:
        compensate: What ``@tool(compensate=...)`` was given.
        tool: The tool's name.
    """
    if compensate is not None and not callable(compensate):
        raise ToolError(f"tool {tool!r}: compensate= must be a callable taking an Undo, got {type(compensate).__name__}")
    return compensate  # type: ignore[no-any-return]


def checked_triggers(value: Iterable[str]) -> tuple[str, ...]:
    """``Agent(compensate_on=...)``: some of ``failed``, ``cancelled``, ``budget``, else
    :class:`~tether.errors.CompensationError` naming the bad one.

    Args:
        value: What ``compensate_on`` was given.
    """
    if isinstance(value, str):
        raise CompensationError(f"compensate_on must be a list of triggers, got the string {value!r}")
    triggers = tuple(value)
    for item in triggers:
        if item not in TRIGGERS[:3]:
            raise CompensationError(f"compensate_on: {item!r} is not one of {', '.join(TRIGGERS[:3])}")
    return triggers


__all__ = ["TRIGGERS", "UNDO_SUFFIX", "Compensate", "Undo", "checked_compensation", "checked_triggers", "compensation_name"]
