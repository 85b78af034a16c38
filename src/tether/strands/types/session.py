"""Strands' session data model (``strands.types.session``) on Tether.

The same dataclasses and JSON shapes as strands-agents 1.62, so the files a session manager
writes are the files Strands writes (``session.json``, ``agent.json``, ``message_<n>.json``) and
each side reads the other's. Bytes are stored as Strands stores them:
``{"__bytes_encoded__": true, "data": "<base64>"}``.

:class:`SessionException` is what Strands raises for a damaged session and what Tether raises
for it too: a :class:`~tether.errors.StoreError` (the stored data is bad) and a ``ValueError``
(what Strands raises for conversation-manager state written by another manager), so ``except
SessionException``, ``except StoreError`` and ``except ValueError`` all catch it.
"""

from __future__ import annotations

import base64
import binascii
import inspect
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..._json import BYTES_KEY
from .exceptions import SessionException

if TYPE_CHECKING:
    from ...agent import Agent
    from ...types import Message


class SessionRecordError(SessionException, TypeError):
    """A session file holds JSON that is not a record of its kind (a foreign file: fields
    missing or of the wrong type). Also a ``TypeError``, which Strands raises for it."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


class SessionType(str, Enum):  # noqa: UP042 (Strands' exact type: str() of a member is 'SessionType.AGENT')
    """The kinds of session (Strands has one, ``AGENT``)."""

    AGENT = "AGENT"


def encode_bytes_values(obj: Any) -> Any:
    """Recursively replace ``bytes`` (and Tether's ``{"$b64": ...}`` envelope) by Strands'
    base64 envelope (new containers)."""
    if isinstance(obj, bytes):
        return {"__bytes_encoded__": True, "data": base64.b64encode(obj).decode()}
    if type(obj) is dict and len(obj) == 1 and isinstance(obj.get(BYTES_KEY), str):
        return {"__bytes_encoded__": True, "data": obj[BYTES_KEY]}
    if isinstance(obj, dict):
        return {k: encode_bytes_values(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [encode_bytes_values(item) for item in obj]
    return obj


def decode_bytes_values(obj: Any) -> Any:
    """Recursively turn Strands' base64 envelopes back into ``bytes`` (new containers).

    Raises:
        ValueError: An envelope's ``data`` is not base64.
    """
    if isinstance(obj, dict):
        if obj.get("__bytes_encoded__") is True and "data" in obj:
            try:
                return base64.b64decode(obj["data"], validate=True)
            except (binascii.Error, TypeError) as exc:
                raise ValueError(f"a bytes envelope holds no valid base64: {exc}") from None
        return {k: decode_bytes_values(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode_bytes_values(item) for item in obj]
    return obj


def _known(cls: type, env: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``env`` that are parameters of ``cls`` (as Strands reads: others are ignored)."""
    return {k: v for k, v in env.items() if k in inspect.signature(cls).parameters}


@dataclass
class SessionMessage:
    """One message of a session agent, stored as ``message_<message_id>.json``.

    Attributes:
        message: The message as appended.
        message_id: Its index in the agent's whole conversation (files are never renumbered).
        redact_message: The replacement when a guardrail redacted it (what is restored).
        created_at: ISO-8601 time of creation.
        updated_at: ISO-8601 time of the last change.
    """

    message: Message
    message_id: int
    redact_message: Message | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_message(cls, message: Message, index: int) -> SessionMessage:
        """A new record of ``message`` at ``index``."""
        return cls(message=message, message_id=index, created_at=_now(), updated_at=_now())

    def to_message(self) -> Message:
        """The message to restore: the redaction if there is one."""
        return self.redact_message if self.redact_message is not None else self.message

    @classmethod
    def from_dict(cls, env: dict[str, Any]) -> SessionMessage:
        """Read a record (unknown keys ignored, bytes decoded)."""
        return cls(**decode_bytes_values(_known(cls, env)))

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON (bytes encoded)."""
        return encode_bytes_values(asdict(self))  # type: ignore[no-any-return]


@dataclass
class SessionAgent:
    """An agent of a session, stored as ``agent.json``.

    Attributes:
        agent_id: The agent's id.
        state: The agent state (``agent.state``).
        conversation_manager_state: The conversation manager's state, tagged ``__name__``.
        _internal_state: ``interrupt_state`` and ``model_state``.
        created_at: ISO-8601 time of creation.
        updated_at: ISO-8601 time of the last change.
    """

    agent_id: str
    state: dict[str, Any]
    conversation_manager_state: dict[str, Any]
    _internal_state: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_agent(cls, agent: Agent) -> SessionAgent:
        """The record of a Tether agent as it is now (Strands' shapes)."""
        from ...snapshot.shapes import interrupt_state_out

        if agent.agent_id is None:
            raise ValueError("agent_id needs to be defined.")
        run = agent.run_state
        return cls(
            agent_id=agent.agent_id,
            state=agent.state.get(),
            conversation_manager_state=agent.conversation_manager.state(run),
            _internal_state={"interrupt_state": interrupt_state_out(run.interrupt_state), "model_state": run.model_state},
        )

    @classmethod
    def from_dict(cls, env: dict[str, Any]) -> SessionAgent:
        """Read a record (unknown keys ignored, bytes decoded)."""
        return cls(**decode_bytes_values(_known(cls, env)))

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON (bytes encoded)."""
        return encode_bytes_values(asdict(self))  # type: ignore[no-any-return]

    def initialize_internal_state(self, agent: Agent) -> None:
        """Restore ``interrupt_state`` and ``model_state`` into ``agent`` (what is present)."""
        from ...snapshot import Snapshot

        data: dict[str, Any] = {key: self._internal_state[key] for key in ("interrupt_state", "model_state") if key in self._internal_state}
        if data:
            agent.load_snapshot(Snapshot(data))


@dataclass
class Session:
    """A session, stored as ``session.json``."""

    session_id: str
    session_type: SessionType
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_dict(cls, env: dict[str, Any]) -> Session:
        """Read a record (unknown keys ignored)."""
        return cls(**_known(cls, env))

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON."""
        return asdict(self)


__all__ = [
    "Session",
    "SessionAgent",
    "SessionException",
    "SessionMessage",
    "SessionRecordError",
    "SessionType",
    "decode_bytes_values",
    "encode_bytes_values",
]
