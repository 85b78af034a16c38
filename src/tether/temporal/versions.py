"""Versioned agent-state values: each version a patch against the last, with chunked keyframes.

An agent whose state holds one large value (a 2 MB dict of notes) that a tool changes a little
every cycle used to write the whole value to the :class:`BlobStore` at every change: 300 cycles
wrote 618 MB. A large *object or array* of the agent state is now stored as a **version**,
named in the compact state by ``{"$value": ref}``, where the blob ``ref`` holds one record:

- a **delta** ``{"base": ref, "depth": d, "patch": {...}, "size": n}``: the previous version's
  record and the :func:`~tether._jsonpatch.diff` from its value to this one (the diff engine of
  the durable stores' head packing, checked as they check it: the patched value must have
  exactly this value's canonical JSON, else it is not used). A change costs the size of the
  change. The diff patches objects (an array is replaced whole), so an array that changes is
  stored as a keyframe each time, whose unchanged chunks cost nothing.
- a **keyframe** ``{"chunks": [ref, ...], "depth": 0, "kind": "dict" | "list", "size": n}``: the value
  split into chunks (runs of entries of an object, in key order, or of items of an array), each
  a content-addressed blob of its own. Chunk boundaries are chosen by content (an entry's key,
  an item's text) within :data:`CHUNK_MIN`..:data:`CHUNK_MAX` bytes, so chunks that did not
  change since the last keyframe have the same bytes, hence the same reference, and are not
  written again: a keyframe costs the changed chunks and the list of references.

A version is a keyframe at least every :data:`KEYFRAME_EVERY` versions (and when a patch would
exceed a quarter of the value, :data:`~tether.durable.packing.REBASE_FRACTION`), so reading
one replays at most that many patches; the reader also remembers the last values it built
(:meth:`BlobStore.remember`), so the next cycle's read is one small patch. Every record is an
immutable, content-addressed blob like any other: a reference always means the same value,
which keeps workflow replay deterministic.

Garbage: old versions stay in the store (nothing in a blob directory is ever deleted by Tether),
but they are small: a run whose value of ``S`` bytes changes by ``c`` bytes per cycle writes
about ``c`` per cycle plus, every ``KEYFRAME_EVERY`` cycles, the chunks changed since the last
keyframe and a list of about ``S / 8 KiB`` references of 73 bytes (see the Temporal guide's
storage figures). ``n`` in a record is the bytes of the value's canonical JSON (the next
version's size is checked against ``max_value_bytes`` without encoding it).
"""

from __future__ import annotations

import json
import math
import zlib
from typing import Any, NamedTuple

from .._json import freeze, thaw
from .._jsonpatch import apply, diff
from ..durable.packing import REBASE_FRACTION
from ..errors import StoreError
from .blobs import BlobStore, is_ref

VERSION_KEY = "$value"
KEYFRAME_EVERY = 32
"""A version is a keyframe at least this often: a read replays at most this many patches."""
CHUNK_MIN = 4 * 1024
"""A chunk ends at a content-chosen entry once it holds this many bytes."""
CHUNK_MAX = 64 * 1024
"""A chunk ends once it holds this many bytes, whatever its content (one large entry may exceed it)."""
BOUNDARY_MASK = 3
"""A chunk past :data:`CHUNK_MIN` ends after an entry whose checksum has these bits clear (1 in 4)."""
MAX_DEPTH = 4096
"""The longest delta chain a reader follows (a guard against damaged records; writers stay far below)."""

_encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_text(value: Any) -> str:
    """The canonical JSON text of a pure-JSON value (what :func:`~tether.temporal.blobs.canonical_json`
    writes, as a string, without its copy: the value must be JSON already)."""
    return _encoder.encode(value)


class Version(NamedTuple):
    """A version's value (shared: read-only), its depth (patches since its keyframe) and the
    bytes of its canonical JSON."""

    value: Any
    depth: int
    size: int


class Delta(NamedTuple):
    """A version about to be stored as a patch: what :func:`prepare_delta` found."""

    base: str
    """The record of the version it patches."""
    patch: dict[str, Any]
    value: Any
    """The patched value (shares its unchanged parts with the base's)."""
    depth: int
    size: int
    """Bytes of the value's canonical JSON."""


def is_version(value: Any) -> bool:
    """True when ``value`` is a ``{"$value": ref}`` placeholder.

    Args:
        value: Any value of a compact state.
    """
    return type(value) is dict and len(value) == 1 and is_ref(value.get(VERSION_KEY))


def prepare_delta(blobs: BlobStore, value: Any, previous: dict[str, str], *, keyframe_every: int = KEYFRAME_EVERY) -> Delta | None:
    """How ``value`` would be stored as a patch against the version ``previous`` names, or None
    when it must be a keyframe (the chain is long enough, the change is large, or no exact patch
    exists). Nothing is written.

    The patch is checked as the durable stores check theirs: the patched value must be exactly
    ``value`` (:func:`same_json`: the same canonical JSON, without encoding a large value; the
    diff compares with ``==``, for which ``1``, ``1.0`` and ``true`` are equal).

    Args:
        blobs: The blob store.
        value: The new value, pure JSON.
        previous: The ``{"$value": ref}`` placeholder of the version it replaces.
        keyframe_every: The longest chain of patches a version may end.
    """
    base_ref = previous[VERSION_KEY]
    base = load_version(blobs, base_ref)
    if base.depth + 1 >= keyframe_every:
        return None
    patch = diff(base.value, value)
    if patch is None:
        return None
    patched = apply(base.value, patch) if patch else base.value
    if not same_json(patched, value):
        return None  # ``1 == True`` hid a change from the diff: the value is stored whole
    size = base.size + _size_change(base.value, patch)
    if len(canonical_text(patch)) * REBASE_FRACTION > size:
        return None
    return Delta(base_ref, patch, patched, base.depth + 1, size)


def same_json(a: Any, b: Any) -> bool:
    """True when JSON values ``a`` and ``b`` have the same canonical JSON text (exact types:
    ``1``, ``1.0`` and ``true`` differ, and so do ``0.0`` and ``-0.0``; key order does not matter).

    Parts ``a`` and ``b`` share are not walked: comparing a patched value with the value it was
    made from walks only what the patch did not replace, at C speed for runs of strings.
    """
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b):
            return False
        for key, left in a.items():
            right = b.get(key, _MISSING)
            if left is right:
                continue
            if type(left) is str or (type(left) is int and type(right) is int):
                if left != right:
                    return False
            elif not same_json(left, right):
                return False
        return True
    if kind is list:
        return len(a) == len(b) and all(
            left is right or (type(left) is str and left == right) or same_json(left, right) for left, right in zip(a, b, strict=True)
        )
    if kind is float:
        return bool(a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    return bool(a == b)


_MISSING: Any = object()


def put_delta(blobs: BlobStore, delta: Delta) -> dict[str, str]:
    """Store a :func:`prepare_delta` outcome; its placeholder (the base's own for an empty patch).

    Args:
        blobs: The blob store.
        delta: What :func:`prepare_delta` returned.
    """
    if not delta.patch:
        return {VERSION_KEY: delta.base}
    record = {"base": delta.base, "depth": delta.depth, "patch": delta.patch, "size": delta.size}
    ref = blobs.put_bytes(canonical_text(record).encode())
    blobs.remember(ref, Version(delta.value, delta.depth, delta.size))
    return {VERSION_KEY: ref}


def put_keyframe(blobs: BlobStore, value: Any, size: int) -> dict[str, str]:
    """Store ``value`` (a JSON object or array) whole, in content-addressed chunks; its placeholder.

    Args:
        blobs: The blob store.
        value: The value, pure JSON; the store keeps it as the version's cached value, so the
            caller must not change it afterwards.
        size: Bytes of ``value``'s canonical JSON (the caller measured it against its limits).
    """
    if type(value) is not dict and type(value) is not list:
        raise TypeError("put_keyframe stores a JSON object or array")
    return {VERSION_KEY: _keyframe(blobs, value, total=size)}


def _size_change(base: Any, patch: dict[str, Any]) -> int:
    """How many bytes ``apply(base, patch)``'s canonical JSON has more than ``base``'s."""
    change = 0
    count = len(base)
    for key, op in patch.items():
        if type(op) is dict:
            change += _size_change(base[key], op)
            continue
        entry = len(canonical_text(key).encode()) + 1
        if key in base:
            change -= entry + len(canonical_text(base[key]).encode())
            count -= 1
        if op:
            change += entry + len(canonical_text(op[0]).encode())
            count += 1
    return change + max(count - 1, 0) - max(len(base) - 1, 0)  # the commas between entries


def _keyframe(blobs: BlobStore, value: Any, *, total: int) -> str:
    chunks: list[str] = []
    pieces: list[str] = []
    size = 0
    kind = "dict" if type(value) is dict else "list"
    opening, closing = ("{", "}") if kind == "dict" else ("[", "]")

    def close() -> None:
        nonlocal size
        chunks.append(blobs.put_bytes((opening + ",".join(pieces) + closing).encode()))
        pieces.clear()
        size = 0

    entries = sorted(value.items()) if kind == "dict" else ((None, item) for item in value)
    for key, item in entries:
        item_text = canonical_text(item)
        if key is None:
            piece, mark = item_text, item_text
        else:
            key_text = canonical_text(key)
            piece, mark = f"{key_text}:{item_text}", key_text
        pieces.append(piece)
        size += len(piece) + 1
        if size >= CHUNK_MAX or (size >= CHUNK_MIN and zlib.crc32(mark.encode()) & BOUNDARY_MASK == 0):
            close()
    if pieces or not chunks:
        close()
    ref = blobs.put_bytes(canonical_text({"chunks": chunks, "depth": 0, "kind": kind, "size": total}).encode())
    blobs.remember(ref, Version(value, 0, total))
    return ref


def load_version(blobs: BlobStore, ref: str) -> Version:
    """The version ``ref`` names (its value is shared: copy it before changing it).

    Follows the delta chain back to a keyframe or to a version this process has built lately
    (at most ``KEYFRAME_EVERY`` records for versions written by Tether).

    Raises:
        StoreError: A record is missing, damaged, or not a version record.
    """
    chain: list[tuple[str, dict[str, Any], int, int]] = []
    current = ref
    while True:
        known = blobs.recall(current)
        if isinstance(known, Version):
            found = known
            break
        record = blobs.get(current)
        if not isinstance(record, dict) or not ("chunks" in record or "base" in record):
            raise StoreError(f"blob {current} is not a state version record; the run's state reference is wrong")
        depth, size = record.get("depth"), record.get("size")
        if type(depth) is not int or not 0 <= depth <= MAX_DEPTH or (chain and depth != chain[-1][2] - 1):
            raise StoreError(f"state version {current} has a wrong depth ({depth!r}); the blob store is damaged")
        if type(size) is not int or size < 0:
            raise StoreError(f"state version {current} has a wrong size ({size!r}); the blob store is damaged")
        if "chunks" in record:
            found = Version(_assemble(blobs, current, record), depth, size)
            blobs.remember(current, found)
            break
        base, patch = record.get("base"), record.get("patch")
        if depth < 1 or not is_ref(base) or type(patch) is not dict:
            raise StoreError(f"blob {current} is not a state version record; the run's state reference is wrong")
        chain.append((current, patch, depth, size))
        current = str(base)
    if chain and chain[-1][2] != found.depth + 1:
        raise StoreError(f"state version {chain[-1][0]} has a wrong depth ({chain[-1][2]!r}); the blob store is damaged")
    for at, patch, depth, size in reversed(chain):
        try:
            found = Version(apply(found.value, patch), depth, size)
        except ValueError as exc:
            raise StoreError(f"state version {at} does not fit its base ({exc}); the blob store is damaged") from None
        blobs.remember(at, found)
    return found


def _assemble(blobs: BlobStore, ref: str, record: dict[str, Any]) -> Any:
    kind, chunks = record.get("kind"), record.get("chunks")
    if kind not in ("dict", "list") or not isinstance(chunks, list) or not all(is_ref(chunk) for chunk in chunks):
        raise StoreError(f"blob {ref} is not a state version record; the run's state reference is wrong")
    whole: Any = {} if kind == "dict" else []
    for chunk in chunks:
        part = blobs.get(chunk)
        if type(part) is not type(whole):
            raise StoreError(f"chunk {chunk} of state version {ref} is not a JSON {'object' if kind == 'dict' else 'array'}")
        if kind == "dict":
            whole.update(part)
        else:
            whole.extend(part)
    return whole


def restore_version(blobs: BlobStore, placeholder: dict[str, str]) -> Any:
    """A fresh copy of the value a ``{"$value": ref}`` placeholder stands for.

    Args:
        blobs: The blob store.
        placeholder: The placeholder.
    """
    return thaw(freeze(load_version(blobs, placeholder[VERSION_KEY]).value))


__all__ = [
    "CHUNK_MAX",
    "CHUNK_MIN",
    "KEYFRAME_EVERY",
    "VERSION_KEY",
    "Delta",
    "Version",
    "canonical_text",
    "is_version",
    "load_version",
    "prepare_delta",
    "put_delta",
    "put_keyframe",
    "restore_version",
    "same_json",
]
