"""AG-UI for ``tether serve``: a served run's events translated into the AG-UI protocol.

`AG-UI <https://docs.ag-ui.com>`_ is the event protocol agent front ends (CopilotKit and others)
speak. This module is a pure translation from the one event source of a served run
(:func:`~tether.serve.stream.run_events`, :class:`~tether.serve.events.ServeEvent`) to the
event models of the official ``ag-ui-protocol`` package (``ag_ui.core``), plus the mapping of a
``RunAgentInput`` to what the server does (:mod:`tether.serve.agui_input`). The HTTP endpoint is
:mod:`tether.serve.agui_routes`; what a connection starts from (``MESSAGES_SNAPSHOT``) is
:mod:`tether.serve.agui_thread`.

The mapping:

- an AG-UI *thread* is a durable run (``threadId`` is the run id); an AG-UI *run* is one
  segment of it, from a prompt (or the answers to its interrupts) to the end of that turn;
- a committed assistant ``message`` becomes ``TEXT_MESSAGE_START/CONTENT/END`` (its text) and
  ``TOOL_CALL_START/ARGS/END`` for each tool use; a committed tool-results message becomes one
  ``TOOL_CALL_RESULT`` per result; live ``text_delta`` events stream as ``TEXT_MESSAGE_CONTENT``
  of the message they will be committed as (see *Live text* below);
- a connection opens with ``MESSAGES_SNAPSHOT`` and ``STATE_SNAPSHOT`` of the thread up to
  where it streams from (:mod:`tether.serve.agui_thread`); ``state`` (the agent state changed)
  becomes ``STATE_DELTA`` (a JSON Patch of the top-level keys that changed), or
  ``STATE_SNAPSHOT`` when the connection sent no state yet;
- ``in_doubt`` becomes a ``CUSTOM`` event named ``tether.in_doubt``;
- ``result`` ends the AG-UI run: ``RUN_FINISHED`` with outcome ``success`` (finished; with
  ``pendingToolCallIds`` when the run waits only for client-tool calls,
  :mod:`tether.serve.clientturn`), outcome ``interrupt`` with the pending interrupts
  (interrupted; ids :func:`interrupt_ref`), outcome ``cancelled`` (a client cancelled the
  turn), or ``RUN_ERROR`` (failed). A turn
  ``stopped`` by a server shutdown does not end it: the next server resumes the turn.

Every connection is a well-formed AG-UI stream on its own: it begins with ``RUN_STARTED``, every
``*_START`` has its ``*_END`` before ``RUN_FINISHED``.

**SSE ids and reconnects.** The AG-UI events derived from one committed event go out together,
and only the last of them carries the SSE ``id:``: the committed event's durable id
(``STEP.INDEX``). ``RUN_STARTED`` carries the position the run starts after (``STEP``). So the
client's last id always marks a point between whole groups, and the rule for a client is:
*everything received after the last* ``id:`` *is provisional*; on a reconnect (``Last-Event-ID``)
drop it (an open text message, a half-sent tool call) and the server sends it again, whole. A
reconnecting client therefore never gets a message twice, nor a mangled one.

**Live text.** A live ``text_delta`` is sent only when it continues the text this connection
already streamed for the reply in flight (its ``offset`` says where it belongs): a connection
that joined a model call midway, or lost a piece, sends nothing more of that reply until it is
committed. The live message carries the id the committed message will have (``THREAD/SEQ``);
when the message is committed the connection sends the rest of its text and ends it. If the
committed text does not continue what was streamed (a model call retried after it streamed),
the live message is ended as it is and the committed one follows as a message of its own
(``THREAD/SEQ/again`` when the live one had taken ``THREAD/SEQ``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from ..durable.indoubt import IN_DOUBT
from ..loop.core import tool_uses_of
from .clientturn import CLIENT_TOOL
from .events import Cursor, ServeEvent, text_of

CANCELLED: dict[str, Any] = {"cancelled": True}
"""The answer a ``resume`` entry with status ``cancelled`` gives its interrupt (the tool's
``interrupt()`` returns it), as the official AWS Strands integration of AG-UI does."""
CANCEL_REASON = "cancelled"
"""The stop reason of a turn a client cancelled (``POST /runs/{id}/cancel``): outcome ``cancelled``."""
IN_DOUBT_SCHEMA: dict[str, Any] = {
    "type": ["string", "object"],
    "description": "'rerun' to run the call again, or the result to record for it",
}
"""The ``responseSchema`` of an in-doubt question (``tether.in_doubt``)."""


@dataclass(frozen=True)
class Frame:
    """One AG-UI event to send, with the SSE id it carries (None: no ``id:`` line).

    Attributes:
        event: The AG-UI event (an ``ag_ui.core`` model).
        id: The durable position a client resumes after, on the last event of a group.
    """

    event: BaseEvent
    id: str | None = None


def message_id(thread_id: str, seq: int) -> str:
    """The AG-UI id of the message at ``seq`` in thread ``thread_id``: ``THREAD/SEQ``.

    Args:
        thread_id: The thread (the durable run's id).
        seq: The message's sequence number in the run's conversation.
    """
    return f"{thread_id}/{seq}"


def cursor_id(cursor: Cursor) -> str:
    """``cursor`` written as an event id (``STEP`` or ``STEP.INDEX``) that parses back to it.

    Args:
        cursor: A position in a run's committed events.
    """
    return str(cursor.step) if cursor.index is None else f"{cursor.step}.{cursor.index}"


def interrupt_ref(thread_id: str, step: int, ident: str) -> str:
    """The AG-UI id of Tether interrupt ``ident`` of thread ``thread_id``, pending since step
    ``step``: ``THREAD/STEP/ID``. Tether's id is derived from the tool call and the interrupt's
    name, so it can repeat across threads (and a thread's turns, with a model that reuses call
    ids); the thread and the step make the AG-UI id name one question of one AG-UI run.

    Args:
        thread_id: The thread (the durable run's id).
        step: The step the run came to rest at, waiting for the answer.
        ident: The interrupt's Tether id.
    """
    return f"{thread_id}/{step}/{ident}"


def agui_interrupt(item: Mapping[str, Any], ident: str | None = None) -> Interrupt:
    """A pending Tether interrupt (``{id, name, reason, tool_use_id}``) as an AG-UI ``Interrupt``
    (with the AG-UI id ``ident``, :func:`interrupt_ref`; default: Tether's id).

    As in the official AWS Strands integration, ``reason`` is the interrupt's name and the
    Tether reason (any JSON) travels in ``metadata.reason``; a string reason is also the
    ``message``. An interrupt raised for a tool call names it in ``toolCallId``; an in-doubt
    question carries a ``responseSchema``.

    Args:
        item: The interrupt as :func:`~tether.serve.events.interrupts_of` lists it.
        ident: Its AG-UI id.
    """
    reason = item.get("reason")
    name = str(item.get("name"))
    return Interrupt(
        id=ident or str(item["id"]),
        reason=name,
        message=reason if isinstance(reason, str) else None,
        tool_call_id=item.get("tool_use_id"),
        response_schema=IN_DOUBT_SCHEMA if name == IN_DOUBT else None,
        metadata=None if reason is None else {"reason": reason},
    )


def state_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A JSON Patch (RFC 6902) turning ``old`` into ``new``, one operation per top-level key
    that was removed, added or changed.

    Args:
        old: The state the client holds.
        new: The state it should hold.
    """
    patch: list[dict[str, Any]] = [{"op": "remove", "path": _pointer(key)} for key in old if key not in new]
    for key, value in new.items():
        if key not in old:
            patch.append({"op": "add", "path": _pointer(key), "value": value})
        elif old[key] != value:
            patch.append({"op": "replace", "path": _pointer(key), "value": value})
    return patch


def _pointer(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


def tool_result_text(content: Any) -> str:
    """A tool result's content blocks as the string AG-UI carries: the texts, and each JSON
    block as JSON (another block, such as an image, as ``[image]``).

    Args:
        content: The ``content`` of a ``toolResult`` block.
    """
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and "json" in block:
            parts.append(json.dumps(block["json"], ensure_ascii=False))
        elif isinstance(block, dict) and block:
            parts.append(f"[{next(iter(block))}]")
    return "\n".join(parts)


@dataclass
class _Live:
    """The live text message a connection is streaming: its id and the text sent so far."""

    id: str
    text: str = ""


class AguiTranslator:
    """The AG-UI events of one connection, from the run's events (see the module docstring).

    Feed it the events of :func:`~tether.serve.stream.run_events` in order; it returns the
    frames to send for each, and sets :attr:`done` once the AG-UI run ended (a terminal event
    was produced: stop reading then).

    Args:
        thread_id: The AG-UI thread: the durable run's id.
        run_id: The AG-UI run id ``RUN_STARTED`` and ``RUN_FINISHED`` carry.
        after: Where this connection starts: the run's events after this cursor follow.
        state: The agent state when the connection starts (sent as ``STATE_SNAPSHOT`` first),
            or None to send the state only once it changes.
        messages: The thread's messages up to ``after`` (sent as ``MESSAGES_SNAPSHOT`` first,
            :mod:`tether.serve.agui_thread`), or None to send none.
    """

    def __init__(
        self, thread_id: str, run_id: str, after: Cursor, state: dict[str, Any] | None = None, messages: list[Message] | None = None
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.after = after
        self.state = state
        self.messages = messages
        self.next_seq: int | None = None
        self.live: _Live | None = None
        self.done = False

    def start(self) -> list[Frame]:
        """The frames that open the connection: ``RUN_STARTED`` (with the cursor as its id),
        then the messages and the state snapshots, if they were given."""
        started = RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION)
        frames = [Frame(started, cursor_id(self.after))]
        if self.messages is not None:
            frames.append(Frame(MessagesSnapshotEvent(messages=self.messages)))
        if self.state is not None:
            frames.append(Frame(StateSnapshotEvent(snapshot=self.state)))
        return frames

    def feed(self, event: ServeEvent) -> list[Frame]:
        """The frames for ``event`` (none once :attr:`done`); the last committed one carries its id.

        Args:
            event: The run's next event (committed, live, or the ``end``).
        """
        if self.done:
            return []
        kind = event["type"]
        data = event.get("data", {})
        if kind == "text_delta":
            return self._delta(data)
        if kind == "message":
            events = self._message(data)
        elif kind == "state":
            events = self._state(data["state"])
        elif kind == "in_doubt":
            events = [CustomEvent(name="tether.in_doubt", value=data)]
        elif kind == "result":
            events = self._result(data, int(str(event.get("id", "0")).partition(".")[0]))
        elif kind == "end":
            return [Frame(event) for event in self._end(data)]
        else:
            return []  # status, interrupt (RUN_FINISHED carries them), tool_call_* (from their messages), reasoning
        return _group(events, event.get("id"))

    # -- text and tools ----------------------------------------------------------------------

    def _delta(self, data: Mapping[str, Any]) -> list[Frame]:
        text = data.get("text") or ""
        offset = data.get("offset")
        if not text or not isinstance(offset, int):
            return []
        if self.live is None:
            if offset != 0 or self.next_seq is None:
                return []  # joined midway, or cannot name the reply yet: it comes whole once committed
            self.live = _Live(message_id(self.thread_id, self.next_seq))
            opening: list[Frame] = [Frame(TextMessageStartEvent(message_id=self.live.id, role="assistant"))]
        elif offset != len(self.live.text):
            return []  # a piece was lost: the rest comes with the committed message
        else:
            opening = []
        self.live.text += text
        return [*opening, Frame(TextMessageContentEvent(message_id=self.live.id, delta=text))]

    def _message(self, data: Mapping[str, Any]) -> list[BaseEvent]:
        seq = int(data["seq"])
        self.next_seq = seq + 1
        message: dict[str, Any] = {"role": data.get("role"), "content": data.get("content") or []}
        if message["role"] == "assistant":
            return self._reply(seq, message)
        events: list[BaseEvent] = []
        for block in message["content"]:
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict) and isinstance(result.get("toolUseId"), str):
                ident = result["toolUseId"]
                events.append(
                    ToolCallResultEvent(
                        message_id=f"{message_id(self.thread_id, seq)}/{ident}",
                        tool_call_id=ident,
                        content=tool_result_text(result.get("content")),
                        role="tool",
                    )
                )
        return events  # a prompt is the client's own message: not echoed

    def _reply(self, seq: int, message: dict[str, Any]) -> list[BaseEvent]:
        text = text_of(message)
        events: list[BaseEvent] = []
        ident = message_id(self.thread_id, seq)
        live, self.live = self.live, None
        if live is not None:
            if text.startswith(live.text):
                ident = live.id
                if len(text) > len(live.text):
                    events.append(TextMessageContentEvent(message_id=ident, delta=text[len(live.text) :]))
                events.append(TextMessageEndEvent(message_id=ident))
                text = ""
            else:
                events.append(TextMessageEndEvent(message_id=live.id))  # what streamed was a discarded attempt
                if live.id == ident:
                    ident = f"{ident}/again"  # one id names one message in the client
        if text:
            events += [
                TextMessageStartEvent(message_id=ident, role="assistant"),
                TextMessageContentEvent(message_id=ident, delta=text),
                TextMessageEndEvent(message_id=ident),
            ]
        for use in tool_uses_of(message):  # type: ignore[arg-type]
            call = use["toolUseId"]
            events += [
                ToolCallStartEvent(tool_call_id=call, tool_call_name=use["name"], parent_message_id=ident),
                ToolCallArgsEvent(tool_call_id=call, delta=json.dumps(use.get("input") or {}, ensure_ascii=False)),
                ToolCallEndEvent(tool_call_id=call),
            ]
        return events

    def _close_live(self) -> list[BaseEvent]:
        live, self.live = self.live, None
        return [] if live is None else [TextMessageEndEvent(message_id=live.id)]

    # -- state and the end ---------------------------------------------------------------------

    def _state(self, state: dict[str, Any]) -> list[BaseEvent]:
        previous, self.state = self.state, state
        if previous is None:
            return [StateSnapshotEvent(snapshot=state)]
        patch = state_patch(previous, state)
        return [StateDeltaEvent.model_validate({"delta": patch})] if patch else []

    def _result(self, data: Mapping[str, Any], step: int) -> list[BaseEvent]:
        status = data.get("status")
        if status == "stopped":
            return []  # a server shut down: the next one resumes the turn, which goes on
        self.done = True
        events = self._close_live()
        if status == "failed":
            message = str(data.get("stop_reason") or f"run {self.thread_id!r} failed")
            return [*events, RunErrorEvent(message=message, code="tether.failed")]
        pending = data.get("interrupts") or []
        # client-tool calls alone: the run succeeded, leaving the calls to the client (a tool
        # message answers each); beside questions for a human, they are interrupts as well
        calls = [item["tool_use_id"] for item in pending if item["name"] == CLIENT_TOOL]
        if len(calls) == len(pending):
            pending = []
        interrupts = [agui_interrupt(item, interrupt_ref(self.thread_id, step, item["id"])) for item in pending]
        outcome: RunFinishedInterruptOutcome | RunFinishedCancelledOutcome | RunFinishedSuccessOutcome
        if status == "interrupted" and interrupts:
            outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
        elif data.get("stop_reason") == CANCEL_REASON:
            outcome = RunFinishedCancelledOutcome()  # POST /runs/{id}/cancel
        else:
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=calls or None)
        result = {"status": status, "answer": data.get("answer"), "stopReason": data.get("stop_reason")}
        return [*events, RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, result=result)]

    def _end(self, data: Mapping[str, Any]) -> list[BaseEvent]:
        """The run is at rest and no ``result`` came on this connection."""
        self.done = True
        status = data.get("status")
        if status == "stopped":
            return []  # the stream closes with the run unfinished: reconnect, the next server resumes it
        if status == "deleted":
            return [*self._close_live(), RunErrorEvent(message=f"run {self.thread_id!r} was deleted", code="tether.deleted")]
        message = (
            f"run {self.thread_id!r} is {status} and nothing follows event {cursor_id(self.after)} in this AG-UI run: "
            "send a new RunAgentInput (with resume when it waits for answers)"
        )
        return [*self._close_live(), RunErrorEvent(message=message, code="tether.at_rest")]


def _group(events: list[BaseEvent], ident: str | None) -> list[Frame]:
    """``events`` as frames, the last one carrying ``ident``."""
    return [Frame(event, ident if i == len(events) - 1 else None) for i, event in enumerate(events)]


_ENCODER = EventEncoder()


def encode(frames: Iterable[Frame]) -> bytes:
    """``frames`` as Server-Sent Events: ``ag_ui``'s encoding (a ``data:`` line of the event's
    JSON), preceded by an ``id:`` line when the frame has one.

    Args:
        frames: The frames to send, in order.
    """
    out: list[str] = []
    for frame in frames:
        if frame.id is not None:
            out.append(f"id: {frame.id}\n")
        out.append(_ENCODER.encode(frame.event))
    return "".join(out).encode()


__all__ = [
    "CANCELLED",
    "CANCEL_REASON",
    "IN_DOUBT_SCHEMA",
    "AguiTranslator",
    "Frame",
    "agui_interrupt",
    "cursor_id",
    "encode",
    "interrupt_ref",
    "message_id",
    "state_patch",
    "tool_result_text",
]
