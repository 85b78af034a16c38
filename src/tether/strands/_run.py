"""One Strands agent's durable run: an ordinary Tether run, written through the native write path.

A :class:`StrandsRun` binds one agent of one Strands session to the run
``strands.<session_id>.<agent_id>`` of a :class:`~tether.durable.store.RunStore`. It holds the
run's lease from the moment the agent is initialized until the session manager is closed (or the
process ends), and writes through a :class:`~tether.durable.session.DurableSession`: messages are
rows written once, the head is replaced at each step, tool results of the open cycle are rows, and
every write is fenced by the lease's epoch and the run's revision, exactly as for a native run.
So ``tether runs/show/view/fork/resume/rm/export`` read it like any other.

What is Strands' own (the conversation manager's state, Strands' interrupt state with its pending
tool execution, the model state, and the bookkeeping of the open turn) lives under the head's
``strands`` key, in Strands' shapes; the head's Tether fields hold what Tether tools show (agent
state, the interrupts and whether they are active, the cursor, metrics).
"""

from __future__ import annotations

import copy
import hashlib
from contextlib import ExitStack
from typing import Any, cast

from .._json import json_copy
from ..durable.ids import RUN_ID_PATTERN
from ..durable.session import DurableSession, run_state_of
from ..durable.store import RunStore, StoredRun
from ..errors import RunLockedError, StateError, StoreError
from ..loop.state import RunState
from ..types import Message, ToolResult

STRANDS_KEY = "strands"
"""The head key holding what is Strands' own (see the module docstring)."""
FORMAT = 1
"""Version of the ``strands`` head entry."""
FINAL_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens", "guardrail_intervened", "cancelled", "content_filtered"})
"""Stop reasons that close a turn; any other (``interrupt``, ``checkpoint``, a failure) leaves it
open, so the same call made again after a crash finishes it."""
_TRANSIENT = ("tracking_id",)
"""Message keys Strands fills in when it appends a message (ignored when prompts are compared)."""


class SessionMismatchError(StateError):
    """The stored run does not belong to this Strands session and agent (another session's or
    agent's run under a colliding id, or a run written by a native ``tether.Agent``)."""


def strands_run_id(session_id: str, agent_id: str) -> str:
    """The run id of agent ``agent_id`` in Strands session ``session_id`` (``multiagent-<id>`` for a
    graph or swarm: see :meth:`tether.strands.session_manager.TetherSessionManager.initialize_multi_agent`).

    ``strands.<session_id>.<agent_id>`` when both are plain (letters, digits, ``_ : -``) and the id
    fits; otherwise ``strands.<digest>`` of the exact pair, so two different pairs never share a run.
    """
    plain = f"strands.{session_id}.{agent_id}"
    if "." not in session_id + agent_id and len(plain) <= 128 and RUN_ID_PATTERN.fullmatch(plain):
        return plain
    digest = hashlib.sha256(f"{session_id}\x00{agent_id}".encode()).hexdigest()[:32]
    return f"strands.{digest}"


def prompt_key(messages: list[Any]) -> list[dict[str, Any]]:
    """``messages`` as JSON without the keys Strands adds on append, to recognise the same prompt."""
    plain = [{k: v for k, v in message.items() if k not in _TRANSIENT} for message in messages]
    return cast("list[dict[str, Any]]", json_copy(plain))


def tool_uses(message: Any) -> list[dict[str, Any]]:
    """The ``toolUse`` blocks of ``message`` (none for a missing or user message)."""
    if message is None or message.get("role") != "assistant":
        return []
    return [dict(block["toolUse"]) for block in message.get("content", []) if "toolUse" in block]


class StrandsRun:
    """The durable run of one Strands agent (see the module docstring).

    Args:
        store: Where the run lives.
        session_id: The Strands session id.
        agent_id: The agent's id in the session.
    """

    def __init__(self, store: RunStore, session_id: str, agent_id: str, *, kind: str = "agent") -> None:
        self.store = store
        self.kind = kind
        self.session_id = session_id
        self.agent_id = agent_id
        self.run_id = strands_run_id(session_id, agent_id)
        self._held = ExitStack()
        try:
            lease = self._held.enter_context(store.lease(self.run_id))
        except RunLockedError as exc:
            raise RunLockedError(
                f"Strands session {session_id!r} (agent {agent_id!r}) is open in another live process: its run {self.run_id!r} "
                f"has one writer at a time; close the other agent's session manager, or fence a stopped owner off with "
                f"`tether unlock {self.run_id}`"
            ) from exc
        try:
            stored = store.load(self.run_id)
            self.stored = stored
            if stored is None:
                run = RunState(run_id=self.run_id)
                strands: dict[str, Any] = {"format": FORMAT, "kind": kind, "session_id": session_id, "agent_id": agent_id}
                strands.update({"turn": None, "agent": None} if kind == "agent" else {"multi_agent": None})
            else:
                strands = self._check(stored)
                run = run_state_of(stored)
            self.session = DurableSession(store, self.run_id, run, stored, lease)
            self.session.extra[STRANDS_KEY] = strands
        except BaseException:
            self._held.close()
            raise

    @property
    def strands(self) -> dict[str, Any]:
        """The head's ``strands`` entry as it will be written next."""
        return cast("dict[str, Any]", self.session.extra[STRANDS_KEY])

    @property
    def run(self) -> RunState:
        return self.session.run

    def _check(self, stored: StoredRun) -> dict[str, Any]:
        """The stored ``strands`` entry, once the run is known to be this session's and agent's."""
        entry = stored.head.get(STRANDS_KEY)
        if entry is None:
            raise SessionMismatchError(
                f"run {self.run_id!r} was written by a native tether.Agent, not by a Strands session manager; "
                "open it with tether.Agent(run_id=...) or pick another Strands session id"
            )
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            version = entry.get("format") if isinstance(entry, dict) else entry
            raise StoreError(f"run {self.run_id!r}: head.strands.format is {version!r:.40}, this Tether reads format {FORMAT}")
        if entry.get("kind", "agent") != self.kind:
            raise SessionMismatchError(
                f"run {self.run_id!r} is a Strands {entry.get('kind', 'agent')!r:.40} run, not a {self.kind!r} one (head.strands.kind); "
                "nothing was changed"
            )
        for field, expected in (("session_id", self.session_id), ("agent_id", self.agent_id)):
            if entry.get(field) != expected:
                raise SessionMismatchError(
                    f"run {self.run_id!r} belongs to Strands {field.removesuffix('_id')} {entry.get(field)!r:.60}, "
                    f"not {expected!r:.60} (head.strands.{field}); nothing was changed"
                )
        for field in ("turn", "agent", "multi_agent"):
            if entry.get(field) is not None and not isinstance(entry[field], dict):
                raise StoreError(f"run {self.run_id!r}: head.strands.{field} must be an object, got {type(entry[field]).__name__}")
        return cast("dict[str, Any]", copy.deepcopy(entry))

    def write(self, messages: list[Message], position: str | None = None, *, status: str = "running", **info: Any) -> None:
        """Store what changed: new messages (``messages`` is the live conversation, the same
        message objects as the agent's), the open cycle's new results, and the head."""
        self.run.messages = messages
        self.session.sync(position, status=status, **info)

    def record_result(self, result: Any, *, write: bool = True) -> None:
        """Record one tool result of the open cycle: its own write (fenced) with ``write``, else
        kept for the next write (the one storing the message of the batch's results)."""
        tool_use_id = str(result["toolUseId"])
        self.run.cursor.results[tool_use_id] = cast(ToolResult, result)
        self.session.timeline.tool_finished(tool_use_id)
        self.run.metrics["tool_call_count"] += 1
        if write:
            self.session.sync()

    def close(self) -> None:
        """Release the run's lease (the next owner may take the run over)."""
        self._held.close()


__all__ = ["FINAL_STOPS", "STRANDS_KEY", "SessionMismatchError", "StrandsRun", "prompt_key", "strands_run_id", "tool_uses"]
