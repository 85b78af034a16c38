"""Snapshots: an agent's state as a versioned JSON document.

A :class:`Snapshot` holds only JSON (bytes inside messages are base64 envelopes), so
``json.dumps(snap.to_dict())`` always works and loading one can never run code. Field selection
is resolved as: preset, then ``include`` adds, then ``exclude`` removes. Older schema versions are
upgraded by registered pure ``dict -> dict`` migrations; newer ones are refused.

Speed: :meth:`Snapshot.to_json` / :meth:`Snapshot.from_json` are the fast way to persist a
snapshot. ``take_snapshot`` writes the captured fields as JSON bytes straight from the run state
(``pydantic_core``, one Rust pass, after a fast check that they are pure JSON), so ``to_json``
only adds the header. ``from_json`` parses once, checks shapes only (parsed JSON is JSON by
construction) and keeps the parsed dict, which the first ``load_snapshot`` takes without a copy.
The dict API (``to_dict``/``from_dict``) is kept and copies, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from ._json import (
    describe_non_json,
    dump_json,
    encode,
    find_non_json,
    freeze,
    is_json,
    may_hold_infinity,
    parse_json,
    strict_copy,
    thaw,
)
from ._messages import _Invalid, check_message, check_messages, check_tool_result, validate_system_prompt
from .errors import SnapshotError, json_path

SNAPSHOT_SCHEMA_VERSION = 1
SCOPE = "agent"
FIELDS: tuple[str, ...] = (
    "messages",
    "state",
    "conversation_manager_state",
    "interrupt_state",
    "system_prompt",
    "model_state",
)
PRESETS: dict[str, tuple[str, ...]] = {
    "session": tuple(name for name in FIELDS if name != "system_prompt"),
    "all": FIELDS,
}
_KEYS = frozenset({"schema_version", "scope", "created_at", "data", "app_data"})
_PHASES = ("model", "tools", "idle")
_POSITIONS = ("after_model", "after_tools")

_header_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False)

Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""``MIGRATIONS[v]`` upgrades a snapshot dict from schema ``v`` to ``v + 1`` (pure function)."""


def register_migration(from_version: int, registry: dict[int, Migration] | None = None) -> Callable[[Migration], Migration]:
    """Decorator registering the migration from ``from_version`` to ``from_version + 1``.

    ``registry`` defaults to :data:`MIGRATIONS`; registering a version twice is an error.
    """
    target = MIGRATIONS if registry is None else registry

    def wrap(func: Migration) -> Migration:
        if from_version in target:
            raise SnapshotError(f"a migration from schema_version {from_version} is already registered")
        target[from_version] = func
        return func

    return wrap


def migrate(
    data: dict[str, Any],
    *,
    target: int = SNAPSHOT_SCHEMA_VERSION,
    migrations: dict[int, Migration] | None = None,
    what: str = "snapshot",
    error: type[Exception] = SnapshotError,
) -> dict[str, Any]:
    """Upgrade ``data`` (which has ``schema_version``) to ``target``; refuse newer versions.

    ``data`` is never modified: each step receives a deep copy (or the previous step's output).
    A step that fails or returns something other than a dict raises ``error``.
    """
    registry = MIGRATIONS if migrations is None else migrations
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise error(f"{what}.schema_version must be an integer, got {version!r}")
    if version > target:
        raise error(f"{what} schema_version {version} is newer than this Tether supports ({target}); upgrade tether to load it")
    if version == target:
        return data
    try:
        current: dict[str, Any] = encode(data)
    except (TypeError, ValueError, RecursionError):
        raise error(describe_non_json(data, what)) from None
    while version < target:
        step = registry.get(version)
        if step is None:
            raise error(f"{what} schema_version {version} is not supported: no migration to {version + 1} exists")
        try:
            result = step(current)
        except Exception as exc:
            raise error(f"{what}: the migration from schema_version {version} to {version + 1} failed: {exc!r}") from None
        if not isinstance(result, dict):
            raise error(f"{what}: the migration from schema_version {version} returned {type(result).__name__}, not a dict")
        version += 1
        current = dict(result)
        current["schema_version"] = version
    return current


def resolve_fields(preset: str | None = None, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> list[str]:
    """The fields a snapshot captures, in canonical order.

    ``preset`` (default: every field, unless only ``include`` is given) is the base, ``include``
    adds and ``exclude`` removes. Unknown names, unknown presets and an empty result raise
    :class:`SnapshotError`.
    """
    if preset is not None and not isinstance(preset, str):
        raise SnapshotError(f"preset must be a preset name, got {type(preset).__name__}")
    included = _names(include, "include")
    excluded = _names(exclude, "exclude")
    if preset is not None:
        if preset not in PRESETS:
            raise SnapshotError(f"unknown snapshot preset {preset!r}; known presets: {', '.join(PRESETS)}")
        selected = set(PRESETS[preset])
    elif include is None:
        selected = set(FIELDS)
    else:
        selected = set()
    selected.update(included)
    selected.difference_update(excluded)
    if not selected:
        raise SnapshotError("the snapshot field selection is empty; include at least one field")
    return [name for name in FIELDS if name in selected]


def _names(value: Iterable[str] | None, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise SnapshotError(f"{what} takes a list of field names, got {type(value).__name__}")
    names = list(value)
    for name in names:
        if not isinstance(name, str) or name not in FIELDS:
            raise SnapshotError(f"unknown snapshot field {name!r} in {what}; fields are: {', '.join(FIELDS)}")
    return names


def now_iso() -> str:
    """The current UTC time, ISO-8601 with a ``Z`` suffix."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def to_json_copy(value: Any, path: str | list[Any]) -> Any:
    """A pure-JSON deep copy of ``value`` (bytes become envelopes) or a ``SnapshotError``.

    ``path`` names ``value`` in the error (a dotted string or a path list).
    """
    try:
        return encode(value)
    except (TypeError, ValueError, RecursionError):
        where = [path] if isinstance(path, str) else list(path)
        found = find_non_json(value, where)
        if found is None:
            raise SnapshotError(f"{json_path(where)} is not JSON (a value json cannot encode, e.g. an integer too large)") from None
        raise SnapshotError(f"{json_path(found[0])} is not JSON ({found[1]})") from None


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
        schema_version: int = SNAPSHOT_SCHEMA_VERSION,
        scope: str = SCOPE,
    ) -> None:
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
        snapshot.scope = SCOPE
        return snapshot

    @classmethod
    def _from_json_data(cls, data_json: bytes, app_data: dict[str, Any], *, may_hold_bytes: bool = True) -> Snapshot:
        """A snapshot over ``data_json``, JSON bytes of valid pure-JSON data written by Tether."""
        return cls._stored(app_data, None, json_image=data_json, may_hold_bytes=may_hold_bytes)

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
        if self._frozen is not None:
            result: dict[str, Any] = thaw(self._frozen)
            return result
        assert self._json is not None
        parsed: dict[str, Any] = parse_json(self._json)
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
        if self._frozen is not None:
            result: dict[str, Any] = thaw(self._frozen)
            return result
        assert self._json is not None
        parsed: dict[str, Any] = parse_json(self._json)
        return parsed

    def _live_json(self) -> dict[str, Any]:
        """The live ``_data`` if it is pure JSON, else a pure-JSON copy (bytes become envelopes).

        Raises :class:`SnapshotError` naming the path for anything else.
        """
        data = self._data
        if not isinstance(data, dict):
            raise SnapshotError(f"snapshot.data must be an object, got {type(data).__name__}")
        if is_json(data):
            return data
        result: dict[str, Any] = to_json_copy(data, "snapshot.data")
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
            "app_data": strict_copy(self.app_data, "snapshot.app_data", SnapshotError),
        }

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
        """
        return cls._validated(value, path, parsed=False)

    @classmethod
    def _validated(cls, value: Any, path: str, *, parsed: bool) -> Snapshot:
        """Validate ``value``; ``parsed`` says it came from :func:`parse_json` and is ours."""
        if not isinstance(value, dict):
            raise SnapshotError(f"{path} must be an object, got {type(value).__name__}")
        migrated = migrate(value, what=path)
        trusted = parsed and migrated is value  # a migration step may return anything
        value = migrated
        extra = [key for key in value if key not in _KEYS]
        if extra:
            raise SnapshotError(f"{path}.{sorted(map(str, extra))[0]} is not a snapshot key; keys are: {', '.join(sorted(_KEYS))}")
        scope = value.get("scope")
        if scope != SCOPE:
            raise SnapshotError(f"{path}.scope must be {SCOPE!r}, got {scope!r}")
        created_at = _check_created_at(value.get("created_at"), f"{path}.created_at")
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
        may_hold_bytes = check_data(data, f"{path}.data", parsed=trusted)
        try:
            frozen = freeze(data)
        except ValueError:  # exotic types (e.g. str subclasses as keys) that the checks let by
            raise SnapshotError(describe_non_json(data, f"{path}.data")) from None
        if not trusted:
            app_copy = strict_copy(app_data, f"{path}.app_data", SnapshotError)
            return cls._stored(app_copy, created_at, frozen=frozen, may_hold_bytes=may_hold_bytes)
        # Parsed JSON: only a number too big for a float (parsed as inf) can be non-JSON.
        if may_hold_infinity(frozen) and not is_json(data):
            raise SnapshotError(describe_non_json(data, f"{path}.data"))
        if not is_json(app_data):
            raise SnapshotError(describe_non_json(app_data, f"{path}.app_data"))
        return cls._stored(app_data, created_at, frozen=frozen, owned=data, may_hold_bytes=may_hold_bytes)

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
        return f"Snapshot(schema_version={self.schema_version}, created_at={self.created_at!r}, fields={list(data)}{count})"


def _check_created_at(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SnapshotError(f"{where} must be an ISO-8601 string, got {type(value).__name__}")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise SnapshotError(f"{where} must be an ISO-8601 timestamp, got {value!r:.60}") from None
    return value


def _fail(path: list[Any], problem: str) -> SnapshotError:
    return SnapshotError(f"{json_path(path)}: {problem}")


def check_data(data: dict[str, Any], path: str, *, parsed: bool = False) -> bool:
    """Validate a snapshot's ``data``: known fields, valid shapes, and pure JSON throughout.

    Messages are checked in one walk (shape and JSON together); the other fields are checked
    for shape, then for JSON. ``parsed`` says ``data`` came straight from a JSON parser, so it
    is JSON by construction and only shapes are checked (see :func:`tether._json.parse_json`
    for the one exception, infinite floats, which the caller checks). Raises
    :class:`SnapshotError` naming the first bad path. Returns whether envelopes may sit at
    bytes positions (False means loading can skip decoding them).
    """
    may_hold_bytes = False
    for name, item in data.items():
        if name not in FIELDS:
            raise SnapshotError(f"{path}.{name} is not a snapshot field; fields are: {', '.join(FIELDS)}")
        where = [path, name]
        if name == "messages":
            may_hold_bytes |= check_messages(item, where, SnapshotError, pure_json=not parsed)
            continue
        if name == "system_prompt":
            if item is not None:
                validate_system_prompt(item, where, SnapshotError)
        elif not isinstance(item, dict):
            raise SnapshotError(f"{path}.{name} must be an object, got {type(item).__name__}")
        elif name == "interrupt_state":
            _check_interrupt_state(item, where)
            may_hold_bytes |= bool(item.get("context"))
        elif name == "conversation_manager_state":
            _check_manager_state(item, where)
            may_hold_bytes |= item.get("summary_message") is not None
        if not parsed and not is_json(item):
            raise SnapshotError(describe_non_json(item, f"{path}.{name}"))
    return may_hold_bytes


def _check_manager_state(state: dict[str, Any], where: list[Any]) -> None:
    kind = state.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise _fail(where + ["kind"], "must be the manager kind (a string)")
    removed = state.get("removed_message_count")
    if removed is not None and (type(removed) is not int or removed < 0):
        raise _fail(where + ["removed_message_count"], "must be a non-negative integer")
    if state.get("summary_message") is not None:
        try:
            check_message(state["summary_message"], where + ["summary_message"])
        except _Invalid as exc:
            raise _fail(exc.path, exc.problem) from None


def _check_interrupt_state(state: dict[str, Any], where: list[Any]) -> None:
    table = state.get("interrupts")
    if table is not None:
        if not isinstance(table, dict):
            raise _fail(where + ["interrupts"], "must map interrupt ids to {id, name, reason} objects")
        for ident, item in table.items():
            at = where + ["interrupts", ident]
            if not isinstance(item, dict):
                raise _fail(at, "must be an {id, name, reason} object")
            if item.get("id") != ident:
                raise _fail(at + ["id"], "must be the interrupt id it is stored under")
            if not isinstance(item.get("name"), str):
                raise _fail(at + ["name"], "must be a string")
            for key in ("source", "tool_use_id"):
                if item.get(key) is not None and not isinstance(item[key], str):
                    raise _fail(at + [key], "must be a string or null")
    if "activated" in state and not isinstance(state["activated"], bool):
        raise _fail(where + ["activated"], "must be true or false")
    context = state.get("context")
    if context is not None:
        _check_cursor(context, where + ["context"])


def _check_cursor(context: Any, where: list[Any]) -> None:
    if not isinstance(context, dict):
        raise _fail(where, "must describe the interrupted cycle (an object)")
    if context.get("phase") not in _PHASES:
        raise _fail(where + ["phase"], f"must be one of {', '.join(_PHASES)}")
    for key in ("cycle_index", "invocation_cycles", "invocation_tokens"):
        number = context.get(key, 0)
        if type(number) is not int or number < 0:
            raise _fail(where + [key], "must be a non-negative integer")
    if "cycle_index" not in context:
        raise _fail(where + ["cycle_index"], "is missing")
    results = context.get("results", {})
    if not isinstance(results, dict):
        raise _fail(where + ["results"], "must map tool-use ids to tool results")
    for ident, result in results.items():
        try:
            check_tool_result(result, where + ["results", ident])
        except _Invalid as exc:
            raise _fail(exc.path, exc.problem) from None
    started = context.get("started", [])
    if not isinstance(started, list) or not all(isinstance(item, str) for item in started):
        raise _fail(where + ["started"], "must be a list of tool-use ids")
    if context.get("pending_pause") not in (None, *_POSITIONS):
        raise _fail(where + ["pending_pause"], f"must be null or one of {', '.join(_POSITIONS)}")
    if "corrective_turn_used" in context and not isinstance(context["corrective_turn_used"], bool):
        raise _fail(where + ["corrective_turn_used"], "must be true or false")
    stop = context.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise _fail(where + ["stop_reason"], "must be a string or null")


def size_report(data: dict[str, Any], app_data: dict[str, Any], *, top: int = 5) -> dict[str, Any]:
    """Bytes per field (as compact UTF-8 JSON) and the ``top`` largest messages.

    Returns ``{"total_bytes", "fields": {name: bytes}, "message_count",
    "largest_messages": [{"index", "role", "bytes"}]}``; ``fields`` includes ``app_data``.
    """

    def size(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_size_default).encode())

    fields = {name: size(value) for name, value in data.items()}
    fields["app_data"] = size(app_data)
    messages = data.get("messages")
    if not isinstance(messages, list):
        messages = []
    sized = sorted(
        ((size(message), index, message.get("role", "?") if isinstance(message, dict) else "?") for index, message in enumerate(messages)),
        key=lambda item: (-item[0], item[1]),
    )[: max(top, 0)]
    return {
        "total_bytes": sum(fields.values()),
        "fields": fields,
        "message_count": len(messages),
        "largest_messages": [{"index": i, "role": role, "bytes": b} for b, i, role in sized],
    }


def _size_default(value: Any) -> Any:
    return encode(value)


__all__ = [
    "FIELDS",
    "MIGRATIONS",
    "PRESETS",
    "SNAPSHOT_SCHEMA_VERSION",
    "Migration",
    "Snapshot",
    "check_data",
    "migrate",
    "register_migration",
    "resolve_fields",
    "size_report",
    "to_json_copy",
]
