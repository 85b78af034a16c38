"""The events a served run streams: committed ones derived from its stored steps, live deltas beside them.

A run's step rows (:mod:`tether.durable.history`) are append-only and numbered, so they are the
stream's cursor. Every step turns, by a pure function of the step row and the messages it added,
into a fixed list of committed events; the ``k``-th of step ``n`` has the durable id ``"n.k"``.
Reading the same step again (after a restart, in another server process) gives the same events
with the same ids, so a client that reconnects with ``Last-Event-ID: n.k`` receives exactly the
events after it: no gap, no duplicate.

Committed events (``id`` set):

- ``status``: the run's status changed (``running``, ``interrupted``, ``finished``...);
- ``message``: a message appended to the conversation (the prompt, a model reply, tool results);
- ``tool_call_start``: a tool call the model asked for, with its input;
- ``tool_call_end``: its recorded result;
- ``interrupt``: the run waits for an answer (id, name, reason); in-doubt questions included;
- ``in_doubt``: a resume found a call that started but whose result was not recorded, and what
  it decided (``rerun``, ``interrupt``, ``reconciled``);
- ``state``: the agent state changed: the whole new state (the keys Tether keeps for itself,
  ``tether.*``, left out);
- ``result``: a turn ended, or a resume stopped at once to ask about calls in doubt: status,
  stop reason, the answer's text and the pending interrupts.

Live events (no ``id``): ``text_delta`` and ``reasoning_delta`` of a model call still in flight,
with ``text`` and ``offset``: how many characters of that kind the model call streamed before
this piece (0: its first piece), so a reader that joined mid-call knows it. They are best
effort: not stored, not replayed after a reconnect or a crash; the committed ``message`` that
follows holds the whole reply and supersedes them.

The encodings (SSE, :mod:`tether.serve.agui`) read this one event source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ..durable.history import Step
from ..errors import RequestError
from ..interrupts import pending_interrupts
from ..loop.core import tool_uses_of
from ..types import InterruptState, Message

COMMITTED_KINDS = ("status", "message", "tool_call_start", "tool_call_end", "in_doubt", "state", "interrupt", "result", "compensation")
"""The kinds of committed events, in the order a step yields them."""
UNWINDING = ("unwind", "undo", "unwound")
"""The positions of a compensation's steps (:mod:`tether.durable.compensation`): each is a
``compensation`` event (the plan, one undo's outcome, the totals)."""
LIVE_KINDS = ("text_delta", "reasoning_delta")
"""The kinds of live events (no durable id)."""
RESTING = ("finished", "failed", "interrupted", "stopped", "paused", "compensated", "compensation_failed")
"""Statuses where a run waits for nobody but a client: the event stream of a run at rest ends."""


class ServeEvent(TypedDict, total=False):
    """One event of a served run: ``type`` names its kind, ``id`` its durable position (committed
    events only), ``data`` its JSON payload."""

    type: str
    id: str
    data: dict[str, Any]


class CursorError(RequestError):
    """A ``Last-Event-ID`` or ``?after=`` that is not an event id of this stream."""


_ID = re.compile(r"(0|[1-9][0-9]{0,17})(?:\.(0|[1-9][0-9]{0,8}))?")


@dataclass(frozen=True, order=True)
class Cursor:
    """A position in a run's committed events: after event ``index`` of step ``step``.

    Attributes:
        step: The step number (0: before the first step, so ``Cursor(0)`` is the beginning).
        index: The event's index within the step (None: after every event of the step).
    """

    step: int
    index: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> Cursor:
        """``"n.k"`` (after that event), ``"n"`` (after step ``n``) or None/empty (the start)."""
        if text is None or not text.strip():
            return cls(0)
        match = _ID.fullmatch(text.strip())
        if match is None:
            raise CursorError(f"event id {text[:40]!r} is not one of this stream's ids (STEP.INDEX, e.g. '4.1', or STEP)")
        index = match.group(2)
        return cls(int(match.group(1)), None if index is None else int(index))

    def admits(self, event_id: str) -> bool:
        """Whether the committed event ``event_id`` (``"n.k"``) comes after this cursor."""
        step_text, _, index_text = event_id.partition(".")
        step, index = int(step_text), int(index_text)
        if step != self.step:
            return step > self.step
        return self.index is not None and index > self.index


def text_of(message: Mapping[str, Any] | None) -> str:
    """The text blocks of ``message``, joined (the answer of a reply)."""
    if not message:
        return ""
    blocks = message.get("content") or []
    return "".join(block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str))


def last_answer(messages: Iterable[Message]) -> str | None:
    """The text of the last assistant message (None when there is none)."""
    answer = None
    for message in messages:
        if message.get("role") == "assistant":
            answer = text_of(message)
    return answer


def visible_state(head: Mapping[str, Any]) -> dict[str, Any]:
    """A head's agent state without the keys Tether keeps for itself (``tether.serve``,
    ``tether.graph``, ``tether.swarm``, ``tether.agent_tools``: every ``tether.*`` key)."""
    state = head.get("state")
    if not isinstance(state, dict):
        return {}
    return {key: value for key, value in state.items() if not key.startswith("tether.")}


def interrupts_of(head: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The interrupts a head's run waits on: ``{id, name, reason, tool_use_id}`` each."""
    state: InterruptState = head.get("interrupt_state") or {}  # type: ignore[assignment]
    if not state.get("activated"):
        return []
    return [
        {"id": item.id, "name": item.name, "reason": item.reason, "tool_use_id": item.tool_use_id} for item in pending_interrupts(state)
    ]


class StepEvents:
    """Turns a run's steps, in order, into its committed events (see the module docstring).

    It keeps what the previous step left (its message seq, status, agent state, pending
    interrupts and the names of the calls of the open cycle), so it is fed every step from the first; a stream
    keeps one and feeds it each new step as it is committed.
    """

    def __init__(self) -> None:
        self.seq = 0
        self.status: str | None = None
        self.waiting: set[str] = set()
        self.names: dict[str, str] = {}
        self.answer: str | None = None
        self.state: dict[str, Any] = {}

    def events(self, step: Step, messages: Mapping[int, Message]) -> list[ServeEvent]:
        """The committed events of ``step``; ``messages`` maps seq to message (at least those the step added)."""
        found: list[tuple[str, dict[str, Any]]] = []
        if step.status != self.status:
            found.append(("status", {"status": step.status, "position": step.position, "step": step.step}))
            self.status = step.status
        for seq in range(self.seq, step.seq):
            message = messages.get(seq)
            if message is None:
                continue  # dropped by a conversation manager before this server read it
            found.append(("message", {"seq": seq, "role": message["role"], "content": message["content"]}))
            if message["role"] == "assistant":
                self.answer = text_of(message)
                for use in tool_uses_of(message):
                    self.names[use["toolUseId"]] = use["name"]
                    found.append(("tool_call_start", {"toolUseId": use["toolUseId"], "name": use["name"], "input": use.get("input")}))
            for block in message["content"]:
                result = block.get("toolResult") if isinstance(block, dict) else None
                if isinstance(result, dict):
                    ident = result.get("toolUseId")
                    found.append(
                        (
                            "tool_call_end",
                            {
                                "toolUseId": ident,
                                "name": self.names.get(str(ident)),
                                "status": result.get("status"),
                                "content": result.get("content"),
                            },
                        )
                    )
        self.seq = max(self.seq, step.seq)
        for marker in step.in_doubt:
            found.append(("in_doubt", {"toolUseId": marker.get("toolUseId"), "name": marker.get("name"), "action": marker.get("action")}))
        state = visible_state(step.head)
        if state != self.state:
            found.append(("state", {"state": state}))
            self.state = state
        pending = interrupts_of(step.head)
        asked = [item for item in pending if item["id"] not in self.waiting]
        found.extend(("interrupt", item) for item in asked)
        self.waiting = {item["id"] for item in pending}
        # a resume that asks about calls in doubt stops there (no turn_end step); one that brings
        # the answer records the same question again on its way on: not a stop
        if step.position == "turn_end" or (step.position == "resumed" and step.status == "interrupted" and asked):
            found.append(("result", {"status": step.status, "stop_reason": step.stop_reason, "answer": self.answer, "interrupts": pending}))
        if step.position in UNWINDING:  # a compensation's step: its plan, one undo, its end
            found.append(("compensation", {"position": step.position, "status": step.status, **(step.undo or {})}))
        return [{"type": kind, "id": f"{step.step}.{k}", "data": data} for k, (kind, data) in enumerate(found)]


__all__ = [
    "COMMITTED_KINDS",
    "LIVE_KINDS",
    "RESTING",
    "Cursor",
    "CursorError",
    "ServeEvent",
    "StepEvents",
    "interrupts_of",
    "last_answer",
    "text_of",
    "visible_state",
]
