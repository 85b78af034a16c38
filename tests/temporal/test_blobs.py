"""The blob store and the claim-check of messages (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.errors import StoreError
from tether.temporal.blobs import BlobStore, canonical_json, ref_of
from tether.temporal.claimcheck import BLOB_KEY, Conversations, compact_message, expand_message


def test_refs_are_the_sha256_of_canonical_json_and_puts_are_idempotent(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    ref = store.put({"b": [1, 2], "a": "x"})
    assert ref == ref_of({"a": "x", "b": [1, 2]})  # key order does not matter
    assert canonical_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'
    written = store.bytes_written
    assert store.put({"a": "x", "b": [1, 2]}) == ref
    assert store.bytes_written == written
    assert store.get(ref) == {"a": "x", "b": [1, 2]}
    assert store.put({"raw": b"\x00\x01"}) == ref_of({"raw": {"$b64": "AAE="}})


def test_a_damaged_or_missing_blob_is_reported_with_its_ref(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    ref = store.put("hello")
    digest = ref.split(":")[1]
    (tmp_path / digest[:2] / f"{digest[2:]}.json").write_text('"tampered"')
    with pytest.raises(StoreError, match=f"blob {ref} .* is damaged"):
        store.get(ref)
    with pytest.raises(StoreError, match="is missing"):
        store.get("sha256:" + "0" * 64)
    with pytest.raises(StoreError, match="malformed"):
        store.get("../../etc/passwd")


def test_large_parts_are_offloaded_and_restored(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    big = "x" * 50_000
    message = {
        "role": "assistant",
        "content": [
            {"text": "short"},
            {"text": big},
            {"toolUse": {"toolUseId": "t1", "name": "save", "input": {"body": big}}},
            {"toolResult": {"toolUseId": "t0", "status": "success", "content": [{"text": "ok"}, {"json": {"blob": big}}]}},
            {"image": {"format": "png", "source": {"bytes": b"\x89PNG" * 5000}}},
        ],
    }
    compact = compact_message(store, message, limit=1024)
    assert len(json.dumps(compact)) < 2_000
    blocks = compact["content"]
    assert blocks[0] == {"text": "short"}
    assert set(blocks[1]) == {BLOB_KEY}
    assert blocks[2]["toolUse"]["name"] == "save" and set(blocks[2]["toolUse"]["input"]) == {BLOB_KEY}
    assert blocks[3]["toolResult"]["content"][0] == {"text": "ok"} and set(blocks[3]["toolResult"]["content"][1]) == {BLOB_KEY}
    assert expand_message(store, compact) == message  # bytes come back as bytes


def test_conversations_are_chains_read_back_in_order(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    writer = Conversations(store)
    first = writer.append(None, [{"role": "user", "content": [{"text": "a"}]}])
    second = writer.append(first, [{"role": "assistant", "content": [{"text": "b"}]}, {"role": "user", "content": [{"text": "c"}]}])
    assert writer.append(second, []) == second
    reader = Conversations(store)  # a fresh process: no cache
    assert [m["content"][0]["text"] for m in reader.load(second)] == ["a", "b", "c"]  # type: ignore[typeddict-item]
    assert [m["content"][0]["text"] for m in reader.load(first)] == ["a"]  # type: ignore[typeddict-item]
    with pytest.raises(StoreError, match="not a conversation node"):
        reader.load(store.put({"something": "else"}))
