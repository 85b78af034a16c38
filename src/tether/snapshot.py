"""Snapshots: an agent's state as a versioned JSON document.

A :class:`Snapshot` holds only JSON (bytes inside messages are base64 envelopes), so
``json.dumps(snap.to_dict())`` always works and loading one can never run code. Field selection
is resolved as: preset, then ``include`` adds, then ``exclude`` removes. Older schema versions are
upgraded by registered pure ``dict -> dict`` migrations; newer ones are refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ._json import copy_json, encode, find_non_json
from ._messages import validate_messages, validate_system_prompt
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

Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""``MIGRATIONS[v]`` upgrades a snapshot dict from schema ``v`` to ``v + 1`` (pure function)."""


def register_migration(from_version: int) -> Callable[[Migration], Migration]:
    """Decorator registering the migration from ``from_version`` to ``from_version + 1``."""

    def wrap(func: Migration) -> Migration:
        MIGRATIONS[from_version] = func
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
    """Upgrade ``data`` (which has ``schema_version``) to ``target``; refuse newer versions."""
    registry = MIGRATIONS if migrations is None else migrations
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise error(f"{what}.schema_version must be an integer, got {version!r}")
    if version > target:
        raise error(f"{what} schema_version {version} is newer than this Tether supports ({target}); upgrade tether to load it")
    while version < target:
        step = registry.get(version)
        if step is None:
            raise error(f"{what} schema_version {version} is not supported and no migration to {version + 1} exists")
        data = step(dict(data))
        version += 1
        data["schema_version"] = version
    return data


def resolve_fields(preset: str | None = None, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> list[str]:
    """The fields a snapshot captures; with neither preset nor include, every field."""
    if isinstance(include, str) or isinstance(exclude, str):
        raise SnapshotError("include and exclude take a list of field names, not a string")
    if preset is not None:
        if preset not in PRESETS:
            raise SnapshotError(f"unknown snapshot preset {preset!r}; known presets: {', '.join(PRESETS)}")
        selected = list(PRESETS[preset])
    elif include is None:
        selected = list(FIELDS)
    else:
        selected = []
    for name in list(include or ()) + list(exclude or ()):
        if name not in FIELDS:
            raise SnapshotError(f"unknown snapshot field {name!r}; fields are: {', '.join(FIELDS)}")
    for name in include or ():
        if name not in selected:
            selected.append(name)
    removed = set(exclude or ())
    selected = [name for name in FIELDS if name in selected and name not in removed]
    if not selected:
        raise SnapshotError("the snapshot field selection is empty; include at least one field")
    return selected


def now_iso() -> str:
    """The current UTC time, ISO-8601 with a ``Z`` suffix."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def to_json_copy(value: Any, path: str) -> Any:
    """A pure-JSON deep copy of ``value`` (bytes become envelopes) or a ``SnapshotError``."""
    try:
        return encode(value)
    except (TypeError, ValueError, RecursionError):
        found = find_non_json(value, [path])
        where = json_path(found[0]) if found else path
        kind = found[1] if found else "circular reference"
        raise SnapshotError(f"{where} is not JSON ({kind})") from None


@dataclass
class Snapshot:
    """A versioned JSON capture of an agent; see :meth:`tether.Agent.take_snapshot`."""

    data: dict[str, Any]
    app_data: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=now_iso)
    schema_version: int = SNAPSHOT_SCHEMA_VERSION
    scope: str = SCOPE

    def to_dict(self) -> dict[str, Any]:
        """A pure-JSON dict, independent of this snapshot."""
        return {
            "schema_version": self.schema_version,
            "scope": self.scope,
            "created_at": self.created_at,
            "data": copy_json(self.data),
            "app_data": copy_json(self.app_data),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Snapshot:
        try:
            value = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise SnapshotError(f"snapshot is not valid JSON: {exc}") from None
        return cls.from_dict(value)

    @classmethod
    def from_dict(cls, value: Any, *, path: str = "snapshot") -> Snapshot:
        """Validate and copy a snapshot dict; any problem is a ``SnapshotError`` naming its path."""
        if not isinstance(value, dict):
            raise SnapshotError(f"{path} must be an object, got {type(value).__name__}")
        value = migrate(value, what=path)
        if value.get("scope") != SCOPE:
            raise SnapshotError(f"{path}.scope must be {SCOPE!r}, got {value.get('scope')!r}")
        created_at = value.get("created_at", None)
        if created_at is None:
            created_at = now_iso()
        elif not isinstance(created_at, str):
            raise SnapshotError(f"{path}.created_at must be an ISO-8601 string")
        data = value.get("data")
        if not isinstance(data, dict):
            raise SnapshotError(f"{path}.data must be an object")
        app_data = value.get("app_data", {})
        if app_data is None:
            app_data = {}
        if not isinstance(app_data, dict):
            raise SnapshotError(f"{path}.app_data must be an object")
        extra = set(value) - {"schema_version", "scope", "created_at", "data", "app_data"}
        if extra:
            raise SnapshotError(f"{path}.{sorted(extra)[0]} is not a snapshot key")
        check_data(data, f"{path}.data")
        return cls(
            data=to_json_copy(data, f"{path}.data"),
            app_data=to_json_copy(app_data, f"{path}.app_data"),
            created_at=created_at,
            schema_version=SNAPSHOT_SCHEMA_VERSION,
            scope=SCOPE,
        )

    def size_report(self, top: int = 5) -> dict[str, Any]:
        """Serialized bytes per field and the ``top`` largest messages (index, role, bytes)."""
        return size_report(self.data, self.app_data, top=top)


def check_data(data: dict[str, Any], path: str) -> None:
    """Validate the captured fields of a snapshot's ``data``."""
    for name, item in data.items():
        if name not in FIELDS:
            raise SnapshotError(f"{path}.{name} is not a snapshot field; fields are: {', '.join(FIELDS)}")
        where = f"{path}.{name}"
        if name == "messages":
            validate_messages(item, [path, "messages"], SnapshotError)
        elif name == "system_prompt":
            if item is not None:
                validate_system_prompt(item, [path, "system_prompt"], SnapshotError)
        elif not isinstance(item, dict):
            raise SnapshotError(f"{where} must be an object, got {type(item).__name__}")
    interrupt_state = data.get("interrupt_state")
    if interrupt_state:
        table = interrupt_state.get("interrupts", {})
        if not isinstance(table, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("id"), str) and isinstance(v.get("name"), str) for v in table.values()
        ):
            raise SnapshotError(f"{path}.interrupt_state.interrupts must map ids to {{id, name, reason}} objects")
        context = interrupt_state.get("context")
        if context is not None and (not isinstance(context, dict) or context.get("phase") not in ("tools", "model")):
            raise SnapshotError(f"{path}.interrupt_state.context must describe the interrupted cycle")


def size_report(data: dict[str, Any], app_data: dict[str, Any], *, top: int = 5) -> dict[str, Any]:
    """Bytes per field (as compact JSON) and the largest messages."""

    def size(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())

    fields = {name: size(value) for name, value in data.items()}
    fields["app_data"] = size(app_data)
    messages = data.get("messages") or []
    sized = sorted(
        ((size(message), index, message.get("role", "?")) for index, message in enumerate(messages)),
        reverse=True,
    )[:top]
    return {
        "total_bytes": sum(fields.values()),
        "fields": fields,
        "message_count": len(messages),
        "largest_messages": [{"index": i, "role": role, "bytes": b} for b, i, role in sized],
    }


__all__ = [
    "FIELDS",
    "MIGRATIONS",
    "PRESETS",
    "SNAPSHOT_SCHEMA_VERSION",
    "Snapshot",
    "migrate",
    "register_migration",
    "resolve_fields",
    "size_report",
]
