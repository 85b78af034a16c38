"""`FileSessionManager`: Strands' file layout of a session, kept as a durable run's view.

The files are exactly Strands' (``FileSessionManager`` of strands-agents 1.62)::

    <storage_dir>/
    └── session_<session_id>/
        ├── session.json
        ├── agents/
        │   └── agent_<agent_id>/
        │       ├── agent.json
        │       └── messages/
        │           ├── message_0.json
        │           └── message_1.json
        └── multi_agents/

so a session written by Strands continues on Tether and one written by Tether opens in Strands.
Each agent's invocations are the durable run ``strands.<session_id>.<agent_id>`` in
``<storage_dir>/.tether/runs.sqlite``, one run store beside the sessions, shared by all of them
(Strands reads only ``session_<id>`` directories; see :mod:`._durable`): kill the process inside
a tool, build the agent again with the same session manager, and the turn resumes with nothing
lost or done twice. ``delete_session`` also deletes the session's runs.
Writes are atomic (a temporary file renamed over the target); symlinks are refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..types.session import Session, SessionAgent, SessionException, SessionMessage, SessionRecordError
from ._durable import RUN_STORE_FILE, TETHER_DIR, open_run_store, session_run_id
from .repository_session_manager import RepositorySessionManager
from .session_repository import SessionRepository

if TYPE_CHECKING:
    from ...agent import Agent
    from ...durable.store import RunStore

SESSION_PREFIX = "session_"
AGENT_PREFIX = "agent_"
MESSAGE_PREFIX = "message_"
MULTI_AGENT_PREFIX = "multi_agent_"


def _validate_id(value: str, kind: str) -> str:
    """Strands' check: an id is one path segment."""
    if not isinstance(value, str) or os.path.basename(value) != value or value in ("", ".", ".."):
        raise ValueError(f"{kind}_id={value} | id cannot contain path separators")
    return value


class FileSessionManager(RepositorySessionManager, SessionRepository):
    """A session in local files (Strands' layout), its agents' invocations durable runs.

    Args:
        session_id: The session (one path segment).
        storage_dir: Where sessions live (default ``~/.strands/sessions``, as in Strands).
        store: Tether only: another run store for the durable runs (default
            ``<storage_dir>/.tether/runs.sqlite``).
        **kwargs: Ignored (Strands' extensibility).
    """

    def __init__(self, session_id: str, storage_dir: str | None = None, *, store: RunStore | None = None, **kwargs: Any) -> None:
        self.storage_dir = storage_dir or str(Path.home() / ".strands" / "sessions")
        os.makedirs(self.storage_dir, mode=0o700, exist_ok=True)
        super().__init__(session_id=session_id, session_repository=self, store=store)

    # -- paths ------------------------------------------------------------------------------

    def _get_session_path(self, session_id: str) -> str:
        return os.path.join(self.storage_dir, f"{SESSION_PREFIX}{_validate_id(session_id, 'session')}")

    def _get_agent_path(self, session_id: str, agent_id: str) -> str:
        return os.path.join(self._get_session_path(session_id), "agents", f"{AGENT_PREFIX}{_validate_id(agent_id, 'agent')}")

    def _get_message_path(self, session_id: str, agent_id: str, message_id: int) -> str:
        if not isinstance(message_id, int):
            raise ValueError(f"message_id=<{message_id}> | message id must be an integer")
        return os.path.join(self._get_agent_path(session_id, agent_id), "messages", f"{MESSAGE_PREFIX}{message_id}.json")

    def _agent_where(self, agent_id: str) -> str:
        return os.path.join(self._get_agent_path(self.session_id, agent_id), "agent.json")

    def _message_where(self, agent_id: str, message_id: int) -> str:
        return self._get_message_path(self.session_id, agent_id, message_id)

    def _run_store(self, agent: Agent) -> RunStore:
        """``<storage_dir>/.tether/runs.sqlite`` unless a store was given."""
        if self.store is None:
            self.store = open_run_store(os.path.join(self.storage_dir, TETHER_DIR))
        return self.store

    def _delete_runs(self, session_id: str) -> None:
        """Delete the durable runs of the session's agents (those with a directory), if stored."""
        agents = os.path.join(self._get_session_path(session_id), "agents")
        names = os.listdir(agents) if os.path.isdir(agents) else []
        agent_ids = [name[len(AGENT_PREFIX) :] for name in names if name.startswith(AGENT_PREFIX)]
        directory = os.path.join(self.storage_dir, TETHER_DIR)
        if self.store is None and agent_ids and os.path.exists(os.path.join(directory, RUN_STORE_FILE)):
            self.store = open_run_store(directory)
        if self.store is None:
            return
        for agent_id in agent_ids:
            run_id = session_run_id(session_id, agent_id)
            if self.store.head(run_id) is not None:
                self.store.delete_run(run_id)

    # -- files ------------------------------------------------------------------------------

    def _read_file(self, path: str) -> dict[str, Any]:
        """A JSON object from ``path`` (symlinks refused; damage raises naming the file)."""
        if os.path.islink(path):
            raise SessionException(f"Refusing to read symlink at {path}. This may indicate a symlink attack or session tampering.")
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise SessionException(f"Invalid JSON in file {path}: {e}") from None
        if not isinstance(data, dict):
            raise SessionRecordError(f"{path}: not a Strands session file (a JSON object expected, got {type(data).__name__})")
        return cast(dict[str, Any], data)

    def _write_file(self, path: str, data: dict[str, Any]) -> None:
        """Write ``data`` as JSON atomically (temporary file + rename; symlinks refused)."""
        dir_path = os.path.dirname(path)
        os.makedirs(dir_path, mode=0o700, exist_ok=True)
        if os.path.islink(path):
            raise SessionException(f"Refusing to write to symlink at {path}. This may indicate a symlink attack.")
        fd, tmp_path = tempfile.mkstemp(dir=dir_path, prefix=".strands_", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                json.dump(data, f, indent=2, ensure_ascii=False)
            os.replace(tmp_path, path)
        except BaseException:
            try:
                os.unlink(tmp_path)
            except OSError:
                pass
            raise

    @staticmethod
    def _fields(path: str, data: dict[str, Any], required: dict[str, type | tuple[type, ...]]) -> None:
        """Refuse a file whose required fields are missing or of the wrong type, naming it."""
        for name, kind in required.items():
            if name not in data:
                raise SessionRecordError(f"{path}: field {name!r} is missing (not a Strands session file?)")
            value = data[name]
            if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
                raise SessionRecordError(f"{path}: field {name!r} has the wrong type ({type(value).__name__})")

    def _decoded(self, path: str, build: Any, data: dict[str, Any]) -> Any:
        try:
            return build(data)
        except (ValueError, TypeError) as exc:
            raise SessionRecordError(f"{path}: {exc}") from None

    # -- SessionRepository ------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        session_dir = self._get_session_path(session.session_id)
        if os.path.exists(session_dir) and os.path.exists(os.path.join(session_dir, "session.json")):
            raise SessionException(f"Session {session.session_id} already exists")
        os.makedirs(session_dir, mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(session_dir, "agents"), mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(session_dir, "multi_agents"), mode=0o700, exist_ok=True)
        self._write_file(os.path.join(session_dir, "session.json"), session.to_dict())
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        path = os.path.join(self._get_session_path(session_id), "session.json")
        if not os.path.exists(path):
            return None
        data = self._read_file(path)
        self._fields(path, data, {"session_id": str, "session_type": str})
        return cast(Session, self._decoded(path, Session.from_dict, data))

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        session_dir = self._get_session_path(session_id)
        if not os.path.exists(session_dir):
            raise SessionException(f"Session {session_id} does not exist")
        self._delete_runs(session_id)
        shutil.rmtree(session_dir)

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        agent_dir = self._get_agent_path(session_id, session_agent.agent_id)
        os.makedirs(os.path.join(agent_dir, "messages"), mode=0o700, exist_ok=True)
        self._write_file(os.path.join(agent_dir, "agent.json"), session_agent.to_dict())

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        path = os.path.join(self._get_agent_path(session_id, agent_id), "agent.json")
        if not os.path.exists(path):
            return None
        data = self._read_file(path)
        self._fields(path, data, {"agent_id": str, "state": dict, "conversation_manager_state": dict})
        if "_internal_state" in data and not isinstance(data["_internal_state"], dict):
            raise SessionRecordError(f"{path}: field '_internal_state' has the wrong type ({type(data['_internal_state']).__name__})")
        return cast(SessionAgent, self._decoded(path, SessionAgent.from_dict, data))

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        previous = self.read_agent(session_id=session_id, agent_id=session_agent.agent_id)
        if previous is None:
            raise SessionException(f"Agent {session_agent.agent_id} in session {session_id} does not exist")
        session_agent.created_at = previous.created_at
        path = os.path.join(self._get_agent_path(session_id, session_agent.agent_id), "agent.json")
        self._write_file(path, session_agent.to_dict())

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        self._write_file(self._get_message_path(session_id, agent_id, session_message.message_id), session_message.to_dict())

    def _read_message_file(self, path: str) -> SessionMessage:
        data = self._read_file(path)
        self._fields(path, data, {"message": dict, "message_id": int})
        if data.get("redact_message") is not None and not isinstance(data["redact_message"], dict):
            raise SessionRecordError(f"{path}: field 'redact_message' has the wrong type ({type(data['redact_message']).__name__})")
        return cast(SessionMessage, self._decoded(path, SessionMessage.from_dict, data))

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        path = self._get_message_path(session_id, agent_id, message_id)
        if not os.path.exists(path):
            return None
        return self._read_message_file(path)

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        previous = self.read_message(session_id=session_id, agent_id=agent_id, message_id=session_message.message_id)
        if previous is None:
            raise SessionException(f"Message {session_message.message_id} does not exist")
        session_message.created_at = previous.created_at
        self._write_file(self._get_message_path(session_id, agent_id, session_message.message_id), session_message.to_dict())

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        messages_dir = os.path.join(self._get_agent_path(session_id, agent_id), "messages")
        if not os.path.exists(messages_dir):
            raise SessionException(f"Messages directory missing from agent: {agent_id} in session {session_id}")
        indexed: list[tuple[int, str]] = []
        for filename in os.listdir(messages_dir):
            if filename.startswith(MESSAGE_PREFIX) and filename.endswith(".json"):
                number = filename[len(MESSAGE_PREFIX) : -5]
                if not number.isdigit():
                    raise SessionException(f"{os.path.join(messages_dir, filename)}: not a Strands message file (message_<n>.json)")
                indexed.append((int(number), filename))
        files = [name for _, name in sorted(indexed)]
        files = files[offset : offset + limit] if limit is not None else files[offset:]
        out: list[SessionMessage] = []
        for filename in files:
            path = os.path.join(messages_dir, filename)
            record = self._read_message_file(path)
            if record.message_id != int(filename[len(MESSAGE_PREFIX) : -5]):
                raise SessionException(f"{path}: field 'message_id' is {record.message_id}, not the file's number")
            out.append(record)
        return out

    def _get_multi_agent_path(self, session_id: str, multi_agent_id: str) -> str:
        name = f"{MULTI_AGENT_PREFIX}{_validate_id(multi_agent_id, 'agent')}"
        return os.path.join(self._get_session_path(session_id), "multi_agents", name)

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        directory = self._get_multi_agent_path(session_id, multi_agent.id)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self._write_file(os.path.join(directory, "multi_agent.json"), multi_agent.serialize_state())

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        path = os.path.join(self._get_multi_agent_path(session_id, multi_agent_id), "multi_agent.json")
        if not os.path.exists(path):
            return None
        return self._read_file(path)

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        state = multi_agent.serialize_state()
        if self.read_multi_agent(session_id=session_id, multi_agent_id=multi_agent.id) is None:
            raise SessionException(f"MultiAgent state {multi_agent.id} in session {session_id} does not exist")
        path = os.path.join(self._get_multi_agent_path(session_id, multi_agent.id), "multi_agent.json")
        self._write_file(path, state)
