"""What a durable session committed, handed to an observer in memory once the store holds it.

A server that executes a run and streams its events (:mod:`tether.serve`) would otherwise read
every step it just wrote back from the store. With an observer set in :data:`COMMIT_OBSERVER`
(a context variable: the task that drives a run sets it, and the sessions made inside that
task see it), every :class:`~tether.durable.session.DurableSession` stages each write's step row
and new messages as the store will return them (a JSON round trip of the values it encodes,
made when the write is encoded: later changes to the live objects do not leak in) and, once the
write is committed, calls :meth:`CommitObserver.committed` with them, on the thread that saw
the commit. Nothing is handed over for a write that fails; a reader that misses a step (it
started after it was committed) reads the store as before.

The copy is what the store returns for a store without a redaction policy (a redacted store
keeps less than the live head: an observer must not be used with one).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from .._json import dumps, parse_json
from ..types import Message
from .codec.validation import check_step
from .history import Step


class CommitObserver(Protocol):
    """Told of every write committed by the durable sessions of a run (see the module docstring)."""

    head_keys: tuple[str, ...] | None
    """The keys of a step's head it reads (None: the whole head); the others are left out of the
    copy (a head holds the agent's manifest, state and cursor: copying it whole at every write
    costs more than what the observer saves)."""

    def committed(self, run_id: str, step: Step | None, messages: dict[int, Message]) -> None:
        """``run_id`` committed a write: its step row (None: a write without one) and the messages
        it appended, by seq. Called on the thread that saw the commit (not always the loop's)."""


COMMIT_OBSERVER: ContextVar[CommitObserver | None] = ContextVar("tether_commit_observer", default=None)
"""The observer the durable sessions made in this context tell of their commits (None: nobody)."""


@dataclass(frozen=True, slots=True)
class Staged:
    """One encoded write's step row and new messages, as the store returns them."""

    step: dict[str, Any] | None
    messages: dict[int, Message]
    whole: bool = True
    """The step's head is whole (checked as a stored one is), not the observer's keys of it."""

    @classmethod
    def of(cls, head: dict[str, Any], new: list[Message], step: dict[str, Any] | None, keys: tuple[str, ...] | None = None) -> Staged:
        """The copy of a write's rows (``head["next_seq"]`` ends its new messages); with ``keys``,
        the step's head holds only those of them it has."""
        first = int(head["next_seq"]) - len(new)
        messages = {seq: parse_json(dumps(message)) for seq, message in enumerate(new, first)}
        if step is not None and keys is not None:
            step = {**step, "head": {key: step["head"][key] for key in keys if key in step["head"]}}
        return cls(None if step is None else parse_json(dumps(step)), messages, keys is None)

    def tell(self, observer: CommitObserver, run_id: str) -> None:
        """Hand the committed write to ``observer``."""
        step = None
        if self.step is not None and self.whole:
            step = check_step(self.step, int(self.step["step"]))
        elif self.step is not None:  # a part of a head is no head to check: the row as the session made it
            step = Step(**{**self.step, "status": self.step.get("status") or "running"})
        observer.committed(run_id, step, self.messages)


__all__ = ["COMMIT_OBSERVER", "CommitObserver", "Staged"]
