"""Claim-check for the run values that are not messages: agent state, conversation-manager
state, model state, interrupt reasons and answers.

Messages are compacted part by part (:mod:`tether.temporal.claimcheck`); the other values of a
run travel through Temporal too (activity inputs and results, the continue-as-new carry, queries,
the workflow result), so they get the same treatment: a value whose canonical JSON is larger
than the inline limit is stored in the :class:`BlobStore` and replaced by ``{"$blob": ref}``.
The agent state is compacted key by key, because the workflow merges the changes concurrent
tool calls make to it; the other values are opaque to the workflow and are compacted whole. A
large object or array of the state is stored as a *version* (``{"$value": ref}``, see
:mod:`tether.temporal.versions`): a patch against the version it replaces, so a value that
changes a little every cycle costs the change, not a copy of itself.

Two limits apply. ``inline_limit`` decides what is offloaded. ``max_value_bytes`` is the hard
limit of one value: a larger one raises :class:`~tether.errors.PayloadTooLargeError` naming the
field, before anything is stored, because no blob store should quietly take a 1 GB agent state.
What stays inline after offloading (the keys of a state with very many small values) is held
to :data:`MAX_COMPACT_BYTES`, so no payload, and no history event, can outgrow Temporal's limits.
"""

from __future__ import annotations

from typing import Any

from .._json import is_json, json_copy
from ..errors import PayloadTooLargeError
from .blobs import BlobStore, canonical_json, is_ref
from .shapes import CompactRecord, CompactState
from .versions import VERSION_KEY, canonical_text, is_version, load_version, prepare_delta, put_delta, put_keyframe, restore_version

BLOB_KEY = "$blob"
DEFAULT_MAX_VALUE_BYTES = 64 * 1024 * 1024
"""The default hard limit of one value of a run (bytes of canonical JSON)."""
MAX_COMPACT_BYTES = 256 * 1024
"""The most a compacted value (placeholders inline) may hold: half of Temporal's 512 KiB
history-event guidance, so a payload carrying several of them stays well below it."""


def is_placeholder(value: Any) -> bool:
    """True when ``value`` is a ``{"$blob": ref}`` placeholder."""
    return type(value) is dict and len(value) == 1 and is_ref(value.get(BLOB_KEY))


def check_size(size: int, limit: int | None, field: str, what: str = "max_value_bytes") -> None:
    """Raise :class:`PayloadTooLargeError` naming ``field`` when ``size`` exceeds ``limit``.

    Args:
        size: Bytes of canonical JSON.
        limit: The limit (None: no limit).
        field: The value's name in the run, e.g. ``state['report']``.
        what: The name of the limit, for the message.
    """
    if limit is not None and size > limit:
        raise PayloadTooLargeError(
            f"{field} is {size} bytes of JSON, over the hard limit of {limit} bytes ({what}); "
            "keep data this large outside the run (a file, a database) and put a reference to it in the run"
        )


def offload(blobs: BlobStore, value: Any, field: str, *, limit: int, hard_limit: int | None) -> Any:
    """``value`` itself when small, else its ``{"$blob": ref}`` placeholder (stored in ``blobs``).

    Args:
        blobs: Where large values go.
        value: A JSON value (bytes become base64 envelopes).
        field: The value's name, for the error of a value over ``hard_limit``.
        limit: Values larger than this (bytes of canonical JSON) are offloaded.
        hard_limit: Values larger than this are refused (None: no limit).
    """
    if is_placeholder(value):
        return value
    data = canonical_json(value)
    check_size(len(data), hard_limit, field)
    if len(data) <= limit:
        return value
    return {BLOB_KEY: blobs.put_bytes(data)}


def restore(blobs: BlobStore, value: Any) -> Any:
    """The value a placeholder (``{"$blob": ref}`` or ``{"$value": ref}``) stands for (a fresh
    copy), or ``value`` itself."""
    if is_placeholder(value):
        return blobs.get(value[BLOB_KEY])
    return restore_version(blobs, value) if is_version(value) else value


def offload_state_value(
    blobs: BlobStore, value: Any, field: str, *, previous: Any = None, limit: int, hard_limit: int | None, owned: bool = False
) -> Any:
    """One value of the agent state as it travels: a JSON copy of it when small, else a placeholder.

    A large object or array becomes a version (``{"$value": ref}``): a patch against
    ``previous`` when that is the version it replaces and the patch is small, else a chunked
    keyframe (see :mod:`tether.temporal.versions`); any other large value is one blob.

    Args:
        blobs: Where large values go.
        value: A JSON value (bytes become base64 envelopes).
        field: The value's name, for the error of a value over ``hard_limit``.
        previous: The compact form the value had before this change (None: none).
        limit: Values larger than this (bytes of canonical JSON) are offloaded.
        hard_limit: Values larger than this are refused (None: no limit).
        owned: ``value`` is the caller's own copy, which it never uses again: when it is pure
            JSON it is kept as the cached version instead of being copied first.
    """
    if is_placeholder(value) or is_version(value):
        return value
    plain = value if owned and is_json(value) else json_copy(value)
    if is_version(previous) and (type(plain) is dict or type(plain) is list):
        delta = prepare_delta(blobs, plain, previous)
        if delta is not None:
            check_size(delta.size, hard_limit, field)
            return plain if delta.size <= limit else put_delta(blobs, delta)
    text = canonical_text(plain)
    data = text.encode()
    check_size(len(data), hard_limit, field)
    if len(data) <= limit:
        return plain
    if type(plain) is dict or type(plain) is list:
        return put_keyframe(blobs, plain, len(data))
    return {BLOB_KEY: blobs.put_bytes(data)}


def compact_state(
    blobs: BlobStore,
    state: dict[str, Any],
    field: str,
    *,
    limit: int,
    hard_limit: int | None,
    previous: CompactState | None = None,
    owned: bool = False,
) -> CompactState:
    """The agent state with each large value offloaded (keys stay inline for the workflow's merges).

    Args:
        blobs: Where large values go.
        state: The agent state (or the values of it that changed).
        field: The state's name in errors.
        limit: Values larger than this (bytes of canonical JSON) are offloaded.
        hard_limit: Values larger than this are refused (None: no limit).
        previous: The compact state these values replace: a large value is stored as a patch
            against its previous version (see :func:`offload_state_value`).
        owned: ``state``'s values are the caller's own copies (see :func:`offload_state_value`).

    Raises:
        PayloadTooLargeError: A value is over ``hard_limit``, or the compact state itself is
            over :data:`MAX_COMPACT_BYTES` (too many keys).
    """
    before = previous or {}
    compact = {
        key: offload_state_value(
            blobs, value, f"{field}[{key!r}]", previous=before.get(key), limit=limit, hard_limit=hard_limit, owned=owned
        )
        for key, value in state.items()
    }
    check_compact(compact, field)
    return compact


def check_compact(compact: Any, field: str) -> None:
    """Refuse a compacted value that is still too large to travel inline."""
    check_size(len(canonical_json(compact)), MAX_COMPACT_BYTES, field, "the inline size of a compacted value")


def expand_state(blobs: BlobStore, state: CompactState | None, *, shared: bool = False) -> dict[str, Any]:
    """The full agent state of a compact one (a new dict).

    Args:
        blobs: Where the large values are.
        state: The compact state.
        shared: Versions (``{"$value": ref}``) come back as the store's cached values, not
            copies, for a reader that only reads them (a tool activity's state before the call,
            which it diffs against): the caller must not change them.
    """
    if not shared:
        return {key: restore(blobs, value) for key, value in (state or {}).items()}
    return {
        key: load_version(blobs, value[VERSION_KEY]).value if is_version(value) else restore(blobs, value)
        for key, value in (state or {}).items()
    }


def compact_interrupt(blobs: BlobStore, record: dict[str, Any], *, limit: int, hard_limit: int | None) -> CompactRecord:
    """An interrupt record with its reason and response offloaded when large."""
    out = dict(record)
    ident = record.get("id")
    for key in ("reason", "response"):
        if key in out:
            out[key] = offload(blobs, out[key], f"interrupt {ident} {key}", limit=limit, hard_limit=hard_limit)
    return out


def expand_interrupt(blobs: BlobStore, record: CompactRecord) -> dict[str, Any]:
    """An interrupt record with its reason and response restored."""
    out = dict(record)
    for key in ("reason", "response"):
        if key in out:
            out[key] = restore(blobs, out[key])
    return out


def map_interrupts(state: dict[str, Any], convert: Any) -> dict[str, Any]:
    """A shallow copy of an interrupt state with ``convert`` applied to each interrupt record."""
    out = dict(state)
    table = state.get("interrupts")
    if isinstance(table, dict):
        out["interrupts"] = {ident: convert(record) if isinstance(record, dict) else record for ident, record in table.items()}
    return out


__all__ = [
    "BLOB_KEY",
    "DEFAULT_MAX_VALUE_BYTES",
    "MAX_COMPACT_BYTES",
    "check_compact",
    "check_size",
    "compact_interrupt",
    "compact_state",
    "expand_interrupt",
    "expand_state",
    "is_placeholder",
    "map_interrupts",
    "offload",
    "offload_state_value",
    "restore",
]
