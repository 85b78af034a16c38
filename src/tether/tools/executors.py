"""Tool executors: how the tool calls of one cycle are scheduled.

Results always land in the conversation in call order (the core orders them), so the executor
only decides concurrency.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..types import ToolUse

RunOne = Callable[[ToolUse], Coroutine[Any, Any, bool]]
"""Runs one call; returns False when the call was interrupted (no result recorded)."""


class ToolExecutor(ABC):
    """Schedules the calls of one cycle."""

    @abstractmethod
    async def execute(self, tool_uses: Sequence[ToolUse], run_one: RunOne) -> None:
        """Run every call through ``run_one``.

        Args:
            tool_uses: The cycle's calls, in the order the model made them.
            run_one: Runs one call; returns False when it was interrupted or not run.
        """

    def runs_in_order(self, tool_uses: Sequence[ToolUse]) -> bool:
        """True when :meth:`execute` would run ``tool_uses`` one after another, in order,
        stopping at the first call that was not run, and do nothing else.

        The driver then runs the calls itself, in the invocation's own task, instead of calling
        :meth:`execute` in a task of its own (which it needs to stream events of calls running
        at once): the same behaviour for less work. The default, False, always calls
        :meth:`execute`; override it only with that exact behaviour.

        Args:
            tool_uses: The cycle's calls.
        """
        return False


class ConcurrentToolExecutor(ToolExecutor):
    """All calls of a cycle at once (the default)."""

    def runs_in_order(self, tool_uses: Sequence[ToolUse]) -> bool:
        """A single call is run in order (see :meth:`ToolExecutor.runs_in_order`)."""
        return len(tool_uses) == 1

    async def execute(self, tool_uses: Sequence[ToolUse], run_one: RunOne) -> None:
        if len(tool_uses) == 1:
            await run_one(tool_uses[0])
            return
        try:
            async with asyncio.TaskGroup() as group:
                for use in tool_uses:
                    group.create_task(run_one(use))
        except BaseExceptionGroup as errors:
            # Tools never raise (failures become error results): what escapes is a hook's or
            # the driver's own error. Raise it as itself, as a single call would, not wrapped.
            raise errors.exceptions[0] from errors


class SequentialToolExecutor(ToolExecutor):
    """One call after another, in order; stops at the first interrupted call."""

    def runs_in_order(self, tool_uses: Sequence[ToolUse]) -> bool:
        """Always (see :meth:`ToolExecutor.runs_in_order`)."""
        return True

    async def execute(self, tool_uses: Sequence[ToolUse], run_one: RunOne) -> None:
        for use in tool_uses:
            if not await run_one(use):
                return
