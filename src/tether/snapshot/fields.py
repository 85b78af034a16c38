"""The fields a snapshot can capture, the presets, and the selection rule.

Field selection is resolved as: preset, then ``include`` adds, then ``exclude`` removes.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import SnapshotError

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


def resolve_fields(preset: str | None = None, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> list[str]:
    """The fields a snapshot captures, in canonical order.

    ``preset`` is the base, ``include`` adds and ``exclude`` removes, as in Strands: with no
    preset the base is empty, so a call with neither ``preset`` nor ``include`` selects
    nothing. Unknown names, unknown presets and an empty result raise :class:`SnapshotError`.

    Args:
        preset: ``"session"`` (every field but ``system_prompt``, as in Strands) or ``"all"``
            (every field; Tether's).
        include: Fields to add.
        exclude: Fields to remove.
    """
    if preset is not None and not isinstance(preset, str):
        raise SnapshotError(f"preset must be a preset name, got {type(preset).__name__}")
    included = _names(include, "include")
    excluded = _names(exclude, "exclude")
    if preset is not None:
        if preset not in PRESETS:
            raise SnapshotError(f"unknown snapshot preset {preset!r}; known presets: {', '.join(PRESETS)}")
        selected = set(PRESETS[preset])
    else:
        selected = set()
    selected.update(included)
    selected.difference_update(excluded)
    if not selected:
        raise SnapshotError(
            "No snapshot fields resolved. Provide a preset (take_snapshot(preset='session') or preset='all') "
            "or at least one field in 'include'; passing only 'exclude' without a preset or 'include' always "
            "results in an empty set"
        )
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
