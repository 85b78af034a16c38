"""Versioned agent-state values: patches against the last version, chunked keyframes, bounded reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.errors import StoreError
from tether.temporal import BlobStore
from tether.temporal.payloads import compact_state, expand_state, offload_state_value, restore
from tether.temporal.versions import (
    CHUNK_MAX,
    KEYFRAME_EVERY,
    VERSION_KEY,
    canonical_text,
    is_version,
    load_version,
    put_keyframe,
    same_json,
)

LIMIT = 8 * 1024


def notes(count: int, size: int = 1000) -> dict[str, str]:
    return {f"n{j:05d}": (f"{j}:0:" * size)[:size] for j in range(count)}


def store_versions(blobs: BlobStore, values: list[Any]) -> list[Any]:
    """Each value stored as the next version of the previous one; the placeholders."""
    placeholders: list[Any] = []
    previous: Any = None
    for value in values:
        previous = offload_state_value(blobs, value, "state['notes']", previous=previous, limit=LIMIT, hard_limit=None)
        placeholders.append(previous)
    return placeholders


def edited(count: int, cycles: int) -> list[dict[str, str]]:
    """The notes after each of ``cycles`` edits of one entry (a different one each time)."""
    value = notes(count)
    out = []
    for i in range(cycles):
        value = dict(value)
        value[f"n{i % count:05d}"] = (f"{i}:edit:" * 1000)[:1000]
        out.append(value)
    return out


def test_200_versions_of_a_200_kb_value_store_the_changes_not_200_copies(tmp_path: Path) -> None:
    values = edited(200, 200)
    size = len(canonical_text(values[0]))
    blobs = BlobStore(tmp_path / "blobs")
    placeholders = store_versions(blobs, values)
    assert all(is_version(p) for p in placeholders)
    # Before: 200 whole copies (40 MB). Now: one keyframe, then about a 1 KB patch per version plus
    # the chunks a keyframe every KEYFRAME_EVERY versions rewrites.
    assert blobs.bytes_written < 3 * size + 200 * 4 * 1024
    assert blobs.bytes_written < len(values) * size / 20
    # Every version reads back exactly, also from a store that remembers nothing (a fresh worker).
    cold = BlobStore(tmp_path / "blobs", memory=0)
    for value, placeholder in zip(values, placeholders, strict=True):
        assert restore(cold, placeholder) == value
    versions = [load_version(cold, p[VERSION_KEY]) for p in placeholders]
    assert [v.size for v in versions] == [len(canonical_text(value).encode()) for value in values]
    depths = [v.depth for v in versions]
    assert max(depths) == KEYFRAME_EVERY - 1  # a read replays at most KEYFRAME_EVERY - 1 patches
    assert depths.count(0) == len(values) // KEYFRAME_EVERY + 1


def test_a_keyframe_rewrites_only_the_chunks_that_changed(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    value = notes(2000)  # 2 MB
    first = offload_state_value(blobs, value, "v", limit=LIMIT, hard_limit=None)
    full = blobs.bytes_written
    changed = dict(value, n01000="changed")
    again = offload_state_value(blobs, changed, "v", limit=LIMIT, hard_limit=None)  # no previous: a keyframe
    assert again != first
    assert blobs.bytes_written - full < CHUNK_MAX + full // 50  # one chunk and the list of chunks
    assert restore(BlobStore(tmp_path / "blobs", memory=0), again) == changed


def test_arrays_and_exact_types_survive(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    base = {"log": [{"i": i, "flag": 1, "text": "x" * 100} for i in range(300)]}
    # ``1 == True`` in Python: the patch is checked by text, so the flag comes back a boolean.
    retyped = {"log": [dict(item, flag=True) if item["i"] == 7 else item for item in base["log"]]}
    grown = {"log": [*retyped["log"], {"i": 300, "flag": 1.0, "text": "y"}]}
    placeholders = store_versions(blobs, [base, retyped, grown])
    cold = BlobStore(tmp_path / "blobs", memory=0)
    for value, placeholder in zip([base, retyped, grown], placeholders, strict=True):
        assert canonical_text(restore(cold, placeholder)) == canonical_text(value)
    array = [{"i": i, "text": "z" * 200} for i in range(200)]
    stored = offload_state_value(blobs, array, "a", limit=LIMIT, hard_limit=None)
    assert is_version(stored) and restore(cold, stored) == array


def test_an_unchanged_value_keeps_its_reference_and_small_or_plain_values_stay_as_before(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    value = notes(50)
    first = offload_state_value(blobs, value, "v", limit=LIMIT, hard_limit=None)
    written = blobs.bytes_written
    assert offload_state_value(blobs, json.loads(json.dumps(value)), "v", previous=first, limit=LIMIT, hard_limit=None) == first
    assert blobs.bytes_written == written
    assert offload_state_value(blobs, {"a": 1}, "v", limit=LIMIT, hard_limit=None) == {"a": 1}
    text = offload_state_value(blobs, "t" * 20_000, "v", limit=LIMIT, hard_limit=None)
    assert set(text) == {"$blob"} and restore(blobs, text) == "t" * 20_000  # a string is one blob
    compact = compact_state(blobs, {"notes": value, "n": 1}, "state", limit=LIMIT, hard_limit=None)
    assert compact == {"notes": first, "n": 1}
    expanded = expand_state(blobs, compact)
    expanded["notes"]["n00000"] = "changed"  # a copy: the remembered version is untouched
    assert expand_state(blobs, compact) == {"notes": value, "n": 1}


def test_a_large_rewrite_is_stored_as_a_keyframe_not_a_patch(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    first, second = store_versions(blobs, [notes(100), {f"n{j:05d}": "other" * 200 for j in range(100)}])
    assert load_version(BlobStore(tmp_path / "blobs", memory=0), second[VERSION_KEY]).depth == 0
    assert first != second


def test_damaged_or_foreign_records_are_store_errors(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    plain = blobs.put({"not": "a version"})
    with pytest.raises(StoreError, match=f"blob {plain} is not a state version record"):
        load_version(blobs, plain)
    keyframe = put_keyframe(blobs, notes(20), len(canonical_text(notes(20))))[VERSION_KEY]
    patch = blobs.put({"base": keyframe, "depth": 1, "patch": {"missing": []}, "size": 9})
    with pytest.raises(StoreError, match=f"state version {patch} does not fit its base"):
        load_version(blobs, patch)
    wrong_depth = blobs.put({"base": keyframe, "depth": 5, "patch": {}, "size": 9})
    with pytest.raises(StoreError, match="wrong depth"):
        load_version(blobs, wrong_depth)
    missing = blobs.put({"base": "sha256:" + "0" * 64, "depth": 1, "patch": {}, "size": 9})
    with pytest.raises(StoreError, match="is missing"):
        load_version(blobs, missing)


def test_patches_that_add_delete_and_nest_keep_exact_sizes_and_reorderings_stay_exact(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    base = {"a": notes(30), "b": {"x": "é" * 9000, "y": [1, 2]}, "c": 1}
    steps = [
        base,
        {**base, "c": 2, "d": "new ü"},  # set and add
        {"a": {**base["a"], "n00003": "short"}, "b": {"x": "é" * 9000}, "d": "new ü"},  # nested set, nested and top deletes
        {"d": "new ü", "b": {"x": "é" * 9000}, "a": {**base["a"], "n00003": "short"}},  # the same, keys in another order
        {"a": {}, "b": {"x": "é" * 9000, "z": 1.5}},
    ]
    placeholders = store_versions(blobs, steps)
    cold = BlobStore(tmp_path / "blobs", memory=0)
    for value, placeholder in zip(steps, placeholders, strict=True):
        assert canonical_text(restore(cold, placeholder)) == canonical_text(value)
        assert load_version(cold, placeholder[VERSION_KEY]).size == len(canonical_text(value).encode())
    assert placeholders[3] == placeholders[2]  # only the order changed: the same version
    assert load_version(cold, placeholders[2][VERSION_KEY]).depth == 2


def test_same_json_is_exact_about_types_and_signs_but_not_key_order() -> None:
    assert same_json({"a": [1, {"b": "x"}], "c": 0.5}, {"c": 0.5, "a": [1, {"b": "x"}]})
    for left, right in [([1], [True]), ({"a": 1}, {"a": 1.0}), ({"a": 0.0}, {"a": -0.0}), ({"a": "1"}, {"a": 1}), ({"a": 1}, {"b": 1})]:
        assert canonical_text(left) != canonical_text(right)
        assert not same_json(left, right) and not same_json(right, left)
