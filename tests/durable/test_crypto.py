"""Encryption at rest (AES-GCM, a key id per row) on every store: nothing readable in the raw
storage, rotation, unknown keys and tampering refused with errors naming run, row and key."""

from __future__ import annotations

import base64
import json
import sys
import uuid
from typing import Any

import pytest

from tether import Agent
from tether.durable.crypto import AESGCMCipher, is_envelope
from tether.errors import ConfigurationError, StoreError
from tether.models import ScriptedModel
from tether.types import Message

from .backends import Backend, backend
from .conftest import corrupt_message
from .helpers import Crash, Plan, make_agent

__all__ = ["backend"]

K1, K2 = b"\x01" * 32, b"\x02" * 16


def cipher(current: str = "k1", **keys: bytes) -> AESGCMCipher:
    return AESGCMCipher(keys or {"k1": K1, "k2": K2}, current=current)


def head(next_seq: int, cycle: int = 0, rev: int = 1, **state: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "rev": rev,
        "start_seq": 0,
        "next_seq": next_seq,
        "cursor": {"phase": "model", "cycle_index": cycle},
        "metrics": {},
        "state": state,
    }


def msg(text: str) -> Message:
    return {"role": "user", "content": [{"text": text}]}


def test_rows_are_sealed_and_read_back(backend: Backend) -> None:
    secret = f"plaintext-{uuid.uuid4().hex}"
    store = backend.make(cipher=cipher())
    result: Any = {"toolUseId": "t1", "status": "success", "content": [{"text": secret}]}
    image: Any = {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": b"\x89PNG" + secret.encode()}}}]}
    store.write("r1", head(2, note=secret), [msg(secret), image], {"t1": result})
    loaded = store.load("r1")
    assert loaded is not None
    assert loaded.messages == [msg(secret), image] and loaded.results == {"t1": result}
    assert loaded.head["state"] == {"note": secret}
    rows = backend.rows("r1")
    assert len(rows) == 4
    for text in rows:
        row = json.loads(text)
        assert is_envelope(row) and row["enc"] == "aesgcm" and row["v"] == 2 and row["kid"] == "k1"
        assert set(row) == {"enc", "v", "kid", "nonce", "ct"} | ({"rev"} if text == rows[0] else set())  # the head carries its rev
    assert secret.encode() not in backend.raw_bytes()
    backend.make().write("r2", head(1), [msg(secret)], {})  # control: an unencrypted store does show it
    assert secret.encode() in backend.raw_bytes()


def test_each_row_gets_its_own_nonce(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("r1", head(2), [msg("same"), msg("same")], {})
    envelopes = [json.loads(text) for text in backend.rows("r1")]
    assert len({e["nonce"] for e in envelopes}) == len(envelopes) == 3
    assert envelopes[1]["ct"] != envelopes[2]["ct"]


def test_rotation_keeps_old_rows_readable(backend: Backend) -> None:
    backend.make(cipher=cipher("k1")).write("r1", head(1), [msg("old")], {})
    rotated = backend.make(cipher=cipher("k2"))
    rotated.write("r1", head(2, cycle=1, rev=2), [msg("new")], {})
    loaded = rotated.load("r1")
    assert loaded is not None and loaded.messages == [msg("old"), msg("new")]
    kids = sorted(json.loads(text)["kid"] for text in backend.rows("r1"))
    assert kids == ["k1", "k2", "k2"]  # message 0 under k1; message 1 and the new head under k2


def test_unknown_key_id_names_run_row_and_key(backend: Backend) -> None:
    backend.make(cipher=cipher("k1")).write("r1", head(1), [msg("old")], {})
    backend.make(cipher=cipher("k2")).write("r1", head(1, rev=2), [], {})  # the head is now under k2
    only_k2 = backend.make(cipher=AESGCMCipher({"k2": K2}, current="k2"))
    assert only_k2.head("r1") is not None
    with pytest.raises(StoreError, match=r"run 'r1': messages seq 0 is sealed with key id 'k1'"):
        only_k2.load("r1")


def test_tampered_ciphertext_is_refused(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("r1", head(2), [msg("a"), msg("b")], {})
    envelope = json.loads(backend.rows("r1")[2])  # message seq 1
    ct = bytearray(base64.b64decode(envelope["ct"]))
    ct[0] ^= 1
    envelope["ct"] = base64.b64encode(bytes(ct)).decode()
    corrupt_message(store, "r1", 1, json.dumps(envelope))
    with pytest.raises(StoreError, match=r"run 'r1': messages seq 1 failed authentication with key id 'k1'.*tampered"):
        store.load("r1")


def test_a_row_cannot_claim_another_key(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    store.write("r1", head(1), [msg("a")], {})
    envelope = json.loads(backend.rows("r1")[1])
    envelope["kid"] = "k2"  # the key id is authenticated data
    corrupt_message(store, "r1", 0, json.dumps(envelope))
    with pytest.raises(StoreError, match="messages seq 0 failed authentication with key id 'k2'"):
        store.load("r1")


def test_plaintext_rows_need_allow_plaintext(backend: Backend) -> None:
    backend.make().write("r1", head(1), [msg("written before encryption")], {})
    with pytest.raises(StoreError, match=r"run 'r1': head is not encrypted.*allow_plaintext=True"):
        backend.make(cipher=cipher()).load("r1")
    migrating = backend.make(cipher=AESGCMCipher({"k1": K1}, current="k1", allow_plaintext=True))
    loaded = migrating.load("r1")
    assert loaded is not None and loaded.messages == [msg("written before encryption")]


def test_encrypted_rows_without_a_cipher_are_refused(backend: Backend) -> None:
    backend.make(cipher=cipher()).write("r1", head(1), [msg("a")], {})
    with pytest.raises(StoreError, match=r"run 'r1': head is encrypted \(key id 'k1'\) but the store has no cipher"):
        backend.make().load("r1")


def test_agent_resumes_an_encrypted_run(backend: Backend) -> None:
    plan = Plan(tool_after_effect=1)
    with pytest.raises(Crash):
        make_agent(backend.make(cipher=cipher()), plan)("go", run_id="r")
    resumed = make_agent(backend.make(cipher=cipher("k2")), plan)
    result = resumed.resume("r")
    assert str(result) == "done" and result.stop_reason == "end_turn"
    assert sorted(plan.log) == ["r/a", "r/a", "r/b", "r/tooluse_1_0"]  # only the in-doubt call re-ran
    rows = backend.rows("r")
    assert len(rows) > 10 and all(is_envelope(json.loads(text)) for text in rows)  # steps and tool results too


def test_fresh_agent_sees_an_encrypted_conversation(backend: Backend) -> None:
    store = backend.make(cipher=cipher())
    Agent(model=ScriptedModel(["one"]), store=store)("first", run_id="chat")
    fresh = Agent(model=ScriptedModel(["two"]), store=backend.make(cipher=cipher("k2")))
    assert str(fresh("second", run_id="chat")) == "two"
    assert [m["content"][0]["text"] for m in fresh.messages] == ["first", "one", "second", "two"]  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("keys", "current", "match"),
    [
        ({}, "k1", "non-empty mapping"),
        ({"k1": b"short"}, "k1", r"keys\['k1'\] must be 16, 24 or 32 raw bytes \(got 5\)"),
        ({"k1": "a string key of 32 characters!!"}, "k1", r"keys\['k1'\] must be 16, 24 or 32 raw bytes \(got str\)"),
        ({"": K1}, "", "key id ''"),
        ({"k1": K1}, "k9", r"current='k9' is not one of the key ids \['k1'\]"),
    ],
)
def test_bad_cipher_configuration(keys: Any, current: str, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        AESGCMCipher(keys, current=current)


def test_missing_cryptography_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(ConfigurationError, match=r"tether\[crypto\]"):
        AESGCMCipher({"k1": K1}, current="k1")
