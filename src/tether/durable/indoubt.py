"""In-doubt tool calls: started before a crash, with no recorded result.

An idempotent tool is simply run again (same idempotency key), and so is a tool declared
``transactional=True``: its effects commit in the store write that records its result (see
:mod:`tether.durable.outbox`), so a call with no recorded result left no effect. A tool declared
``idempotent=False`` goes to the agent's ``reconcile`` callable, which returns a
``ToolResult`` to record or :data:`RERUN`; with no reconcile callable the run stops with a
``tether.in_doubt`` interrupt, answered with ``"rerun"`` or a result to record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..answers import IN_DOUBT, RERUN  # defined with the answer rules (tether.answers); named here too
from ..types import ToolUse


@dataclass(frozen=True)
class InDoubtCall:
    """What a reconcile callable is told about one in-doubt call.

    Attributes:
        run_id: The durable run the call belongs to.
        tool_use: The call: ``toolUseId``, ``name`` and ``input``.
        idempotency_key: ``run_id/toolUseId``, the key the tool saw on its context; ask the
            system the tool talks to whether a request with this key went through.
    """

    run_id: str
    tool_use: ToolUse
    idempotency_key: str

    def to_reason(self) -> dict[str, Any]:
        """The JSON reason of the ``tether.in_doubt`` interrupt."""
        return {
            "tool": self.tool_use["name"],
            "input": self.tool_use.get("input"),
            "toolUseId": self.tool_use["toolUseId"],
            "idempotency_key": self.idempotency_key,
            "question": "this call started but its result was not recorded; answer 'rerun' or the result to record",
        }


__all__ = ["IN_DOUBT", "RERUN", "InDoubtCall"]
