"""The RunStore contract, run against every store implementation."""

from __future__ import annotations

from typing import Any

import pytest

from tether.durable import RunStore, validate_run_id
from tether.durable.store import SCHEMA_VERSION
from tether.errors import RunLockedError, StoreError
from tether.types import Message

from .conftest import corrupt_message


def head(next_seq: int, start_seq: int = 0, cycle: int = 0, rev: int = 1) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "rev": rev,
        "start_seq": start_seq,
        "next_seq": next_seq,
        "cursor": {"phase": "model", "cycle_index": cycle},
        "metrics": {"cycle_count": cycle},
        "state": {"k": "v"},
    }


def msg(text: str, role: str = "user") -> Message:
    return {"role": role, "content": [{"text": text}]}  # type: ignore[typeddict-item]


def test_unknown_run_is_none(store: RunStore) -> None:
    assert store.load("nope") is None
    assert store.head("nope") is None


def test_rows_append_and_head_replaces(store: RunStore) -> None:
    store.write("r1", head(2), [msg("a"), msg("b", "assistant")], {})
    store.write("r1", head(3, cycle=1, rev=2), [msg("c")], {})
    loaded = store.load("r1")
    assert loaded is not None
    assert [m["content"][0]["text"] for m in loaded.messages] == ["a", "b", "c"]  # type: ignore[typeddict-item]
    assert loaded.head["rev"] == 2 and loaded.head["cursor"]["cycle_index"] == 1
    assert store.head("r1") == loaded.head


def test_start_seq_hides_trimmed_rows(store: RunStore) -> None:
    store.write("r1", head(3), [msg("a"), msg("b"), msg("c")], {})
    store.write("r1", head(3, start_seq=2, rev=2), [], {})
    loaded = store.load("r1")
    assert loaded is not None and [m["content"][0]["text"] for m in loaded.messages] == ["c"]  # type: ignore[typeddict-item]


def test_results_belong_to_their_cycle(store: RunStore) -> None:
    result: Any = {"toolUseId": "t1", "status": "success", "content": [{"text": "ok"}]}
    store.write("r1", head(1, cycle=4), [msg("a")], {"t1": result})
    loaded = store.load("r1")
    assert loaded is not None and loaded.results == {"t1": result}
    store.write("r1", head(1, cycle=5, rev=2), [], {})
    loaded = store.load("r1")
    assert loaded is not None and loaded.results == {}


def test_bytes_survive_as_envelopes(store: RunStore) -> None:
    image: Any = {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00"}}}]}
    store.write("r1", head(1), [image], {})
    loaded = store.load("r1")
    assert loaded is not None
    assert loaded.messages[0]["content"][0]["image"]["source"]["bytes"] == b"\x89PNG\x00"  # type: ignore[typeddict-item]


def test_runs_are_separate(store: RunStore) -> None:
    store.write("a", head(1), [msg("for a")], {})
    store.write("b", head(1), [msg("for b")], {})
    loaded = store.load("b")
    assert loaded is not None and loaded.messages == [msg("for b")]


def test_lease_is_exclusive_and_released(store: RunStore) -> None:
    with store.lease("r1"):
        with pytest.raises(RunLockedError, match="r1"):
            with store.lease("r1"):
                pass
        with store.lease("other"):
            pass
    with store.lease("r1"):
        pass


def test_corrupt_message_row_names_run_and_step(store: RunStore) -> None:
    store.write("r1", head(2), [msg("a"), msg("b")], {})
    corrupt_message(store, "r1", 1, '{"role": "user", "content": [{"te')
    with pytest.raises(StoreError, match=r"'r1'.*seq 1"):
        store.load("r1")


def test_invalid_message_row_names_run_and_step(store: RunStore) -> None:
    store.write("r1", head(1), [msg("a")], {})
    corrupt_message(store, "r1", 0, '{"role": "robot", "content": []}')
    with pytest.raises(StoreError, match=r"'r1'.*seq 0"):
        store.load("r1")


def test_newer_head_schema_refused(store: RunStore) -> None:
    newer = head(1)
    newer["schema_version"] = SCHEMA_VERSION + 1
    store.write("r1", newer, [msg("a")], {})
    with pytest.raises(StoreError, match="newer"):
        store.load("r1")


@pytest.mark.parametrize("bad", ["", "../etc", "a/b", "x" * 129, "..", "sp ace", "nul\x00", 42, None])
def test_bad_run_ids_refused(store: RunStore, bad: Any) -> None:
    with pytest.raises(StoreError, match="run_id"):
        store.load(bad)
    with pytest.raises(StoreError, match="run_id"):
        store.write(bad, head(0), [], {})
    with pytest.raises(StoreError, match="run_id"):
        store.lease(bad).__enter__()


def test_good_run_ids_accepted() -> None:
    for good in ["trip-42", "a.b:c_d", "x" * 128]:
        assert validate_run_id(good) == good


def test_bytes_counter_counts_writes(store: RunStore) -> None:
    before = store.bytes_written
    store.write("r1", head(1), [msg("hello")], {})
    assert store.bytes_written > before
