"""`AnswerInbox`: interrupt answers sent to a waiting workflow, taken one batch at a time.

Agent, graph and swarm workflows all stop for interrupts the same way: answers arrive through
an ``answer_interrupts`` update (which waits until its batch was taken, and whose validator
refuses answers up front) or an ``answer_interrupts_signal`` signal (fire and forget: a batch
that does not fit is logged and skipped). Each workflow keeps its own decorated handlers
(Temporal registers handlers per workflow class) and delegates the bookkeeping here, so the
order, the tickets and the log-and-skip rule are one piece of code.

A batch carries the differences its sender accepts (``allow``, see :mod:`tether.manifest`) for
the check an agent workflow makes before it takes the answers; a batch refused then (or by any
``TetherError`` of the workflow's ``apply``) is remembered by ticket, so the update that sent it
fails with that error (a signal's is logged and skipped).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NamedTuple, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ..errors import InterruptError, TetherError
    from .errors import to_failure
    from .shapes import Answers

T = TypeVar("T")


class Batch(NamedTuple):
    """One batch of answers and the differences its sender accepts."""

    answers: Answers
    allow: list[str]


class AnswerInbox:
    """Batches of interrupt answers in arrival order, and how many the workflow has taken."""

    def __init__(self) -> None:
        self._batches: list[Batch] = []
        self._taken = 0
        self._refused: dict[int, TetherError] = {}

    def post(self, answers: Answers, allow: list[str] | None = None) -> int:
        """Queue a batch (an update or a signal arrived); returns its ticket for :meth:`taken`.

        Args:
            answers: The interrupt answers.
            allow: The incompatible differences the sender accepts (see :mod:`tether.manifest`).
        """
        self._batches.append(Batch(answers, list(allow or [])))
        return len(self._batches)

    async def taken(self, ticket: int) -> TetherError | None:
        """Wait until the batch of ``ticket`` was taken (applied, or skipped as invalid); returns
        the error that refused it, if one did."""
        await workflow.wait_condition(lambda: self._taken >= ticket)
        return self._refused.pop(ticket, None)

    def refuse_unless_waiting(self, waiting: bool, what: str, status: str) -> None:
        """An update validator's first check: refuse answers unless the workflow waits for some
        and no earlier batch is still queued.

        Args:
            waiting: The workflow stopped for interrupt answers.
            what: The run, for the error (``"run 'r1'"``, ``"graph run 'g1'"``).
            status: The workflow's status, for the error.
        """
        if not waiting or len(self._batches) > self._taken:
            raise to_failure(InterruptError(f"{what} is not waiting for interrupt answers (status {status})"))

    async def take(self, apply: Callable[[Answers], T], what: str) -> T:
        """Wait for the next batch that ``apply`` accepts and return what ``apply`` returned.

        ``apply`` raises a ``TetherError`` for a batch that does not fit (a signal cannot be
        refused up front): that batch is logged and skipped, and the wait goes on.
        """

        async def applied(batch: Batch) -> T:
            return apply(batch.answers)

        return await self.take_batch(applied, what)

    async def take_batch(self, apply: Callable[[Batch], Awaitable[T]], what: str) -> T:
        """:meth:`take` with an ``apply`` that reads the whole batch and may wait (run an
        activity): the batch counts as taken once ``apply`` returned or raised."""
        while True:
            await workflow.wait_condition(lambda: len(self._batches) > self._taken)
            ticket = self._taken + 1
            try:
                return await apply(self._batches[ticket - 1])
            except TetherError as exc:
                workflow.logger.warning("ignoring interrupt responses for %s: %s", what, exc)
                self._refused[ticket] = exc
            finally:
                self._taken = ticket

    def release(self) -> None:
        """Mark every queued batch taken (the run ended: updates still waiting return)."""
        self._taken = len(self._batches)


__all__ = ["AnswerInbox", "Answers", "Batch"]
