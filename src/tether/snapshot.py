"""Snapshots: an agent's state as a versioned JSON document.

A :class:`Snapshot` holds only JSON (bytes inside messages are base64 envelopes), so
``json.dumps(snap.to_dict())`` always works and loading one can never run code. Field selection
is resolved as: preset, then ``include`` adds, then ``exclude`` removes. Older schema versions are
upgraded by registered pure ``dict -> dict`` migrations; newer ones are refused.

Speed: a snapshot taken from an agent or validated by :meth:`Snapshot.from_dict` keeps its data
frozen (an immutable in-process image, see :mod:`tether._json`), so ``to_dict`` and loading
each cost one C-speed copy and no Python walk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from ._json import describe_non_json, encode, find_non_json, freeze, is_json, strict_copy, thaw
from ._messages import _Invalid, check_message, check_tool_result, validate_messages, validate_system_prompt
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


def to_json_copy(value: Any, path: str) -> Any:
    """A pure-JSON deep copy of ``value`` (bytes become envelopes) or a ``SnapshotError``."""
    try:
        return encode(value)
    except (TypeError, ValueError, RecursionError):
        found = find_non_json(value, [path])
        if found is None:
            raise SnapshotError(f"{path} is not JSON (a value json cannot encode, e.g. an integer too large)") from None
        raise SnapshotError(f"{json_path(found[0])} is not JSON ({found[1]})") from None


class Snapshot:
    """A versioned JSON capture of an agent; see :meth:`tether.Agent.take_snapshot`.

    ``data`` holds only the captured fields; ``app_data`` is the application's own JSON.
    Snapshots from ``take_snapshot`` and ``from_dict`` share nothing with the agent or the
    input dict, and ``to_dict`` always returns a fresh copy.
    """

    __slots__ = ("_data", "_frozen", "app_data", "created_at", "schema_version", "scope")

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
        self.app_data: dict[str, Any] = {} if app_data is None else app_data
        self.created_at: str = now_iso() if created_at is None else created_at
        self.schema_version = schema_version
        self.scope = scope

    @classmethod
    def _from_frozen(cls, frozen: bytes, app_data: dict[str, Any], created_at: str | None = None) -> Snapshot:
        """A snapshot over ``frozen`` (from ``_json.freeze`` of valid, pure-JSON data)."""
        snapshot = cls.__new__(cls)
        snapshot._data = None
        snapshot._frozen = frozen
        snapshot.app_data = app_data
        snapshot.created_at = now_iso() if created_at is None else created_at
        snapshot.schema_version = SNAPSHOT_SCHEMA_VERSION
        snapshot.scope = SCOPE
        return snapshot

    @property
    def data(self) -> dict[str, Any]:
        """The captured fields (a live dict: changes to it are part of this snapshot)."""
        if self._data is None:
            assert self._frozen is not None
            self._data = thaw(self._frozen)
            self._frozen = None
        return self._data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        self._data = value
        self._frozen = None

    def frozen_data(self) -> bytes:
        """The data as a frozen image (see :mod:`tether._json`); thaw it for a fresh copy.

        Raises :class:`SnapshotError` naming the path if ``data`` was changed to hold non-JSON.
        """
        if self._frozen is not None:
            return self._frozen
        data = self._data
        if not is_json(data):
            data = to_json_copy(data, "snapshot.data")
        return freeze(data)

    def _peek(self) -> dict[str, Any]:
        if self._data is not None:
            return self._data
        assert self._frozen is not None
        result: dict[str, Any] = thaw(self._frozen)
        return result

    def to_dict(self) -> dict[str, Any]:
        """A pure-JSON dict, independent of this snapshot (``json.dumps`` always works on it)."""
        return {
            "schema_version": self.schema_version,
            "scope": self.scope,
            "created_at": self.created_at,
            "data": thaw(self.frozen_data()),
            "app_data": strict_copy(self.app_data, "snapshot.app_data", SnapshotError),
        }

    def to_json(self) -> str:
        """The snapshot as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Snapshot:
        """Parse and validate JSON text (see :meth:`from_dict`)."""
        try:
            value = json.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise SnapshotError(f"snapshot is not valid JSON: {exc}") from None
        return cls.from_dict(value)

    @classmethod
    def from_dict(cls, value: Any, *, path: str = "snapshot") -> Snapshot:
        """Validate and copy a snapshot dict; any problem is a ``SnapshotError`` naming its path.

        Older schema versions are migrated first; the result shares nothing with ``value``.
        """
        if not isinstance(value, dict):
            raise SnapshotError(f"{path} must be an object, got {type(value).__name__}")
        value = migrate(value, what=path)
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
        check_data(data, f"{path}.data")
        app_copy = strict_copy(app_data, f"{path}.app_data", SnapshotError)
        try:
            frozen = freeze(data)
        except ValueError:  # exotic types (e.g. str subclasses as keys) that the checks let by
            raise SnapshotError(describe_non_json(data, f"{path}.data")) from None
        return cls._from_frozen(frozen, app_copy, created_at)

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


def check_data(data: dict[str, Any], path: str) -> None:
    """Validate a snapshot's ``data``: known fields, valid shapes, and pure JSON throughout.

    Messages are checked in one walk (shape and JSON together); the other fields are checked
    for shape, then for JSON. Raises :class:`SnapshotError` naming the first bad path.
    """
    for name, item in data.items():
        if name not in FIELDS:
            raise SnapshotError(f"{path}.{name} is not a snapshot field; fields are: {', '.join(FIELDS)}")
        where = [path, name]
        if name == "messages":
            validate_messages(item, where, SnapshotError, pure_json=True)
            continue
        if name == "system_prompt":
            if item is not None:
                validate_system_prompt(item, where, SnapshotError)
        elif not isinstance(item, dict):
            raise SnapshotError(f"{path}.{name} must be an object, got {type(item).__name__}")
        elif name == "interrupt_state":
            _check_interrupt_state(item, where)
        elif name == "conversation_manager_state":
            _check_manager_state(item, where)
        if not is_json(item):
            raise SnapshotError(describe_non_json(item, f"{path}.{name}"))


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
