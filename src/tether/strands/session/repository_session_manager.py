"""`RepositorySessionManager`: an agent's conversation in a :class:`SessionRepository`, as a durable run.

Strands' message-log session manager, with Strands' records (one ``SessionAgent`` per agent,
one ``SessionMessage`` per message, never renumbered; the conversation manager's
``removed_message_count`` says where the live conversation starts), and one difference that is
the point: the agent's invocations are a Tether durable run (see :mod:`._durable` for the
mapping). The run is the truth; the repository is a view of it, written after the run commits:

- a message record is written once the run has stored it and, for an assistant message with
  tool calls, their results too (the ``toolUse`` record is written after the ``toolResult``
  record, so even a crash between the two writes leaves no ``toolUse`` without its result);
  a run that waits for interrupt answers shows its ``toolUse`` and its interrupt state, as
  Strands saves an interrupted agent;
- ``agent.json`` is written after each invocation and with each message record.

When an agent is attached, the repository is read and checked first (a damaged record raises
:class:`~tether.strands.types.session.SessionException` naming it, before anything is written);
then, if the run store holds the session's run and the records agree with it (they may lag
behind it after a crash, never disagree), the run is adopted and the lagging records written.
Records that disagree with a finished run were written by someone else (Strands itself
continuing the session): the records win and the run is started again from them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from ..._messages import check_message
from ...durable.session import run_state_of
from ...errors import ShapeError, SnapshotError
from ...hooks import AfterInvocation, HookRegistry, MessageAdded
from ...snapshot import Snapshot
from ...turn import is_waiting
from ..types.session import Session, SessionAgent, SessionException, SessionMessage, SessionType
from ._durable import closed_messages, same_message, session_run_id
from .session_manager import SessionManager
from .session_repository import SessionRepository

if TYPE_CHECKING:
    from ...agent import Agent
    from ...durable.store import RunStore
    from ...loop.state import RunState
    from ...types import Message

_log = logging.getLogger(__name__)

_INTERRUPTED = "Tool was interrupted."


class RepositorySessionManager(SessionManager):
    """Persists agents in a :class:`SessionRepository`; their invocations are a durable run.

    Args:
        session_id: The session; created in the repository when it does not exist yet.
        session_repository: Where the session's records live.
        store: Tether only: the run store of the agents' durable runs (default: the agent's
            store, ``$TETHER_HOME/runs.db`` when it has none).
        **kwargs: Ignored (Strands' extensibility).
    """

    def __init__(self, session_id: str, session_repository: SessionRepository, *, store: RunStore | None = None, **kwargs: Any) -> None:
        self.session_repository = session_repository
        self.session_id = session_id
        self.store = store
        session = session_repository.read_session(session_id)
        if session is None:
            _log.debug("session_id=<%s> | session not found, creating new session", session_id)
            self._is_new_session = True
            session = Session(session_id=session_id, session_type=SessionType.AGENT)
            session_repository.create_session(session)
        else:
            self._is_new_session = False
        self.session = session
        self._latest_agent_message: dict[str, SessionMessage | None] = {}
        self._records: dict[str, list[SessionMessage]] = {}  # each agent's message records, in order
        self._agent_written: dict[str, dict[str, Any]] = {}  # the last agent.json written (no timestamps)

    # -- where (for messages) ---------------------------------------------------------------

    def _agent_where(self, agent_id: str) -> str:
        """How errors name an agent's record (a file path for files)."""
        return f"session {self.session_id!r} agent {agent_id!r}"

    def _message_where(self, agent_id: str, message_id: int) -> str:
        """How errors name a message record."""
        return f"session {self.session_id!r} agent {agent_id!r} message {message_id}"

    def _run_store(self, agent: Agent) -> RunStore:
        """The store of the agents' durable runs."""
        if self.store is not None:
            return self.store
        return agent._store()

    # -- Strands' interface -----------------------------------------------------------------

    def initialize(self, agent: Agent, **kwargs: Any) -> None:
        """Restore ``agent`` from the session, or create it there (Strands' behaviour, no durable run)."""
        record, records = self._read(agent)
        if record is not None:
            self._apply(agent, record, records)
        self._begin(agent, record, records)

    def attach(self, agent: Agent) -> str:
        """Restore ``agent`` from the session and bind it to its durable run; returns the run id.

        Raises:
            SessionException: A damaged or foreign record (named), state the agent's conversation
                manager cannot take, or records that disagree with an unfinished run. Nothing is
                written then.
        """
        record, records = self._read(agent)
        if record is not None:
            self._apply(agent, record, records)
        store = self._run_store(agent)
        agent.store = store
        run_id = session_run_id(self.session_id, agent.agent_id)
        stored = store.load(run_id)
        if stored is not None:
            run = run_state_of(stored)
            clash = None if record is None else self._disagreement(agent, run, records)
            if record is not None and clash is None:
                agent._adopt(run)
                _log.info("session %r agent %r: continuing durable run %r", self.session_id, agent.agent_id, run_id)
            elif record is None or (run.cursor.phase == "idle" and not is_waiting(run)):
                # the session was deleted, or went on without Tether: its records are the truth
                store.delete_run(run_id)
            else:
                raise SessionException(
                    f"{clash}: the session's records disagree with its unfinished durable run {run_id!r} "
                    "(the session was changed outside Tether while a turn was in flight); "
                    f"delete the run (tether runs delete {run_id}) to continue from the records"
                )
        self._begin(agent, record, records)
        self.register_hooks(agent.hooks)
        return run_id

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Write the records of each committed message (with the next message or at the end of the
        invocation, see the module docstring) and ``agent.json`` after each invocation."""
        registry.add_callback(MessageAdded, self._on_message)
        registry.add_callback(AfterInvocation, self._on_end)

    def append_message(self, message: Message, agent: Agent, **kwargs: Any) -> None:
        """Write ``message`` as the agent's next message record."""
        records = self._records.setdefault(agent.agent_id, [])
        latest = self._latest_agent_message.get(agent.agent_id)
        record = SessionMessage.from_message(message, 0 if latest is None else latest.message_id + 1)
        self.session_repository.create_message(self.session_id, agent.agent_id, record)
        records.append(record)
        self._latest_agent_message[agent.agent_id] = record

    def redact_latest_message(self, redact_message: Message, agent: Agent, **kwargs: Any) -> None:
        """Record ``redact_message`` as the replacement of the latest message record."""
        latest = self._latest_agent_message.get(agent.agent_id)
        if latest is None:
            raise SessionException("No message to redact.")
        latest.redact_message = redact_message
        self.session_repository.update_message(self.session_id, agent.agent_id, latest)

    def sync_agent(self, agent: Agent, **kwargs: Any) -> None:
        """Write ``agent.json`` when the agent's state, conversation-manager or internal state changed."""
        record = SessionAgent.from_agent(agent)
        content = {k: v for k, v in record.to_dict().items() if k not in ("created_at", "updated_at")}
        if self._agent_written.get(agent.agent_id) == content:
            return
        self.session_repository.update_agent(self.session_id, record)
        self._agent_written[agent.agent_id] = content

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Write an orchestrator's ``serialize_state()`` to the repository."""
        self.session_repository.update_multi_agent(self.session_id, source)

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Restore an orchestrator with ``deserialize_state`` (or create its record)."""
        state = None if self._is_new_session else self.session_repository.read_multi_agent(self.session_id, source.id, **kwargs)
        if state is None:
            self.session_repository.create_multi_agent(self.session_id, source, **kwargs)
        else:
            source.deserialize_state(state)
        self._is_new_session = False

    # -- reading and applying ---------------------------------------------------------------

    def _read(self, agent: Agent) -> tuple[SessionAgent | None, list[SessionMessage]]:
        """The agent's record and all its message records (read and checked; nothing written)."""
        if agent.agent_id in self._latest_agent_message:
            raise SessionException("The `agent_id` of an agent must be unique in a session.")
        record = None if self._is_new_session else self.session_repository.read_agent(self.session_id, agent.agent_id)
        if record is None:
            return None, []
        records = self.session_repository.list_messages(self.session_id, agent.agent_id)
        for item in records:
            try:
                check_message(item.message, ["message"])
                if item.redact_message is not None:
                    check_message(item.redact_message, ["redact_message"])
            except ShapeError as exc:
                raise SessionException(f"{self._message_where(agent.agent_id, item.message_id)}: {exc}") from None
        return record, records

    def _apply(self, agent: Agent, record: SessionAgent, records: list[SessionMessage]) -> None:
        """Restore ``agent`` from its records, as Strands does (the agent is unchanged on error)."""
        where = self._agent_where(agent.agent_id)
        manager_state = record.conversation_manager_state
        offset = manager_state.get("removed_message_count", 0)
        if type(offset) is not int or offset < 0:
            raise SessionException(f"{where}: conversation_manager_state.removed_message_count must be a count, got {offset!r}")
        summary = manager_state.get("summary_message")
        prepend: list[Message] = [cast("Message", summary)] if isinstance(summary, dict) and summary else []
        messages = fix_broken_tool_use(prepend + [item.to_message() for item in records[offset:]])
        data: dict[str, Any] = {"messages": messages, "state": record.state, "conversation_manager_state": manager_state}
        for key in ("interrupt_state", "model_state"):
            if key in record._internal_state:
                data[key] = record._internal_state[key]
        try:
            agent.load_snapshot(Snapshot(data))
        except SnapshotError as exc:  # the message names the field (conversation_manager_state, state, ...)
            raise SessionException(f"{where}: {exc}") from None

    def _disagreement(self, agent: Agent, run: RunState, records: list[SessionMessage]) -> str | None:
        """The first record that disagrees with ``run`` (None: the records are the run's view,
        possibly lagging behind it)."""
        offset, expected = self._view(agent, run)
        for position in range(offset, len(records)):
            item = records[position]
            index = position - offset
            if index >= len(expected) or not same_message(item.to_message(), expected[index]):
                return self._message_where(agent.agent_id, item.message_id)
        return None

    @staticmethod
    def _view(agent: Agent, run: RunState) -> tuple[int, list[Message]]:
        """Where the run's live conversation starts among the records, and the messages the
        records show from there (the summary, which has no record, and an unanswered
        ``toolUse`` left out unless the run waits for interrupt answers)."""
        state = agent.conversation_manager.state(run)
        offset = int(state.get("removed_message_count", 0))
        prepend = 1 if state.get("summary_message") else 0
        # a run waiting for interrupt answers shows its toolUse, with the interrupt state, as Strands saves it
        return offset, (run.messages if is_waiting(run) else closed_messages(run.messages))[prepend:]

    # -- writing the view -------------------------------------------------------------------

    def _begin(self, agent: Agent, record: SessionAgent | None, records: list[SessionMessage]) -> None:
        """Start tracking ``agent``; create its record (and its messages' records) when new."""
        agent_id = agent.agent_id
        self._records[agent_id] = list(records)
        self._latest_agent_message[agent_id] = records[-1] if records else None
        if record is None:
            created = SessionAgent.from_agent(agent)
            self.session_repository.create_agent(self.session_id, created)
            self._agent_written[agent_id] = {k: v for k, v in created.to_dict().items() if k not in ("created_at", "updated_at")}
        self._write_view(agent)
        self._is_new_session = False

    def _write_view(self, agent: Agent) -> None:
        """Write the records the run's committed messages need, then ``agent.json``."""
        agent_id = agent.agent_id
        records = self._records[agent_id]
        offset, expected = self._view(agent, agent.run_state)
        writes: list[tuple[bool, SessionMessage]] = []
        next_id = records[-1].message_id + 1 if records else 0
        for index, message in enumerate(expected):
            position = offset + index
            if position < len(records):
                item = records[position]
                if not same_message(item.to_message(), message):
                    item.redact_message = message  # changed in place (a redaction): the record keeps the original
                    writes.append((False, item))
            else:
                item = SessionMessage.from_message(message, next_id)
                next_id += 1
                records.append(item)
                writes.append((True, item))
        # newest first: a toolUse record never lands before the record of its results
        for new, item in reversed(writes):
            if new:
                self.session_repository.create_message(self.session_id, agent_id, item)
            else:
                self.session_repository.update_message(self.session_id, agent_id, item)
        if records:
            self._latest_agent_message[agent_id] = records[-1]
        self.sync_agent(agent)

    def _on_message(self, event: MessageAdded) -> None:
        message = event.message
        if message is not None and message["role"] == "user" and not any("toolResult" in block for block in message["content"]):
            return  # a prompt: the run stores it with the turn's first step, written with the next message
        self._write_view(event.agent)

    def _on_end(self, event: AfterInvocation) -> None:
        self._write_view(event.agent)


def fix_broken_tool_use(messages: list[Message]) -> list[Message]:
    """Strands' repair of a restored history: drop tool results with no tool call before
    them, and give every tool call but the last message's exactly one result (an error result
    ``"Tool was interrupted."`` for a missing one), as Strands does when it restores a session."""
    messages = list(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "user" or not any("toolResult" in block for block in message["content"]):
            continue
        previous = messages[index - 1] if index > 0 else None
        if previous is not None and any("toolUse" in block for block in previous["content"]):
            continue
        remaining = [block for block in message["content"] if "toolResult" not in block]
        if remaining:
            messages[index] = {**message, "content": remaining}
        else:
            messages.pop(index)
    last = len(messages) - 1
    with_uses = [i for i, m in enumerate(messages) if i < last and any("toolUse" in block for block in m["content"])]
    for index in reversed(with_uses):
        ids = [block["toolUse"]["toolUseId"] for block in messages[index]["content"] if "toolUse" in block]
        following = messages[index + 1]
        results: dict[str, Any] = {}
        others: list[Any] = []
        for block in following["content"]:
            if "toolResult" in block:
                results[block["toolResult"]["toolUseId"]] = block
            else:
                others.append(block)
        if set(results) == set(ids):
            continue
        _log.warning("tool_use_ids=<%s>, result_ids=<%s> | mismatched toolUse/toolResult pairing, rebuilding", ids, list(results))
        if not results and others:
            messages.insert(index + 1, {"role": "user", "content": []})
            following = messages[index + 1]
            others = []
        content = [results.get(i, {"toolResult": {"toolUseId": i, "status": "error", "content": [{"text": _INTERRUPTED}]}}) for i in ids]
        messages[index + 1] = {**following, "content": content + others}
    return messages
