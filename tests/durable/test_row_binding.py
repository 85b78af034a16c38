"""Sealed rows are bound to their place: the AES-GCM associated data covers the table, the run
id, the position (seq, cycle/toolUseId, step number) and the head's revision.

Each attack here loaded silently when the associated data was only the key id: a row of
another run spliced in, rows moved between positions, a run cloned under a new id, an old head
written back. Rows written before binding (version 1, a fixture written by that release) still
load, and keys still rotate.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tether.durable import AESGCMCipher, fork_run
from tether.durable.codec import decode_head, decode_messages, decode_step, encode_head
from tether.durable.crypto import RowPlace
from tether.durable.session import run_state_of
from tether.errors import StoreError

from .backends import Backend, backend
from .helpers import Plan, make_agent
from .helpers import calls_row as calls
from .helpers import head_row as head
from .helpers import user_row as msg

__all__ = ["backend"]

K1, K2 = b"\x01" * 32, b"\x02" * 16
V1_RUN = json.loads((Path(__file__).parent / "data" / "v1_sealed_run.json").read_text())
"""Every row of one encrypted run as Tether wrote it before rows were bound to their place
(commit 3005ca4: ``make_agent`` of ``helpers.py`` on an encrypted SQLiteStore, crashed in
tool call ``b`` of cycle 1, so the run is in its tools phase with a result row for ``a``)."""


def cipher(current: str = "k1", **options: Any) -> AESGCMCipher:
    return AESGCMCipher({"k1": K1, "k2": K2}, current=current, **options)


def result(ident: str, text: str) -> Any:
    return {"toolUseId": ident, "status": "success", "content": [{"text": text}]}


def step_row(number: int, row_head: dict[str, Any]) -> dict[str, Any]:
    return {
        "step": number,
        "position": "after_model",
        "cycle_index": 0,
        "seq": row_head["next_seq"],
        "message_count": row_head["next_seq"],
        "created_at": "2026-01-01T00:00:00Z",
        "head": row_head,
    }


def test_a_message_row_spliced_in_from_another_run_is_refused(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("A", head(2), [msg("a0"), msg("a1: transfer the money")], {})
    store.write("B", head(2), [msg("b0"), msg("b1")], {})
    backend.raw_set("messages", "B", 1, backend.raw_get("messages", "A", 1))  # same key, same seq
    with pytest.raises(StoreError, match=r"run 'B': messages seq 1 failed authentication.*moved from another run or position"):
        store.load("B")
    loaded = store.load("A")
    assert loaded is not None and loaded.messages[1] == msg("a1: transfer the money")


def test_rows_moved_within_a_run_are_refused(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    first = head(2, phase="tools")
    store.write("r", first, [msg("q"), calls("t1", "t2")], {"t1": result("t1", "one"), "t2": result("t2", "two")}, step=step_row(1, first))
    store.write("r", {**first, "rev": 2}, [], {}, step=step_row(2, {**first, "rev": 2}))
    swapped = {key: backend.raw_get("results", "r", key) for key in ((0, "t1"), (0, "t2"))}
    backend.raw_set("results", "r", (0, "t1"), swapped[(0, "t2")])
    with pytest.raises(StoreError, match=r"run 'r': results cycle 0 toolUseId 't(1|2)' failed authentication"):
        store.load("r")
    backend.raw_set("results", "r", (0, "t1"), swapped[(0, "t1")])
    store.write("r", head(2, cycle=5, rev=3, phase="tools"), [], {})  # cycle 5 calls t1 and t2 again
    backend.raw_set("results", "r", (5, "t1"), swapped[(0, "t1")])  # cycle 0's result row copied into cycle 5
    with pytest.raises(StoreError, match=r"run 'r': results cycle 5 toolUseId 't1' failed authentication"):
        store.load("r")
    store.write("r", {**first, "rev": 4}, [], {})
    backend.raw_set("steps", "r", 2, backend.raw_get("steps", "r", 1))  # step 1's row as step 2
    with pytest.raises(StoreError, match=r"run 'r': steps step 2 failed authentication"):
        store.history("r")
    backend.raw_set("messages", "r", 0, backend.raw_get("messages", "r", 1))  # seq 1's row as seq 0
    with pytest.raises(StoreError, match=r"run 'r': messages seq 0 failed authentication"):
        store.load("r")


def test_a_run_copied_under_a_new_id_does_not_load(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    make_agent(store, Plan())("go", run_id="orig")
    backend.clone("orig", "clone")
    for read in (store.load, store.head, store.history):
        with pytest.raises(StoreError, match=r"run 'clone': (head|steps step 1) failed authentication"):
            read("clone")
    with pytest.raises(StoreError, match=r"run 'clone': steps step 1 failed authentication"):
        store.load_at("clone", 1)
    summaries = {run.run_id: run for run in store.list_runs()}
    assert summaries["orig"].status == "finished" and summaries["clone"].status == "corrupt"
    assert "failed authentication" in (summaries["clone"].problem or "")


def test_an_old_head_written_back_is_refused_when_the_store_knows_the_revision(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("r", head(1, rev=1), [msg("approved: no")], {})
    old = backend.raw_get("head", "r")
    store.write("r", head(2, rev=2), [msg("approved: yes")], {})
    backend.raw_set("head", "r", None, old)  # rolled back: the old head is authentic, but stale
    # The store's own record of the current revision (the lead's rev column) is what catches it:
    with pytest.raises(StoreError, match=r"run 'r': head is at revision 1 but the store's current revision is 2: an older head"):
        decode_head("r", backend.raw_get("head", "r"), cipher(), rev=2)
    assert decode_head("r", old, cipher(), rev=1)["next_seq"] == 1
    assert json.loads(old)["rev"] == 1  # the revision in clear, for the store to read the place
    forged = {**json.loads(old), "rev": 2}  # claiming the current revision breaks the seal
    with pytest.raises(StoreError, match=r"run 'r': head failed authentication"):
        decode_head("r", json.dumps(forged), cipher(), rev=2)
    plain = encode_head(head(1, rev=1), None, None, run_id="r")
    with pytest.raises(StoreError, match="revision 1 but the store's current revision is 2"):
        decode_head("r", plain, None, rev=2)


def test_a_version_2_head_needs_its_revision() -> None:
    text = encode_head(head(0, rev=3), cipher(), None, run_id="r")
    envelope = json.loads(text)
    del envelope["rev"]
    with pytest.raises(StoreError, match=r"cannot verify the head row of run 'r' without its revision"):
        decode_head("r", json.dumps(envelope), cipher())
    assert decode_head("r", json.dumps(envelope), cipher(), rev=3)["rev"] == 3


def load_v1_run(backend: Backend, run_id: str = "r") -> None:
    """Put the fixture's rows (version 1, as the release before binding wrote them) into the storage."""
    backend.raw_set("head", run_id, None, V1_RUN["head"])
    for seq, text in V1_RUN["messages"]:
        backend.raw_set("messages", run_id, seq, text)
    for cycle, ident, text in V1_RUN["results"]:
        backend.raw_set("results", run_id, (cycle, ident), text)
    for number, text in V1_RUN["steps"]:
        backend.raw_set("steps", run_id, number, text)


def test_rows_sealed_before_binding_still_load_and_the_run_goes_on(backend: Backend) -> None:
    keys = {kid: bytes.fromhex(key) for kid, key in V1_RUN["key_hex"].items()}
    backend.make(cipher=AESGCMCipher(keys, current="k1")).write("other", head(0), [], {})  # the storage exists
    load_v1_run(backend)
    assert all("v" not in json.loads(text) for text in backend.rows("r"))
    store = backend.make(cipher=AESGCMCipher({**keys, "k2": K2}, current="k2"))  # rotated since
    loaded = store.load("r")
    assert loaded is not None and loaded.head["cursor"]["phase"] == "tools" and list(loaded.results) == ["a"]
    assert [s.position for s in store.history("r")] == ["turn_start", "after_model", "after_tools", "after_model"]
    assert store.load_at("r", 2).messages[-1]["role"] == "assistant"
    run_state_of(loaded)
    plan = Plan()
    assert str(make_agent(store, plan).resume("r")) == "done" and plan.log == ["r/b"]  # only the in-doubt call re-ran
    envelopes = [json.loads(text) for text in backend.rows("r")]
    assert sum(1 for e in envelopes if e.get("v") == 2 and e["kid"] == "k2") > 0  # new rows: bound, under the current key
    assert sum(1 for e in envelopes if "v" not in e and e["kid"] == "k1") == 4 + 1 + 4  # old messages, result, steps
    again = store.load("r")
    assert again is not None and again.head["cursor"]["phase"] == "idle"
    strict = backend.make(cipher=AESGCMCipher({**keys, "k2": K2}, current="k2", allow_unbound_rows=False))
    with pytest.raises(StoreError, match=r"run 'r': messages seq 0 is a version-1 row.*allow_unbound_rows=False"):
        strict.load("r")


def test_a_version_1_row_cannot_pose_as_version_2_or_the_reverse(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("r", head(1), [msg("bound")], {})
    envelope = json.loads(backend.raw_get("messages", "r", 0))
    del envelope["v"]  # a v2 ciphertext read as v1: other associated data
    backend.raw_set("messages", "r", 0, json.dumps(envelope))
    with pytest.raises(StoreError, match=r"messages seq 0 failed authentication with key id 'k1'"):
        store.load("r")
    envelope["v"] = 3
    backend.raw_set("messages", "r", 0, json.dumps(envelope))
    with pytest.raises(StoreError, match=r"messages seq 0 has an envelope of unknown version 3"):
        store.load("r")


def test_rotation_seals_new_rows_bound_under_the_new_key(backend: Backend) -> None:
    backend.make(cipher=cipher("k1")).write("r", head(1), [msg("old")], {})
    rotated = backend.make(cipher=cipher("k2"))
    rotated.write("r", head(2, cycle=1, rev=2), [msg("new")], {})
    loaded = rotated.load("r")
    assert loaded is not None and loaded.messages == [msg("old"), msg("new")]
    envelopes = [json.loads(text) for text in backend.rows("r")]
    assert sorted((e["kid"], e["v"]) for e in envelopes) == [("k1", 2), ("k2", 2), ("k2", 2)]
    with pytest.raises(StoreError, match=r"messages seq 0 is sealed with key id 'k1'"):
        backend.make(cipher=AESGCMCipher({"k2": K2}, current="k2")).load("r")


def test_a_fork_reseals_its_rows_under_its_own_id(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    make_agent(store, Plan())("go", run_id="src")
    fork_id = fork_run(store, "src", 4)  # after_model of the two-call cycle: messages, a head, a step
    loaded = store.load(fork_id)
    assert loaded is not None and loaded.messages == store.load_at("src", 4).messages
    assert len(backend.rows(fork_id)) >= 6
    message_rows = [(seq, backend.raw_get("messages", fork_id, seq)) for seq in range(len(loaded.messages))]
    assert decode_messages(fork_id, iter(message_rows), cipher()) == loaded.messages
    with pytest.raises(StoreError, match=r"run 'src': messages seq 0 failed authentication"):
        decode_messages("src", iter(message_rows), cipher())  # bound to the fork's id, not the source's
    step_text = backend.raw_get("steps", fork_id, 1)
    assert decode_step(fork_id, 1, step_text, cipher()).position == "forked"
    with pytest.raises(StoreError, match="failed authentication"):
        decode_step("src", 1, step_text, cipher())
    backend.clone("src", "copied-src")  # what copying the source's raw rows would give: refused
    with pytest.raises(StoreError, match=r"run 'copied-src': head failed authentication"):
        store.load("copied-src")


def test_the_associated_data_is_canonical_for_any_run_id() -> None:
    place = RowPlace("messages", 'a"],["b', 3)
    assert json.loads(place.canonical()) == ["messages", 'a"],["b', 3]
    assert RowPlace("messages", "a", 3).canonical() != RowPlace("messages", "a", "3").canonical()
    sealed = cipher().seal("{}", RowPlace("results", "r", "0/t1"))
    assert set(sealed) == {"enc", "v", "kid", "nonce", "ct"} and len(base64.b64decode(sealed["nonce"])) == 12
