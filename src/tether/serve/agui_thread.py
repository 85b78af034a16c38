"""An AG-UI thread as a fresh client must see it when a connection starts: its messages, its
state, and where its latest AG-UI run begins.

AG-UI clients keep the conversation themselves; a reloaded front end has none. So every
connection (a new AG-UI run, or a reconnect) starts with ``MESSAGES_SNAPSHOT``: every message of
the thread committed *before* the point the connection streams from, in AG-UI's message shapes
(a user prompt, an assistant reply with its ``toolCalls``, one ``tool`` message per tool
result), with the same ids the events of those messages carry (``THREAD/SEQ``, a tool result
``THREAD/SEQ/CALL``); then ``STATE_SNAPSHOT`` of the agent state at that point. The events after
it follow, so the snapshot and the stream never hold a message twice.

A reconnect without an event id goes to the thread's **latest** AG-UI run: it starts after the
last ``result`` that ended an earlier AG-UI run (a turn that finished, failed, or stopped to
wait for answers; a turn stopped by a server shutdown goes on, so it ends nothing). A thread at
rest replays its last AG-UI run from its start (with its pending interrupts in
``RUN_FINISHED``); a running one streams the run in progress.

Everything here is read from the store: the same events the stream derives
(:class:`~tether.serve.eventlog.EventLog`), so it holds in every server process and after any
restart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import AssistantMessage, FunctionCall, Message, ToolCall, ToolMessage, UserMessage

from ..durable.store import RunStore
from ..errors import RunNotFoundError
from ..loop.core import tool_uses_of
from .agui import message_id, tool_result_text
from .eventlog import EventLog
from .events import Cursor, ServeEvent, text_of
from .idempotency import recorded
from .registry import SERVE_KEY

AGUI_KEYS = "agui:"
"""The namespace of AG-UI keys in a run's records: an input's ``runId`` is its key."""


@dataclass
class ThreadView:
    """What a connection to a thread starts from.

    Attributes:
        after: The position the connection streams after.
        messages: The thread's messages committed up to ``after``, as AG-UI messages.
        state: The agent state at ``after`` (without Tether's ``tether.*`` keys).
        run_id: The AG-UI ``runId`` of the AG-UI run that starts after ``after``, when an input
            recorded it (None: unknown).
    """

    after: Cursor
    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None


def read_thread(store: RunStore, thread_id: str, after: Cursor | None, *, prompt: bool = True) -> ThreadView:
    """The view of ``thread_id`` at ``after`` (None: the start of its latest AG-UI run). Blocking I/O.

    A prompt is the client's own message, which the stream does not echo; so when the first
    message after ``after`` is a prompt (``after`` is where an AG-UI run starts), the snapshot
    holds it too, unless ``prompt`` is false (the client that sent it holds it).

    Args:
        store: The run store.
        thread_id: The thread (the durable run's id).
        after: Where the connection streams from, or None for the latest AG-UI run.
        prompt: Whether the snapshot takes the prompt that follows ``after``.
    """
    try:
        events = EventLog(store, thread_id).read()
    except RunNotFoundError:
        events = []
    if after is None:
        after = latest_start(events)
    view = ThreadView(after)
    head = store.head(thread_id)
    named = prompt_ids(head)
    for event in events:
        if after.admits(event["id"]):
            if not prompt:
                break
            if event["type"] == "message":  # the first message after ``after``: the prompt, if it is one
                if event["data"].get("role") == "user" and not _results(event["data"]):
                    view.messages += agui_messages(thread_id, event["data"], named.get(_step(event)))
                break
            continue
        if event["type"] == "message":
            view.messages += agui_messages(thread_id, event["data"], named.get(_step(event)))
        elif event["type"] == "state":
            view.state = dict(event["data"]["state"])
    view.run_id = run_id_at(head, after)
    return view


def _results(data: Mapping[str, Any]) -> bool:
    return any(isinstance(block, dict) and "toolResult" in block for block in data.get("content") or [])


def latest_start(events: list[ServeEvent]) -> Cursor:
    """Where the latest AG-UI run of a thread with these committed events starts: after the
    step of the ``result`` that ended the AG-UI run before it (the start: none did)."""
    ends = [event for event in events if event["type"] == "result" and event["data"].get("status") != "stopped"]
    last = next((event for event in reversed(events) if event["type"] != "status"), None)
    if ends and last is ends[-1]:
        ends.pop()  # the thread is at rest: its latest AG-UI run is the one this result ended
    if not ends:
        return Cursor(0)
    return Cursor(int(ends[-1]["id"].partition(".")[0]))


def _step(event: ServeEvent) -> int:
    return int(event["id"].partition(".")[0])


def prompt_ids(head: Mapping[str, Any] | None) -> dict[int, str]:
    """The ids AG-UI clients gave their prompts, by the step that committed each (the first
    step after the one its input came at), as the inputs' records keep them (the last 32)."""
    state = (head or {}).get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    named: dict[int, str] = {}
    for key, record in ((marker or {}).get("requests") or {}).items():
        if key.startswith(AGUI_KEYS) and isinstance(record, dict) and isinstance(record.get("messageId"), str):
            named[int(record.get("after") or 0) + 1] = record["messageId"]
    return named


def run_id_at(head: Mapping[str, Any] | None, after: Cursor) -> str | None:
    """The ``runId`` of the AG-UI input whose run starts after ``after`` (its key's record names
    that step), or None."""
    if after.index is not None:
        return None
    state = (head or {}).get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    found = None
    for key in (marker or {}).get("requests") or {}:
        record = recorded(head, key)
        if key.startswith(AGUI_KEYS) and record is not None and record.get("after") == after.step:
            found = key[len(AGUI_KEYS) :]  # the last one recorded: a later input on the same step started it
    return found


def agui_messages(thread_id: str, data: Mapping[str, Any], prompt_id: str | None = None) -> list[Message]:
    """A committed ``message`` event's message as AG-UI messages: an assistant reply (text and
    ``toolCalls``), a user prompt, or one ``tool`` message per tool result (the ids the
    stream's events give them); nothing for a message with neither text nor results.

    Args:
        thread_id: The thread.
        data: The event's data (``seq``, ``role``, ``content``).
        prompt_id: The id the client gave the message, if it is a prompt an AG-UI input named.
    """
    seq = int(data["seq"])
    ident = message_id(thread_id, seq)
    message: dict[str, Any] = {"role": data.get("role"), "content": data.get("content") or []}
    text = text_of(message)
    if message["role"] == "assistant":
        calls = [
            ToolCall(
                id=use["toolUseId"],
                function=FunctionCall(name=use["name"], arguments=json.dumps(use.get("input") or {}, ensure_ascii=False)),
            )
            for use in tool_uses_of(message)  # type: ignore[arg-type]
        ]
        if not text and not calls:
            return []
        return [AssistantMessage(id=ident, content=text or None, tool_calls=calls or None)]
    out: list[Message] = []
    for block in message["content"]:
        result = block.get("toolResult") if isinstance(block, dict) else None
        if isinstance(result, dict) and isinstance(result.get("toolUseId"), str):
            call = result["toolUseId"]
            content = tool_result_text(result.get("content"))
            error = content if result.get("status") == "error" else None
            out.append(ToolMessage(id=f"{ident}/{call}", tool_call_id=call, content=content, error=error))
    if text:
        out.insert(0, UserMessage(id=prompt_id or ident, content=text))
    return out


__all__ = ["AGUI_KEYS", "ThreadView", "agui_messages", "latest_start", "read_thread", "run_id_at"]
