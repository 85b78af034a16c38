"""How a Strands session maps onto a Tether durable run.

- **Run id**: one durable run per (session, agent): ``strands.<session_id>.<agent_id>`` when
  that is a valid run id (:func:`tether.durable.ids.validate_run_id`: 1-128 characters from
  ``A-Z a-z 0-9 . _ : -``), else ``strands.<digest>`` where the digest is the first 32 hex
  digits of the SHA-256 of ``session_id``, a NUL and ``agent_id`` (so any pair maps to one id and
  distinct pairs to distinct ids).
- **The truth**: the durable run. The Strands files (message files, ``agent.json``,
  ``snapshot_latest.json``) are a view of it, written after the run has committed what they
  show: a message file is written once its message is stored in the run and its tool calls
  (if any) have their results stored too, so Strands never sees a ``toolUse`` without its
  ``toolResult``.
- **Where the runs are kept** (unless ``store=`` names a run store): in a SQLite store
  ``runs.sqlite`` (with its ``-wal``/``-shm`` files and its ``runs.sqlite.locks/`` directory) in a
  ``.tether`` directory *beside* what Strands owns, so Strands' layout is unchanged:
  ``<storage_dir>/.tether/`` for a ``FileSessionManager`` (one store for every session of that
  ``storage_dir``; Strands reads only its ``session_<id>`` directories), ``<base_dir>.tether/``
  (a sibling of the storage's base directory) for a ``SnapshotSessionManager`` on a
  ``LocalFileStorage``, the agent's own store for other storages.
- **The first call after a crash** (see :func:`plan_call`): repeating the prompt of a turn the
  run has not finished resumes that turn (in-doubt calls handled exactly as for durable runs)
  instead of sending it again; another prompt first finishes the interrupted turn, then is sent.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._prompt import normalize_prompt
from ...durable.ids import RUN_ID_PATTERN, validate_run_id
from ...turn import is_waiting

if TYPE_CHECKING:
    from ...agent import Agent
    from ...durable.store import RunStore
    from ...types import Message

RUN_ID_PREFIX = "strands."
TETHER_DIR = ".tether"
"""The directory, beside Strands' files, holding Tether's run store."""
RUN_STORE_FILE = "runs.sqlite"


def open_run_store(directory: str) -> RunStore:
    """The SQLite run store ``<directory>/runs.sqlite`` (``directory`` made, private, if missing)."""
    from ...durable.sqlite import SQLiteStore

    os.makedirs(directory, mode=0o700, exist_ok=True)
    return SQLiteStore(os.path.join(directory, RUN_STORE_FILE))


def session_run_id(session_id: str, agent_id: str) -> str:
    """The durable run id of agent ``agent_id`` in session ``session_id`` (pure function)."""
    plain = f"{RUN_ID_PREFIX}{session_id}.{agent_id}"
    if len(plain) <= 128 and RUN_ID_PATTERN.fullmatch(plain):
        return validate_run_id(plain)
    digest = hashlib.sha256(f"{session_id}\x00{agent_id}".encode()).hexdigest()[:32]
    return validate_run_id(f"{RUN_ID_PREFIX}{digest}")


def _has_tool_use(message: Message) -> bool:
    return message["role"] == "assistant" and any("toolUse" in block for block in message["content"])


def _starts_turn(message: Message) -> bool:
    return message["role"] == "user" and not any("toolResult" in block for block in message["content"])


def closed_messages(messages: list[Message]) -> list[Message]:
    """``messages`` without a last assistant message whose tool calls have no results yet:
    what a Strands session may show (a ``toolUse`` always with its ``toolResult``)."""
    if messages and _has_tool_use(messages[-1]):
        return messages[:-1]
    return messages


def same_message(a: Any, b: Any) -> bool:
    """Whether two messages say the same (role and content; ``tracking_id``/``metadata`` aside)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    return bool(a.get("role") == b.get("role") and a.get("content") == b.get("content"))


@dataclass(frozen=True)
class CallPlan:
    """What one call of a session agent does: ``resume`` the run's unfinished turn first,
    then ``send`` the prompt as a new turn (either may be False, not both)."""

    resume: bool
    send: bool


SEND = CallPlan(resume=False, send=True)
RESUME = CallPlan(resume=True, send=False)
RESUME_THEN_SEND = CallPlan(resume=True, send=True)


def plan_call(agent: Agent, prompt: Any) -> CallPlan:
    """What ``agent(prompt)`` does for an agent attached to a session (its run adopted).

    - The run has no unfinished turn: :data:`SEND` (a new turn).
    - The run has an unfinished turn (the process that ran it died) and ``prompt`` is that turn's
      prompt again (an unchanged program run again), or None: :data:`RESUME` (the turn finishes;
      its result is the call's result; nothing is sent twice, no finished tool runs again).
    - The turn waits for interrupt answers: :data:`SEND` for ``interruptResponse`` blocks (they
      answer it, as in Strands); the turn's own prompt again returns its interrupted result
      (:data:`RESUME`); any other prompt is sent and refused, as Tether refuses a new prompt
      while interrupts wait.
    - Any other prompt while a turn is unfinished: :data:`RESUME_THEN_SEND` (the interrupted
      turn finishes first, so nothing it did is lost, then the prompt is a new turn; if the
      resumed turn stops for interrupts, its result is returned and the prompt is not sent).
    """
    run = agent.run_state
    if run.cursor.phase == "idle" and not is_waiting(run):
        return SEND
    if prompt is None:
        return RESUME
    normalized = normalize_prompt(prompt)
    repeated = normalized.kind == "messages" and len(normalized.messages) == 1 and _is_turn_prompt(run.messages, normalized.messages[0])
    if repeated:
        return RESUME
    if is_waiting(run):
        return SEND
    return RESUME_THEN_SEND


def _is_turn_prompt(messages: list[Message], prompt: Message) -> bool:
    """Whether ``prompt`` is the prompt that started the last turn of ``messages``."""
    for message in reversed(messages):
        if _starts_turn(message):
            return same_message(message, prompt)
    return False
