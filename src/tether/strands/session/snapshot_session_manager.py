"""`SnapshotSessionManager`: an agent as one snapshot blob per save, kept as a durable run's view.

Strands' key layout (strands-agents 1.62) in a :mod:`tether.strands.storage` backend::

    session/<session_id>/scopes/agent/<agent_id>/snapshots/snapshot_latest.json
    session/<session_id>/scopes/agent/<agent_id>/snapshots/immutable_history/snapshot_<uuid7>.json

``snapshot_latest`` is overwritten per ``save_latest_on`` (``"invocation"``: after each
invocation; ``"message"``: also after each message; ``"trigger"``: only when
``snapshot_trigger`` fires); an immutable snapshot is appended when ``snapshot_trigger``
returns True after an invocation. The blobs are Strands' snapshot JSON (bytes in Strands'
``__bytes_encoded__`` envelope), so Strands and Tether read each other's sessions.

The agent's invocations are the durable run ``strands.<session_id>.<agent_id>`` (see
:mod:`._durable`), kept in the ``store`` given, else for a
:class:`~tether.strands.storage.LocalFileStorage` in ``<base_dir>.tether/runs.sqlite`` (beside
the base directory, which holds Strands' keys only: one store for every session of that
storage), else in the agent's store. The run is the truth and ``snapshot_latest`` a view of it: a snapshot is never
saved with a ``toolUse`` whose result is not stored (unless the run waits for interrupt
answers, as Strands saves it then), and each saved snapshot carries
``app_data["tether"] = {"run_id", "incarnation"}`` naming the run it shows. When an agent is
attached: a snapshot written by this run (or none yet: a crash in the first turn) means the
run is adopted and its unfinished turn resumes; a snapshot written by someone else (Strands
continuing the session: its ``app_data`` has no marker) wins over a finished run, which is
started again from it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

from ..._sync import run_sync
from ...durable.incarnation import incarnation_of
from ...durable.session import run_state_of
from ...errors import SnapshotError
from ...hooks import AfterInvocation, HookRegistry, MessageAdded
from ...turn import is_waiting
from ..storage import LocalFileStorage, Storage
from ..types.session import SessionException, decode_bytes_values, encode_bytes_values
from ._durable import RUN_STORE_FILE, TETHER_DIR, open_run_store, session_run_id
from .session_manager import SessionManager

if TYPE_CHECKING:
    from ...agent import Agent
    from ...durable.store import RunStore
    from ...snapshot import Snapshot
    from ...types import Message

_log = logging.getLogger(__name__)

SaveLatestStrategy = Literal["message", "invocation", "trigger"]
"""When an agent's ``snapshot_latest`` is saved (see the module docstring)."""
BidiAgentSaveLatestStrategy = Literal["message", "stop", "trigger"]
"""Strands' strategies for bidirectional agents (accepted; Tether has no bidirectional agent)."""
MultiAgentSaveLatestStrategy = Literal["node", "invocation"]
"""Strands' strategies for orchestrators (accepted; orchestrator persistence is the multi-agent facade's)."""

_SESSIONS_NAMESPACE = "session"
_SNAPSHOT_LATEST = "snapshot_latest.json"
_IMMUTABLE_HISTORY = "immutable_history"
_MARKER = "tether"


@runtime_checkable
class SnapshotTrigger(Protocol):
    """Decides whether to write an immutable checkpoint after an invocation."""

    def __call__(self, *, agent_data: Any, **kwargs: Any) -> bool: ...


_uuid7_lock = threading.Lock()
_uuid7_last = [0, 0]  # last millisecond, counter within it


def new_uuid7() -> str:
    """A fresh UUIDv7 whose string order is its creation order (within this process too)."""
    with _uuid7_lock:
        now = int(time.time() * 1000)
        if now > _uuid7_last[0]:
            _uuid7_last[0], _uuid7_last[1] = now, secrets.randbits(11)
        else:
            _uuid7_last[1] += 1
            if _uuid7_last[1] >= 1 << 12:
                _uuid7_last[0], _uuid7_last[1] = _uuid7_last[0] + 1, 0
        ms, counter = _uuid7_last
    value = (ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | secrets.randbits(62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def is_uuid7(value: str) -> bool:
    """Whether ``value`` is a UUIDv7 in its canonical lowercase form."""
    import uuid

    try:
        parsed = uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return parsed.version == 7 and str(parsed) == value


def _check_id(value: str, kind: str) -> str:
    if not isinstance(value, str) or os.path.basename(value) != value or not value.strip() or value in (".", ".."):
        raise ValueError(f"{kind}_id is not a valid {kind} identifier: {value!r}")
    return value


def _snapshot_key(session_id: str, agent_id: str, snapshot_id: str | None) -> str:
    prefix = f"{_SESSIONS_NAMESPACE}/{_check_id(session_id, 'session')}/scopes/agent/{_check_id(agent_id, 'agent')}/snapshots/"
    if snapshot_id is None:
        return prefix + _SNAPSHOT_LATEST
    if not is_uuid7(snapshot_id):
        raise ValueError(f"'{snapshot_id}' is not a valid snapshot id")
    return f"{prefix}{_IMMUTABLE_HISTORY}/snapshot_{snapshot_id}.json"


def _unfinished_tool_use(agent: Agent) -> bool:
    """The last message asks for tool calls whose results are not stored, and the run does
    not wait for interrupt answers: a snapshot now would show a ``toolUse`` without result."""
    run = agent.run_state
    messages = run.messages
    last: Message | None = messages[-1] if messages else None
    dangling = last is not None and last["role"] == "assistant" and any("toolUse" in block for block in last["content"])
    return dangling and not is_waiting(run)


class SnapshotSessionManager(SessionManager):
    """Persists agent snapshots to a storage backend; the agent's invocations are a durable run.

    Args:
        session_id: The session (one path segment).
        storage: Where snapshots live (default: a ``LocalFileStorage()`` in ``./.strands/``).
        save_latest_on: When ``snapshot_latest`` is saved (``"invocation"``, ``"message"``, ``"trigger"``).
        bidi_agent_save_latest_on: Accepted for Strands' signature.
        multi_agent_save_latest_on: Accepted for Strands' signature.
        snapshot_trigger: Called after each invocation (``agent_data=agent``); True appends an
            immutable snapshot.
        store: Tether only: the run store of the durable runs (default: see the module docstring).
        **kwargs: Ignored (Strands' extensibility).

    Raises:
        ValueError: An invalid ``session_id`` or strategy.
    """

    def __init__(
        self,
        session_id: str = "default-session",
        *,
        storage: Storage | None = None,
        save_latest_on: SaveLatestStrategy = "invocation",
        bidi_agent_save_latest_on: BidiAgentSaveLatestStrategy = "message",
        multi_agent_save_latest_on: MultiAgentSaveLatestStrategy = "node",
        snapshot_trigger: SnapshotTrigger | None = None,
        store: RunStore | None = None,
        **kwargs: Any,
    ) -> None:
        self.session_id = _check_id(session_id, "session")
        for name, value, allowed in (
            ("save_latest_on", save_latest_on, get_args(SaveLatestStrategy)),
            ("bidi_agent_save_latest_on", bidi_agent_save_latest_on, get_args(BidiAgentSaveLatestStrategy)),
            ("multi_agent_save_latest_on", multi_agent_save_latest_on, get_args(MultiAgentSaveLatestStrategy)),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        self._storage = storage
        self._save_latest_on = save_latest_on
        self._snapshot_trigger = snapshot_trigger
        self.store = store
        self._run_ids: dict[str, str] = {}  # agent id -> durable run id, of the agents attached

    @property
    def _resolved_storage(self) -> Storage:
        if self._storage is None:
            self._storage = LocalFileStorage()
        return self._storage

    def _run_store(self, agent: Agent) -> RunStore:
        if self.store is None:
            storage = self._resolved_storage
            if isinstance(storage, LocalFileStorage):
                self.store = open_run_store(os.path.abspath(storage.base_dir) + TETHER_DIR)
            else:
                self.store = agent._store()
        return self.store

    # -- attaching --------------------------------------------------------------------------

    def attach(self, agent: Agent) -> str:
        """Restore ``agent`` from ``snapshot_latest`` and bind it to its durable run; returns the run id.

        Raises:
            SnapshotError: ``snapshot_latest`` is damaged or not an agent snapshot (the key is
                named); nothing is written then.
            SessionException: The snapshot disagrees with an unfinished durable run.
        """
        agent_storage = getattr(agent, "storage", None)  # Strands' Agent(storage=...), if the facade has it
        if self._storage is None and agent_storage is not None:
            self._storage = agent_storage
        key = _snapshot_key(self.session_id, agent.agent_id, None)
        snapshot = self._read(key)
        if snapshot is not None:
            self._load(agent, snapshot, key)
        store = self._run_store(agent)
        agent.store = store
        run_id = session_run_id(self.session_id, agent.agent_id)
        stored = store.load(run_id)
        if stored is not None:
            run = run_state_of(stored)
            app_data = None if snapshot is None else snapshot.get("app_data")
            marker = app_data.get(_MARKER) if isinstance(app_data, dict) else None
            ours = {"run_id": run_id, "incarnation": incarnation_of(stored.head)}
            if snapshot is None or marker == ours:
                agent._adopt(run)
            elif run.cursor.phase == "idle" and not is_waiting(run):
                store.delete_run(run_id)  # the session went on without Tether: the snapshot is the truth
            else:
                raise SessionException(
                    f"{key}: snapshot_latest was not written by the unfinished durable run {run_id!r} "
                    f"(the session was changed outside Tether while a turn was in flight); delete the run "
                    f"(tether runs delete {run_id}) to continue from the snapshot"
                )
        self._run_ids[agent.agent_id] = run_id
        self.register_hooks(agent.hooks)
        return run_id

    def initialize(self, agent: Agent, **kwargs: Any) -> None:
        """Restore ``agent`` from ``snapshot_latest`` if there is one (no durable run)."""
        key = _snapshot_key(self.session_id, agent.agent_id, None)
        snapshot = self._read(key)
        if snapshot is not None:
            self._load(agent, snapshot, key)

    def _read(self, key: str, storage: Storage | None = None) -> dict[str, Any] | None:
        data = run_sync((storage or self._resolved_storage).read(key))
        if data is None:
            return None
        try:
            decoded = decode_bytes_values(json.loads(data))
        except (ValueError, UnicodeDecodeError) as error:
            raise SnapshotError(f"{key}: failed to deserialize snapshot: {error}") from None
        if not isinstance(decoded, dict):
            raise SnapshotError(f"{key}: snapshot is not an object: got {type(decoded).__name__}")
        return decoded

    @staticmethod
    def _load(agent: Agent, snapshot: dict[str, Any], key: str) -> None:
        try:
            agent.load_snapshot(snapshot)
        except SnapshotError as exc:
            raise SnapshotError(f"{key}: {exc}") from None

    # -- saving -----------------------------------------------------------------------------

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Save per ``save_latest_on`` (and the trigger after each invocation)."""
        if self._save_latest_on == "message":
            registry.add_callback(MessageAdded, self._on_message)
        registry.add_callback(AfterInvocation, self._on_end)

    def _capture(self, agent: Agent) -> bytes:
        snapshot: Snapshot = agent.take_snapshot(preset="session", include=["system_prompt"])
        document = snapshot.to_dict()
        run_id = self._run_ids.get(agent.agent_id)
        store = self.store
        head = None if run_id is None or store is None else store.head(run_id)
        if head is not None:
            document["app_data"] = {**document.get("app_data", {}), _MARKER: {"run_id": run_id, "incarnation": incarnation_of(head)}}
        return json.dumps(encode_bytes_values(document), ensure_ascii=False).encode("utf-8")

    def _write(self, agent: Agent, snapshot_id: str | None, data: bytes) -> None:
        run_sync(self._resolved_storage.write(_snapshot_key(self.session_id, agent.agent_id, snapshot_id), data))

    def _on_message(self, event: MessageAdded) -> None:
        message = event.message
        if message is not None and message["role"] == "user" and not any("toolResult" in block for block in message["content"]):
            return  # a prompt: the run stores it with the turn's first step
        if not _unfinished_tool_use(event.agent):
            self._write(event.agent, None, self._capture(event.agent))

    def _on_end(self, event: AfterInvocation) -> None:
        agent = event.agent
        if _unfinished_tool_use(agent):
            return  # the turn failed mid-cycle: its durable run resumes it; the last view stands
        triggered = failed = False
        if self._snapshot_trigger is not None:
            try:
                triggered = bool(self._snapshot_trigger(agent_data=agent))
            except Exception:  # as in Strands: a raising trigger must not lose the latest save
                _log.exception("session %r agent %r: snapshot_trigger raised; no immutable snapshot", self.session_id, agent.agent_id)
                failed = True
        if triggered:
            data = self._capture(agent)
            self._write(agent, new_uuid7(), data)  # the immutable one first: latest never points past history
            self._write(agent, None, data)
        elif self._save_latest_on != "trigger" or failed:
            self._write(agent, None, self._capture(agent))

    def sync_agent(self, agent: Agent, **kwargs: Any) -> None:
        """Save ``snapshot_latest`` now (unless a ``toolUse`` waits for its stored result)."""
        if not _unfinished_tool_use(agent):
            self._write(agent, None, self._capture(agent))

    def redact_latest_message(self, redact_message: Message, agent: Agent, **kwargs: Any) -> None:
        """Save at once after a redaction, under every strategy (as Strands does)."""
        self.sync_agent(agent)

    def append_message(self, message: Message, agent: Agent, **kwargs: Any) -> None:
        """Nothing: a snapshot captures the whole agent."""

    # -- time travel ------------------------------------------------------------------------

    async def list_snapshot_ids(self, agent: Agent, *, limit: int | None = None, start_after: str | None = None) -> list[str]:
        """Immutable snapshot ids of ``agent``, oldest first."""
        if limit is not None and limit <= 0:
            return []
        if start_after is not None and not is_uuid7(start_after):
            raise ValueError(f"'{start_after}' is not a valid snapshot id")
        prefix = _snapshot_key(self.session_id, agent.agent_id, None)[: -len(_SNAPSHOT_LATEST)] + f"{_IMMUTABLE_HISTORY}/"
        names = [key.rsplit("/", 1)[-1] for key in await self._resolved_storage.list(prefix)]
        ids = sorted(i for name in names if name.startswith("snapshot_") and is_uuid7(i := name[len("snapshot_") : -len(".json")]))
        if start_after is not None:
            ids = [i for i in ids if i > start_after]
        return ids[:limit] if limit is not None else ids

    async def restore_snapshot(self, agent: Agent, *, snapshot_id: str | None = None) -> bool:
        """Load a stored snapshot (``snapshot_latest`` when no id) into ``agent``; False if none."""
        key = _snapshot_key(self.session_id, agent.agent_id, snapshot_id)
        data = await self._resolved_storage.read(key)
        if data is None:
            return False
        try:
            decoded = decode_bytes_values(json.loads(data))
        except (ValueError, UnicodeDecodeError) as error:
            raise SnapshotError(f"{key}: failed to deserialize snapshot: {error}") from None
        if not isinstance(decoded, dict):
            raise SnapshotError(f"{key}: snapshot is not an object: got {type(decoded).__name__}")
        self._load(agent, decoded, key)
        return True

    async def save_snapshot(self, agent: Agent, *, is_latest: bool) -> str | None:
        """Save ``agent`` now: overwrite ``snapshot_latest`` or append an immutable snapshot (its id)."""
        data = self._capture(agent)
        snapshot_id = None if is_latest else new_uuid7()
        await self._resolved_storage.write(_snapshot_key(self.session_id, agent.agent_id, snapshot_id), data)
        return snapshot_id

    async def delete_session(self) -> None:
        """Delete every key of the session, and the durable runs of its agents (those with a
        snapshot, or attached here) from the run store."""
        storage = self._resolved_storage
        prefix = f"{_SESSIONS_NAMESPACE}/{self.session_id}/"
        keys = await storage.list(prefix)
        run_ids = set(self._run_ids.values())
        for key in keys:
            parts = key[len(prefix) :].split("/")
            if len(parts) > 2 and parts[:2] == ["scopes", "agent"]:
                run_ids.add(session_run_id(self.session_id, parts[2]))
        if self.store is None and isinstance(storage, LocalFileStorage):
            directory = os.path.abspath(storage.base_dir) + TETHER_DIR
            if os.path.exists(os.path.join(directory, RUN_STORE_FILE)):
                self.store = open_run_store(directory)
        store = self.store
        if store is not None:
            for run_id in sorted(run_ids):
                if store.head(run_id) is not None:
                    store.delete_run(run_id)
        await asyncio.gather(*(storage.delete(key) for key in keys))
