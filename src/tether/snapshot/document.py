"""The :class:`Snapshot` document: an agent's state as a versioned JSON document.

A :class:`Snapshot` holds only JSON (bytes inside messages are base64 envelopes), so
``json.dumps(snap.to_dict())`` always works and loading one can never run code.

Speed: :meth:`Snapshot.to_json` / :meth:`Snapshot.from_json` are the fast way to persist a
snapshot. ``take_snapshot`` writes the captured fields as JSON bytes straight from the run state
(``pydantic_core``, one Rust pass, after a fast check that they are pure JSON), so ``to_json``
only adds the header. ``from_json`` parses once, checks shapes only (parsed JSON is JSON by
construction) and keeps the parsed dict, which the first ``load_snapshot`` takes without a copy.
The dict API (``to_dict``/``from_dict``) is kept and copies, as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .._clock import now_iso
from .._json import (
    brief,
    checked_json_copy,
    describe_non_json,
    dump_json,
    freeze,
    is_json,
    json_copy,
    may_hold_infinity,
    parse_json,
    thaw,
)
from .._messages import decode_message_bytes
from ..errors import ShapeError, SnapshotError
from .migrations import SNAPSHOT_SCHEMA_VERSION, SchemaVersion, migrate
from .report import size_report
from .typescript import from_typescript, is_typescript, to_typescript
from .validation import check_created_at, check_data, check_multi_agent_data

SCOPE = "agent"
"""The scope of an agent's snapshot (the only one ``Agent.load_snapshot`` applies)."""
MULTI_AGENT_SCOPE = "multiAgent"
"""The scope of a graph's or swarm's snapshot (Strands' envelope: ``data`` is ``{orchestrator_id, state}``)."""
SCOPES: tuple[str, ...] = (SCOPE, MULTI_AGENT_SCOPE)
"""Every valid scope (Strands' ``multiAgent`` snapshots are valid documents, not agent state)."""
_KEYS = frozenset({"schema_version", "scope", "created_at", "data", "app_data"})

logger = logging.getLogger(__name__)

_header_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False)


class Snapshot:
    """A versioned JSON capture of an agent; see :meth:`tether.Agent.take_snapshot`.

    ``data`` holds only the captured fields; ``app_data`` is the application's own JSON.
    Snapshots from ``take_snapshot``, ``from_dict`` and ``from_json`` share nothing with the
    agent or the input, and ``to_dict`` always returns a fresh copy.

    Storage (private): a validated snapshot keeps its data as an immutable *image*, either the
    JSON bytes ``take_snapshot`` wrote (``_json``) or a frozen copy (``_frozen``, see
    :mod:`tether._json`), so no access can change it and every reader gets its own copy. A
    snapshot parsed by :meth:`from_json` also holds the parsed dict itself (``_owned``, a list of
    at most one): no one else has a reference to it, so the first ``load_snapshot`` or
    ``to_dict`` takes it without copying (``list.pop`` hands it to exactly one caller, even
    across threads) and the image serves later readers. Reading :attr:`data` turns the snapshot into a
    live dict (``_data``), which is checked again when it is loaded.
    """

    __slots__ = ("_bytes", "_data", "_frozen", "_json", "_owned", "app_data", "created_at", "schema_version", "scope")

    def __init__(
        self,
        data: dict[str, Any],
        app_data: dict[str, Any] | None = None,
        created_at: str | None = None,
        schema_version: SchemaVersion = SNAPSHOT_SCHEMA_VERSION,
        scope: str = SCOPE,
    ) -> None:
        """A snapshot of ``data`` (not validated until it is loaded or :meth:`validate` is called).

        Args:
            data: The captured fields (a live dict: changes to it are part of this snapshot).
            app_data: The application's own JSON, stored verbatim.
            created_at: ISO-8601 timestamp; now when omitted.
            schema_version: The document's schema version (``"1.0"``).
            scope: ``"agent"`` (or Strands' ``"multiAgent"``, which an agent does not load).
        """
        self._data: dict[str, Any] | None = data
        self._frozen: bytes | None = None
        self._json: bytes | None = None
        self._owned: list[dict[str, Any]] = []
        self._bytes = True
        self.app_data: dict[str, Any] = {} if app_data is None else app_data
        self.created_at: str = now_iso() if created_at is None else created_at
        self.schema_version = schema_version
        self.scope = scope

    @classmethod
    def _stored(
        cls,
        app_data: dict[str, Any],
        created_at: str | None,
        *,
        json_image: bytes | None = None,
        frozen: bytes | None = None,
        owned: dict[str, Any] | None = None,
        may_hold_bytes: bool = True,
        scope: str = SCOPE,
    ) -> Snapshot:
        """A snapshot over a validated image (JSON bytes or a frozen blob) of pure-JSON data.

        ``owned`` (optional) is the same data as a dict nobody else references.
        ``may_hold_bytes`` False promises that no envelope sits at a bytes position.
        """
        snapshot = cls.__new__(cls)
        snapshot._data = None
        snapshot._json = json_image
        snapshot._frozen = frozen
        snapshot._owned = [] if owned is None else [owned]
        snapshot._bytes = may_hold_bytes
        snapshot.app_data = app_data
        snapshot.created_at = now_iso() if created_at is None else created_at
        snapshot.schema_version = SNAPSHOT_SCHEMA_VERSION
        snapshot.scope = scope
        return snapshot

    @classmethod
    def _from_json_data(cls, data_json: bytes, app_data: dict[str, Any], *, may_hold_bytes: bool = True) -> Snapshot:
        """A snapshot over ``data_json``, JSON bytes of valid pure-JSON data written by Tether."""
        return cls._stored(app_data, None, json_image=data_json, may_hold_bytes=may_hold_bytes)

    def validate(self) -> None:
        """Check that this Tether can load this snapshot: its schema version and scope.

        ``Agent.load_snapshot`` calls it first (as Strands' does); the data itself is checked
        when it is loaded. Raises :class:`SnapshotError` (``SnapshotException``).
        """
        version = self.schema_version
        if version != SNAPSHOT_SCHEMA_VERSION or type(version) is not type(SNAPSHOT_SCHEMA_VERSION):
            raise SnapshotError(
                f"Unsupported snapshot schema version: {brief(version)}. Current version: {SNAPSHOT_SCHEMA_VERSION}; "
                "build snapshots with take_snapshot or Snapshot.from_dict, which migrate older versions"
            )
        if self.scope not in SCOPES:
            raise SnapshotError(f"Invalid snapshot scope: {brief(self.scope)}. Valid scopes: {sorted(SCOPES)}")

    @property
    def data(self) -> dict[str, Any]:
        """The captured fields (a live dict: changes to it are part of this snapshot)."""
        if self._data is None:
            self._data = self._fresh()
            self._json = self._frozen = None
        return self._data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        self._data = value
        self._json = self._frozen = None
        self._owned = []

    def _fresh(self) -> dict[str, Any]:
        """The stored data as a dict the caller owns (the owned dict once, then copies)."""
        if self._owned:
            try:
                return self._owned.pop()
            except IndexError:  # another thread took it first
                pass
        return self._stored_copy()

    def _stored_copy(self) -> dict[str, Any]:
        """A new dict of the stored data, from its frozen or its JSON form."""
        if self._frozen is not None:
            result: dict[str, Any] = thaw(self._frozen)
            return result
        assert self._json is not None
        parsed: dict[str, Any] = parse_json(self._json, max_depth=None)  # written by take_snapshot
        return parsed

    def _take_data(self) -> tuple[dict[str, Any], bool] | None:
        """For loading: ``(data the caller owns, may hold envelopes)``; None if live/unchecked."""
        if self._data is not None:
            return None
        return self._fresh(), self._bytes

    def _peek(self) -> dict[str, Any]:
        """The data for reading only (the owned dict is never lent: a load may take it)."""
        if self._data is not None:
            return self._data
        return self._stored_copy()

    def _live_json(self) -> dict[str, Any]:
        """The live ``_data`` if it is pure JSON, else a pure-JSON copy (bytes become envelopes).

        Raises :class:`SnapshotError` naming the path for anything else.
        """
        data = self._data
        if not isinstance(data, dict):
            raise SnapshotError(f"snapshot.data must be an object, got {type(data).__name__}")
        if is_json(data):
            return data
        try:
            result: dict[str, Any] = json_copy(data, "snapshot.data")
        except ShapeError as exc:
            raise SnapshotError(str(exc)) from None
        return result

    def _live_copy(self) -> dict[str, Any]:
        """A pure-JSON copy of the live ``_data`` that shares nothing with it."""
        data = self._live_json()
        if data is self._data:
            copied: dict[str, Any] = thaw(freeze(data))
            return copied
        return data

    def data_json(self) -> bytes:
        """``data`` as compact UTF-8 JSON bytes (bytes as envelopes).

        Raises :class:`SnapshotError` naming the path if ``data`` was changed to hold non-JSON.
        """
        if self._json is not None:
            return self._json
        if self._data is not None:
            return dump_json(self._live_json())
        return dump_json(self._peek())

    def _app_json(self) -> bytes:
        app_data = self.app_data
        if not is_json(app_data):
            raise SnapshotError(describe_non_json(app_data, "snapshot.app_data"))
        return dump_json(app_data)

    def to_dict(self) -> dict[str, Any]:
        """A pure-JSON dict, independent of this snapshot (``json.dumps`` always works on it)."""
        data = self._live_copy() if self._data is not None else self._fresh()
        return {
            "schema_version": self.schema_version,
            "scope": self.scope,
            "created_at": self.created_at,
            "data": data,
            "app_data": copy_app_data(self.app_data, "snapshot.app_data"),
        }

    def to_typescript(self) -> dict[str, Any]:
        """This snapshot as the document Strands' TypeScript SDK loads (``agent.loadSnapshot``).

        camelCase header and fields, TypeScript content blocks, bytes as base64 strings; see
        :mod:`tether.snapshot.typescript`. ``Snapshot.from_dict`` reads such a document back.
        Raises :class:`SnapshotError` naming the field for what the TypeScript SDK cannot load
        (a multi-agent scope, a run stopped for interrupts TypeScript did not raise).
        """
        return to_typescript(self.to_dict())

    def to_json_bytes(self) -> bytes:
        """The snapshot as compact UTF-8 JSON (the fast way to persist or send it).

        A snapshot fresh from ``take_snapshot`` already holds its data as JSON, so this only
        writes the header and ``app_data`` around it.
        """
        data = self.data_json()
        app = self._app_json()
        encode_header = _header_encoder.encode
        try:
            head = (
                f'{{"schema_version":{encode_header(self.schema_version)},"scope":{encode_header(self.scope)},'
                f'"created_at":{encode_header(self.created_at)},"data":'
            )
        except (TypeError, ValueError):
            raise SnapshotError("snapshot.schema_version, scope and created_at must be JSON values") from None
        return b"".join((head.encode("ascii"), data, b',"app_data":', app, b"}"))

    def to_json(self) -> str:
        """The snapshot as compact JSON text (see :meth:`to_json_bytes`)."""
        return self.to_json_bytes().decode("utf-8")

    @classmethod
    def from_json(cls, text: str | bytes, *, path: str = "snapshot") -> Snapshot:
        """Parse and validate JSON text (``str`` or UTF-8 ``bytes``; see :meth:`from_dict`).

        Parsed JSON is pure JSON by construction, so validation checks shapes only, and the
        parsed dict becomes this snapshot's own data without a copy.
        """
        if isinstance(text, (bytearray, memoryview)):
            text = bytes(text)
        if not isinstance(text, (str, bytes)):
            raise SnapshotError(f"{path} JSON must be str or bytes, got {type(text).__name__}")
        try:
            value = parse_json(text)
        except (ValueError, RecursionError) as exc:
            raise SnapshotError(f"{path} is not valid JSON: {exc}") from None
        return cls._validated(value, path, parsed=True)

    @classmethod
    def from_dict(cls, value: Any, *, path: str = "snapshot") -> Snapshot:
        """Validate and copy a snapshot dict; any problem is a ``SnapshotError`` naming its path.

        Older schema versions are migrated first; the result shares nothing with ``value``.
        A document of Strands' TypeScript SDK (``schemaVersion``, ``createdAt``, ``appData``)
        is recognised and converted first (:func:`tether.snapshot.typescript.from_typescript`).
        As in Strands, a missing ``scope`` is ``"agent"`` and keys this Tether does not know
        (written by a newer writer) are ignored with a logged warning.

        Args:
            value: The snapshot dict (``Snapshot.to_dict()`` of Tether or Strands Python, or
                ``agent.takeSnapshot()`` of Strands TypeScript).
            path: The name of the document in error messages.
        """
        return cls._validated(value, path, parsed=False)

    @classmethod
    def _validated(cls, value: Any, path: str, *, parsed: bool) -> Snapshot:
        """Validate ``value``; ``parsed`` says it came from :func:`parse_json` and is ours."""
        if not isinstance(value, dict):
            raise SnapshotError(f"{path} must be an object, got {type(value).__name__}")
        if is_typescript(value):
            value = from_typescript(value, path=path)
            parsed = False  # a converted copy: checked in full
        migrated = migrate(value, what=path)
        trusted = parsed and migrated is value  # a migration step may return anything
        value = migrated
        if not _KEYS.issuperset(value):
            extra = sorted(str(key) for key in value if key not in _KEYS)
            logger.warning("unknown_keys=<%s> | ignoring unknown fields in %s", extra, path)
        scope = value.get("scope", SCOPE)
        if scope not in SCOPES:
            raise SnapshotError(f"{path}.scope must be one of {', '.join(map(repr, SCOPES))}, got {brief(scope)}")
        created_at = check_created_at(value.get("created_at"), f"{path}.created_at")
        if "data" not in value:
            raise SnapshotError(f"{path}.data is missing; it holds the captured fields")
        data = value["data"]
        if not isinstance(data, dict):
            raise SnapshotError(f"{path}.data must be an object, got {type(data).__name__}")
        app_data = value.get("app_data")
        if app_data is None:
            app_data = {}
        elif not isinstance(app_data, dict):
            raise SnapshotError(f"{path}.app_data must be an object, got {type(app_data).__name__}")
        if scope == MULTI_AGENT_SCOPE:
            check_multi_agent_data(data, f"{path}.data", parsed=trusted)
            may_hold_bytes = False
        else:
            try:
                may_hold_bytes = check_data(data, f"{path}.data", parsed=trusted)
            except SnapshotError:
                # Strands' snapshots hold raw bytes in their messages in memory: as envelopes,
                # where messages may hold bytes, they are valid.
                enveloped = None if trusted else _enveloped(data)
                if enveloped is None:
                    raise
                data = enveloped
                may_hold_bytes = check_data(data, f"{path}.data")
        try:
            frozen = freeze(data)
        except ValueError:  # exotic types (e.g. str subclasses as keys) that the checks let by
            raise SnapshotError(describe_non_json(data, f"{path}.data")) from None
        if not trusted:
            app_copy = copy_app_data(app_data, f"{path}.app_data")
            return cls._stored(app_copy, created_at, frozen=frozen, may_hold_bytes=may_hold_bytes, scope=scope)
        # Parsed JSON: only a number too big for a float (parsed as inf) can be non-JSON.
        if may_hold_infinity(frozen) and not is_json(data):
            raise SnapshotError(describe_non_json(data, f"{path}.data"))
        if not is_json(app_data):
            raise SnapshotError(describe_non_json(app_data, f"{path}.app_data"))
        return cls._stored(app_data, created_at, frozen=frozen, owned=data, may_hold_bytes=may_hold_bytes, scope=scope)

    def size_report(self, top: int = 5) -> dict[str, Any]:
        """Serialized bytes per field and the ``top`` largest messages (index, role, bytes)."""
        return size_report(self._peek(), self.app_data, top=top)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Snapshot):
            return NotImplemented
        return (
            self.schema_version == other.schema_version
            and self.scope == other.scope
            and self.created_at == other.created_at
            and self.app_data == other.app_data
            and self._peek() == other._peek()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        data = self._peek()
        messages = data.get("messages")
        count = f", messages={len(messages)}" if isinstance(messages, list) else ""
        return f"Snapshot(schema_version={self.schema_version!r}, created_at={self.created_at!r}, fields={list(data)}{count})"


def _enveloped(data: dict[str, Any]) -> dict[str, Any] | None:
    """``data`` (a new dict) with the raw bytes of its messages as envelopes, if every one of
    them sits where a message may hold bytes; else None, so the first error stands."""
    messages = data.get("messages")
    if not isinstance(messages, list) or is_json(messages):
        return None
    try:
        copied = json_copy(messages, "data.messages")
        probe = thaw(freeze(copied))
        decode_message_bytes(probe, ["snapshot", "data", "messages"])
    except (ShapeError, ValueError):
        return None
    if _count_bytes(probe) != _count_bytes(messages):
        return None  # some bytes were elsewhere (e.g. inside a json block): refused
    return {**data, "messages": copied}


def _count_bytes(value: Any) -> int:
    """How many bytes values ``value`` holds, at any depth (a loop, not recursion: a value nested
    deeper than the interpreter's recursion limit is counted, never a ``RecursionError``)."""
    count = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (bytes, bytearray, memoryview)):
            count += 1
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return count


def copy_app_data(app_data: Any, what: str) -> dict[str, Any]:
    """A copy of a snapshot's ``app_data``, which must be pure JSON; ``SnapshotError`` naming the path."""
    try:
        copied: dict[str, Any] = checked_json_copy(app_data, what)
    except ShapeError as exc:
        raise SnapshotError(str(exc)) from None
    return copied
