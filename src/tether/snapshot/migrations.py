"""Schema versions of JSON documents and the migrations that upgrade them.

A document (a snapshot, a checkpoint) carries ``schema_version``. Versions are the strings
Strands writes (``"1.0"``), so a document either SDK writes loads into the other. Tether's first
release wrote the integer ``1`` (the *legacy* version): it reads as the oldest version and is
upgraded like any older one.

Older versions are upgraded by registered pure ``dict -> dict`` migrations, one version at a
time along the ordered list of released versions; versions this Tether does not know (newer
ones included) are refused, since it cannot know what they mean.

How Tether's versions relate to Strands': Tether writes the version Strands defines for every
shape Strands knows, and puts its own additions where a Strands reader ignores them, so adding
Tether-only data never needs a new version. Tether moves to a new version only when Strands
defines one (and then ships the migration to it); a Strands version this Tether does not know
is refused with a :class:`SnapshotError` saying to upgrade.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._json import brief, describe_non_json, json_copy
from ..errors import ShapeError, SnapshotError
from .shapes import interrupt_state_in, interrupt_state_out, is_interrupt_state, legacy_manager_state

SchemaVersion = str | int
"""A schema version: a ``"major.minor"`` string, or Tether's legacy integer ``1``."""

SNAPSHOT_SCHEMA_VERSION = "1.0"
"""The snapshot schema version this Tether writes (the one Strands writes)."""

LEGACY_SCHEMA_VERSION = 1
"""The integer version Tether wrote before it wrote Strands' versions."""

SNAPSHOT_VERSIONS: tuple[SchemaVersion, ...] = (LEGACY_SCHEMA_VERSION, SNAPSHOT_SCHEMA_VERSION)
"""Every released snapshot schema version, oldest first."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[SchemaVersion, Migration] = {}
"""``MIGRATIONS[v]`` upgrades a snapshot dict from version ``v`` to the next released one (pure)."""


def register_migration(
    from_version: SchemaVersion, registry: dict[SchemaVersion, Migration] | None = None
) -> Callable[[Migration], Migration]:
    """Decorator registering the migration from ``from_version`` to the next version.

    Args:
        from_version: The version the migration reads.
        registry: Where to register it; defaults to :data:`MIGRATIONS`. Registering a version
            twice is a :class:`SnapshotError`.
    """
    target = MIGRATIONS if registry is None else registry

    def wrap(func: Migration) -> Migration:
        if from_version in target:
            raise SnapshotError(f"a migration from schema_version {from_version!r} is already registered")
        target[from_version] = func
        return func

    return wrap


def _numeric(version: SchemaVersion) -> tuple[int, ...] | None:
    """``"1.2"`` as ``(1, 2)``, an integer as ``(n,)``; None if it is not of that form."""
    if isinstance(version, int):
        return (version,)
    parts = version.split(".")
    if not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def migrate(
    data: dict[str, Any],
    *,
    target: SchemaVersion = SNAPSHOT_SCHEMA_VERSION,
    versions: Sequence[SchemaVersion] = SNAPSHOT_VERSIONS,
    migrations: dict[SchemaVersion, Migration] | None = None,
    what: str = "snapshot",
) -> dict[str, Any]:
    """Upgrade ``data`` (which has ``schema_version``) to ``target``; refuse unknown versions.

    Args:
        data: The document; never modified (each step receives a deep copy or the previous
            step's output).
        target: The version to reach (one of ``versions``).
        versions: The released versions, oldest first.
        migrations: The steps (``migrations[v]`` upgrades ``v`` to the version after it);
            defaults to :data:`MIGRATIONS`.
        what: The document's name in error messages.

    Every refusal is a :class:`SnapshotError` naming ``what``; a caller migrating another kind
    of document converts it (a checkpoint raises ``CheckpointError`` with the same message).
    """
    registry = MIGRATIONS if migrations is None else migrations
    version = data.get("schema_version")
    if version == target and type(version) is type(target):
        return data
    if not isinstance(version, (str, int)) or isinstance(version, bool):
        raise SnapshotError(f"{what}.schema_version must be a version string such as {target!r}, got {brief(version)}")
    order = list(versions)
    if version not in order or type(version) is not type(order[order.index(version)]) or target not in order:
        newest = _numeric(order[-1])
        given = _numeric(version)
        if given is not None and newest is not None and isinstance(version, str) and given > newest:
            raise SnapshotError(
                f"{what} schema_version {brief(version)} is newer than this Tether supports ({order[-1]!r}); upgrade tether to load it"
            )
        raise SnapshotError(f"Unsupported {what} schema version: {brief(version)}; this Tether reads {', '.join(map(repr, order))}")
    index, goal = order.index(version), order.index(target)
    if index > goal:
        raise SnapshotError(
            f"{what} schema_version {brief(version)} is newer than this Tether supports ({target!r}); upgrade tether to load it"
        )
    try:
        current: dict[str, Any] = json_copy(data, what)
    except ShapeError:
        raise SnapshotError(describe_non_json(data, what)) from None
    while index < goal:
        step = registry.get(order[index])
        following = order[index + 1]
        if step is None:
            raise SnapshotError(f"{what} schema_version {order[index]!r} is not supported: no migration to {following!r} exists")
        try:
            result = step(current)
        except Exception as exc:
            raise SnapshotError(f"{what}: the migration from schema_version {order[index]!r} to {following!r} failed: {exc!r}") from None
        if not isinstance(result, dict):
            raise SnapshotError(f"{what}: the migration from schema_version {order[index]!r} returned {type(result).__name__}, not a dict")
        index += 1
        current = dict(result)
        current["schema_version"] = following
    return current


@register_migration(LEGACY_SCHEMA_VERSION)
def _legacy_to_strands_shapes(document: dict[str, Any]) -> dict[str, Any]:
    """Legacy ``1`` -> ``"1.0"``: the manager and interrupt states in the shapes Strands reads.

    Malformed parts are left as they are, for validation to name.
    """
    data = document.get("data")
    if not isinstance(data, dict):
        return document
    data = dict(data)
    manager = data.get("conversation_manager_state")
    if isinstance(manager, dict):
        data["conversation_manager_state"] = legacy_manager_state(manager)
    interrupts = data.get("interrupt_state")
    if isinstance(interrupts, dict) and is_interrupt_state(interrupts):
        data["interrupt_state"] = interrupt_state_out(interrupt_state_in(interrupts))
    document["data"] = data
    return document
