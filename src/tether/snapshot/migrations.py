"""Schema versions of JSON documents and the migrations that upgrade them.

A document (a snapshot, a checkpoint) carries ``schema_version``. Older versions are upgraded
by registered pure ``dict -> dict`` migrations, one version at a time; newer versions are
refused, since this Tether cannot know what they mean.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._json import describe_non_json, json_copy
from ..errors import ShapeError, SnapshotError

SNAPSHOT_SCHEMA_VERSION = 1

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
) -> dict[str, Any]:
    """Upgrade ``data`` (which has ``schema_version``) to ``target``; refuse newer versions.

    ``data`` is never modified: each step receives a deep copy (or the previous step's output).
    Every refusal is a :class:`SnapshotError` naming ``what``; a caller migrating another kind
    of document converts it (a checkpoint raises ``CheckpointError`` with the same message).
    """
    registry = MIGRATIONS if migrations is None else migrations
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError(f"{what}.schema_version must be an integer, got {version!r}")
    if version > target:
        raise SnapshotError(f"{what} schema_version {version} is newer than this Tether supports ({target}); upgrade tether to load it")
    if version == target:
        return data
    try:
        current: dict[str, Any] = json_copy(data, what)
    except ShapeError:
        raise SnapshotError(describe_non_json(data, what)) from None
    while version < target:
        step = registry.get(version)
        if step is None:
            raise SnapshotError(f"{what} schema_version {version} is not supported: no migration to {version + 1} exists")
        try:
            result = step(current)
        except Exception as exc:
            raise SnapshotError(f"{what}: the migration from schema_version {version} to {version + 1} failed: {exc!r}") from None
        if not isinstance(result, dict):
            raise SnapshotError(f"{what}: the migration from schema_version {version} returned {type(result).__name__}, not a dict")
        version += 1
        current = dict(result)
        current["schema_version"] = version
    return current
