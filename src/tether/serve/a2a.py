"""The A2A encoding of a served run: Tether's committed events as A2A v1.0 task events.

An A2A *task* is a durable Tether run: the task id is the run id, and the context id is the
run's thread, which in Tether is the run itself (a run is a conversation of turns), so both ids
are the run id. This module is a pure encoder, with no run logic: :class:`TaskFold` reads the
run's committed events (the one event source, :func:`~tether.serve.stream.run_events`, or the
run's :class:`~tether.serve.eventlog.EventLog`) in order and

- turns each into the A2A stream events it means (:meth:`TaskFold.feed`): an assistant message
  is a ``working`` status update carrying it, a turn's answer is an artifact (one per turn, its
  id from the turn's last step, so a replay names it the same), the end of a turn is the task's
  state: ``completed`` (``canceled`` when the turn was cancelled), ``input-required`` while the
  run waits for answers to its interrupts, ``failed``;
- folds them into the task as a client sees it (:meth:`TaskFold.task`): status, history,
  artifacts. ``tasks/get`` is the fold of every committed event so far, so a task read after a
  server restart is the same task.

Every status and artifact update carries the Tether event id it encodes in its metadata
(``tether.event``) and a task snapshot carries the id of the last event it folded
(``tether.cursor``): a client can check that a subscription after a reconnect goes on exactly
after its snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf import json_format, struct_pb2

from ..errors import RequestError
from .events import ServeEvent

StreamEvent = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""What an A2A stream sends: the task first, then its status and artifact updates."""

TERMINAL = (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED)
"""The A2A states a task does not leave (a new turn of the run is a new message in its context)."""
RESTING = (*TERMINAL, TaskState.TASK_STATE_INPUT_REQUIRED)
"""The states where a stream of the task ends: the run waits for nobody but a client."""
INTERFACE = "JSONRPC"
"""The A2A protocol binding ``tether serve`` speaks."""
VERSION = "1.0"
"""The A2A protocol version it speaks."""


def _json(value: Any) -> Any:
    """``value`` as plain JSON (what a protobuf ``Struct`` or ``Value`` holds)."""
    return json.loads(json.dumps(value, default=str))


def data_part(value: Any) -> Part:
    """A data part holding ``value`` (any JSON)."""
    return Part(data=json_format.ParseDict(_json(value), struct_pb2.Value()), media_type="application/json")


def struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    """``value`` as a protobuf ``Struct`` (metadata)."""
    out = struct_pb2.Struct()
    out.update(_json(dict(value)))
    return out


def parts_of(content: Any) -> list[Part]:
    """A Tether message's content blocks as A2A parts: text as text, every other block (a tool
    call, a tool result, an interrupt answer) as a data part holding the block."""
    parts: list[Part] = []
    for block in content or []:
        if isinstance(block, dict) and isinstance(block.get("text"), str) and len(block) == 1:
            parts.append(Part(text=block["text"]))
        else:
            parts.append(data_part(block))
    return parts


def part_value(part: Part) -> Any:
    """What one A2A part says: its text, or its data as JSON; a RequestError for a file part
    (``raw``/``url``), which a Tether prompt does not take."""
    kind = part.WhichOneof("content")
    if kind == "text":
        return part.text
    if kind == "data":
        return json_format.MessageToDict(part.data)
    raise RequestError(f"message.parts: a {kind or 'empty'} part is not supported; send text or data parts", status=415)


def prompt_of(message: Message) -> str | list[dict[str, Any]]:
    """The Tether prompt an A2A message carries: its text when it has only text parts, else
    content blocks (a data part as a JSON text block)."""
    if not message.parts:
        raise RequestError("message.parts is empty: send at least one text part")
    values = [part_value(part) for part in message.parts]
    if all(isinstance(value, str) for value in values):
        text = "\n".join(values)
        if not text.strip():
            raise RequestError("message.parts: the text is empty")
        return text
    return [{"text": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)} for value in values]


def answers_of(message: Message, pending: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The answers an A2A message gives to a task's pending interrupts (``input-required``).

    One pending interrupt: the message's content is its answer (its text, or its one data part's
    value). Several: a data part must map every pending interrupt id to its answer.
    """
    values = [part_value(part) for part in message.parts]
    if not values:
        raise RequestError("message.parts is empty: the task waits for an answer")
    objects = [value for value in values if isinstance(value, dict)]
    if len(objects) == 1 and set(objects[0]) == set(pending):
        return dict(objects[0])
    if len(pending) != 1:
        raise RequestError(f"the task waits for answers to {sorted(pending)}: send a data part mapping each of these ids to its answer")
    (ident,) = pending
    if len(values) == 1:
        return {ident: values[0]}
    return {ident: "\n".join(value if isinstance(value, str) else json.dumps(value) for value in values)}


def message_of(run_id: str, data: Mapping[str, Any]) -> Message:
    """A stored message event (``message``: seq, role, content) as an A2A message of the task."""
    role = Role.ROLE_AGENT if data.get("role") == "assistant" else Role.ROLE_USER
    return Message(
        message_id=f"{run_id}.m{data.get('seq')}", context_id=run_id, task_id=run_id, role=role, parts=parts_of(data.get("content"))
    )


class TaskFold:
    """A run's committed events, in order, as one A2A task and its stream events (module docstring).

    Args:
        run_id: The run (the task and context id).
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.state = TaskState.TASK_STATE_SUBMITTED
        self.note: Message | None = None
        """The message of the current status (the interrupts asked, the failure)."""
        self.history: list[Message] = []
        self.artifacts: list[Artifact] = []
        self.cursor: str | None = None
        """The id of the last committed event folded."""

    @property
    def resting(self) -> bool:
        """Whether the task is in a state where a stream of it ends (terminal or ``input-required``)."""
        return self.state in RESTING

    def restart(self) -> None:
        """The task works again: a message just started a turn, or answered its interrupts."""
        self.state = TaskState.TASK_STATE_WORKING
        self.note = None

    def feed(self, event: ServeEvent) -> list[StreamEvent]:
        """Fold one event of the run and return the A2A stream events it makes (none for a live
        delta, a tool call or a state change: the messages and the answer carry them)."""
        kind, data, ident = event.get("type"), event.get("data") or {}, event.get("id")
        if ident is not None:
            self.cursor = ident
        if kind == "status":
            status = data.get("status")
            if status == "running" and self.state != TaskState.TASK_STATE_WORKING:
                return [self._status(TaskState.TASK_STATE_WORKING, None, ident)]
            if status == "failed":
                return [self._status(TaskState.TASK_STATE_FAILED, self._agent_text("the run failed"), ident)]
            return []
        if kind == "message":
            message = message_of(self.run_id, data)
            self.history.append(message)
            if message.role == Role.ROLE_AGENT:
                return [self._status(TaskState.TASK_STATE_WORKING, message, ident)]
            return []
        if kind == "result":
            return self._result(data, ident)
        if kind == "end":
            return self._end(str(data.get("status")))
        return []

    def task(self, *, history_length: int | None = None) -> Task:
        """The task as folded so far (the last ``history_length`` messages of its history)."""
        history = self.history if history_length is None else self.history[len(self.history) - history_length :] if history_length else []
        status = TaskStatus(state=self.state)
        if self.note is not None:
            status.message.CopyFrom(self.note)
        metadata = struct({"tether": {"cursor": self.cursor, "run_id": self.run_id}})
        return Task(id=self.run_id, context_id=self.run_id, status=status, history=history, artifacts=self.artifacts, metadata=metadata)

    def cancelling(self) -> Task:
        """The task as a cancel request leaves it: still working, with a note saying it stops at its next step."""
        self.note = self._agent_text("cancellation requested: the turn stops at its next step")
        task = self.task()
        self.note = None
        return task

    # -- helpers -------------------------------------------------------------------------------

    def _result(self, data: Mapping[str, Any], ident: str | None) -> list[StreamEvent]:
        status = data.get("status")
        if status == "interrupted":
            interrupts = [{key: item.get(key) for key in ("id", "name", "reason")} for item in data.get("interrupts") or []]
            asked = ", ".join(f"{item['name']} ({item['id']})" for item in interrupts)
            note = self._agent_text(f"waiting for answers to: {asked}", {"interrupts": interrupts})
            return [self._status(TaskState.TASK_STATE_INPUT_REQUIRED, note, ident)]
        if status == "failed":
            return [self._status(TaskState.TASK_STATE_FAILED, self._agent_text("the run failed"), ident)]
        out: list[StreamEvent] = []
        answer = data.get("answer")
        if isinstance(answer, str) and answer:
            step = (ident or "0").partition(".")[0]
            artifact = Artifact(artifact_id=f"{self.run_id}.answer.{step}", name="answer", parts=[Part(text=answer)])
            self.artifacts.append(artifact)
            update = TaskArtifactUpdateEvent(task_id=self.run_id, context_id=self.run_id, artifact=artifact, last_chunk=True)
            update.metadata.CopyFrom(struct({"tether": {"event": ident}}))
            out.append(update)
        cancelled = data.get("stop_reason") == "cancelled"
        out.append(self._status(TaskState.TASK_STATE_CANCELED if cancelled else TaskState.TASK_STATE_COMPLETED, None, ident))
        return out

    def _end(self, status: str) -> list[StreamEvent]:
        """The stream's end (the run at rest, no owner) when no result said how the turn ended."""
        if self.resting:
            return []
        if status == "failed":
            return [self._status(TaskState.TASK_STATE_FAILED, self._agent_text("the run failed"), None)]
        if status == "deleted":
            return [self._status(TaskState.TASK_STATE_FAILED, self._agent_text("the run was deleted"), None)]
        if status == "finished":
            return [self._status(TaskState.TASK_STATE_COMPLETED, None, None)]
        return []  # stopped or paused: a server goes on with it (subscribe again)

    def _status(self, state: TaskState, message: Message | None, ident: str | None) -> TaskStatusUpdateEvent:
        self.state = state
        self.note = message if state != TaskState.TASK_STATE_WORKING else None
        status = TaskStatus(state=state)
        if message is not None:
            status.message.CopyFrom(message)
        update = TaskStatusUpdateEvent(task_id=self.run_id, context_id=self.run_id, status=status)
        update.metadata.CopyFrom(struct({"tether": {"event": ident}}))
        return update

    def _agent_text(self, text: str, data: Any = None) -> Message:
        parts = [Part(text=text)] + ([data_part(data)] if data is not None else [])
        ident = f"{self.run_id}.status.{self.cursor}"
        return Message(message_id=ident, context_id=self.run_id, task_id=self.run_id, role=Role.ROLE_AGENT, parts=parts)


def agent_card(name: str, base_url: str, description: str, version: str) -> AgentCard:
    """The A2A agent card of served agent ``name`` (its JSON-RPC endpoint under ``base_url``)."""
    url = f"{base_url.rstrip('/')}/agents/{name}/a2a"
    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[AgentInterface(url=url, protocol_binding=INTERFACE, protocol_version=VERSION)],
        version=version,
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id=name, name=name, description=description, tags=["tether", "durable"])],
    )


__all__ = [
    "INTERFACE",
    "RESTING",
    "TERMINAL",
    "VERSION",
    "StreamEvent",
    "TaskFold",
    "agent_card",
    "answers_of",
    "data_part",
    "message_of",
    "part_value",
    "parts_of",
    "prompt_of",
    "struct",
]
