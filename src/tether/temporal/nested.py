"""Agent tools as child workflows: the pure, workflow-safe part.

On Temporal, a call of an agent tool (``child.as_tool()``, or an ``Agent`` in ``tools=[...]``)
is a child workflow: an ``AgentWorkflow`` of the agent ``"<parent>/<tool>"`` (resolved on the
worker by :class:`~tether.temporal.AgentRegistry`) whose workflow id, and run id, is
:func:`~tether.multiagent.child_run_id` of the parent's run id and the tool-use id, as a local
durable parent names its child run. The child's model and tool calls are activities of its
own history, so a worker that dies in the middle of a child redoes no finished child work,
and Temporal's UI shows the child under its parent.

A child started with ``nested`` returns when it stops on interrupts instead of waiting for
answers. The parent keeps the child's state in its own agent state, as a local parent does
(``state["tether.agent_tools"]["calls"][toolUseId]``, :data:`~tether.agent_tool.STATE_KEY`),
with ``carried`` (the child's compact state) where a local parent keeps ``snapshot``; the
client converts one into the other, so a snapshot moves between local and Temporal runs.
The child's interrupts become the parent's, named ``"<tool>/<child interrupt>"`` with the
child's reason and the ids a local parent gives them; once all are answered, the call runs
again: a new execution of the child's workflow id continues the child with the answers.

This module holds what workflow code computes itself (names, ids, prompts and results whose
parts are inline); :class:`~tether.temporal.activities.TetherActivities` does the same for
offloaded parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ..agent_tool import asked_name
from ..interrupts import interrupt_id
from ..types import InterruptRecord
from .payloads import is_placeholder
from .shapes import Answers, CompactMessage, CompactResult

CHILD_SOURCE = "tool"
"""The source of a parent's interrupt that stands for its child's (an agent tool raises it)."""


def prompt_message(tool_input: Any, tool_name: str) -> CompactMessage | str | None:
    """The child's prompt, as a compact user message, for an agent tool's (compact) input.

    Returns an error text for an input without a string ``input`` (the call's error result),
    and None when the input was offloaded to the blob store (an activity must read it).
    """
    if is_placeholder(tool_input):
        return None
    text = tool_input.get("input") if isinstance(tool_input, dict) else None
    if not isinstance(text, str):
        return f"Invalid input for tool {tool_name!r}: input: a string is required"
    return {"role": "user", "content": [{"text": text}]}


def answer_result(tool_use_id: str, message: CompactMessage | None) -> CompactResult | None:
    """The tool result of a finished child: its final text, as a local agent tool returns it.

    None when a part of ``message`` (compact) was offloaded (an activity must read it).
    """
    content = [] if message is None else message.get("content") or []
    if any(is_placeholder(block) for block in content):
        return None
    text = "\n".join(block["text"] for block in content if isinstance(block, dict) and "text" in block)
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def ask(
    tool_name: str, tool_use_id: str, entry: dict[str, Any], table: Mapping[str, Mapping[str, Any]]
) -> tuple[Answers, list[InterruptRecord]]:
    """The parent's side of a child's pending interrupts (``entry["pending"]``).

    Each child interrupt is asked as a parent interrupt named ``"<tool>/<name>"`` (``#2``...
    when taken), remembered in ``entry["asked"]``, with the id a local agent tool's
    ``context.interrupt`` gives it. Returns the child's answers found in the parent's
    interrupt ``table`` (``{"interruptId", "response"}``, child ids) and the parent interrupt
    records still unanswered.
    """
    asked: dict[str, str] = entry.setdefault("asked", {})
    answers: Answers = []
    unanswered: list[InterruptRecord] = []
    for record in entry["pending"]:
        name = asked_name(tool_name, record["id"], record["name"], asked)
        ident = interrupt_id(CHILD_SOURCE, tool_use_id, name)
        item = table.get(ident)
        if item is not None and "response" in item:
            answers.append({"interruptId": record["id"], "response": item["response"]})
        else:
            record_out = {"id": ident, "name": name, "reason": record.get("reason"), "source": CHILD_SOURCE, "tool_use_id": tool_use_id}
            unanswered.append(cast(InterruptRecord, record_out))
    return answers, unanswered


__all__ = ["CHILD_SOURCE", "answer_result", "ask", "prompt_message"]
