"""Strands' ``ToolContext`` on Tether: what a ``@tool(context=True)`` function receives.

It *is* a :class:`tether.tools.context.ToolContext` (so ``idempotency_key``, ``run_id`` and
``on_recorded`` work for Strands-style tools too) with Strands' field names and signatures on
top: ``tool_use``, ``agent``, ``invocation_state``, ``cancel_signal`` and
``interrupt(name, reason=None, response=None)``.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from ...tools.context import ToolContext as _TetherToolContext


@dataclass
class ToolContext(_TetherToolContext):
    """Framework-provided data for a tool (Strands' ``strands.types.tools.ToolContext``).

    Attributes:
        tool_use: The call (``toolUseId``, ``name``, ``input``).
        agent: The agent running the call.
        invocation_state: The caller's per-call dict (Strands puts ``agent`` in it too).
        cancel_signal: Set when the invocation is cancelled (read only).
    """

    cancel_signal: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @classmethod
    def from_tether(cls, context: _TetherToolContext) -> ToolContext:
        """The Strands-shaped view of the context Tether's loop made for one call.

        The interrupt raiser, the event sink and the ``on_recorded`` list are shared with
        ``context``, so interrupts, streamed events and bookkeeping reach the run unchanged.
        """
        if isinstance(context, cls):
            return context
        signal = getattr(context.agent, "cancel_signal", None)
        return cls(
            tool_use=context.tool_use,
            agent=context.agent,
            invocation_state=context.invocation_state,
            run_id=context.run_id,
            pausable=context.pausable,
            _raiser=context._raiser,
            _emit=context._emit,
            _on_recorded=context._on_recorded,
            cancel_signal=signal if isinstance(signal, threading.Event) else threading.Event(),
        )

    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any:
        """Ask a human: stops the run the first time, returns the answer after the resume.

        Args:
            name: The interrupt's name (unique within the call).
            reason: Why (JSON), shown to whoever answers.
            response: An answer known in advance: returned at once, the run does not stop.
        """
        if response is not None:
            return response
        if self._raiser is None:
            raise RuntimeError("this ToolContext cannot raise interrupts")
        # Strands' id of a tool's interrupt, so a program that stored or printed it sees the same.
        return self._raiser(name, reason, ident=f"v1:tool_call:{self.tool_use['toolUseId']}:{uuid.uuid5(uuid.NAMESPACE_OID, name)}")


__all__ = ["ToolContext"]
