"""`tether._json`: JSON checks with paths, fast copies, and the bytes envelope."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tether._json import (
    copy_json,
    decode_base64,
    decode_bytes,
    dumps,
    encode,
    ensure_json,
    find_non_json,
    freeze,
    is_json,
    may_hold_bytes,
    strict_copy,
    thaw,
)
from tether.errors import SnapshotError, StateError


class Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -5, 2**70, 1.5, -0.0, "", "ü", [], {}, {"a": [1, {"b": None}]}, [[[]]]],
)
def test_json_values_are_json(value: Any) -> None:
    assert is_json(value)
    copy = copy_json(value)
    assert copy == value and json.dumps(copy) == json.dumps(value)


@pytest.mark.parametrize(
    "value",
    [b"x", (1,), {1, 2}, {1: "a"}, float("nan"), float("inf"), object(), Str("s"), {"a": [b"x"]}, bytearray(b"")],
)
def test_non_json_values_are_not(value: Any) -> None:
    assert not is_json(value)


def test_deep_and_circular_values_are_not_json_and_never_raise() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    assert not is_json(deep)
    loop: list[Any] = []
    loop.append(loop)
    assert not is_json(loop)
    assert find_non_json(loop, ["x"]) == (["x", 0], "circular reference")
    assert find_non_json(deep, ["x"]) == (["x"], "nested too deeply")


def test_copies_share_nothing() -> None:
    value = {"a": [1, {"b": "c"}]}
    for copy in (copy_json(value), encode(value), strict_copy(value, "v", SnapshotError), thaw(freeze(value))):
        assert copy == value
        copy["a"][1]["b"] = "changed"
        assert value["a"][1]["b"] == "c"


def test_encode_turns_bytes_into_envelopes_anywhere() -> None:
    assert encode({"x": [b"\x00\xff"]}) == {"x": [{"$b64": "AP8="}]}
    assert json.loads(dumps({"x": b"hi"})) == {"x": {"$b64": "aGk="}}
    assert encode((1, 2)) == [1, 2]


def test_copy_json_refuses_bytes_and_normalizes_like_json() -> None:
    with pytest.raises(TypeError):
        copy_json({"x": b"raw"})
    with pytest.raises(ValueError):
        copy_json(float("nan"))
    assert copy_json({1: (2, 3)}) == {"1": [2, 3]}


@pytest.mark.parametrize(
    ("value", "message", "json_module_refuses"),
    [
        ({"a": {"b": [0, b"x"]}}, "v.a.b[1] is not JSON (bytes)", True),
        ([float("-inf")], "v[0] is not JSON (non-finite float)", True),
        ({"a": {2: 1}}, "v.a[2] is not JSON (non-string key int)", False),
        ({"t": (1,)}, "v.t is not JSON (tuple)", False),
    ],
)
def test_strict_copy_and_ensure_json_name_the_path(value: Any, message: str, json_module_refuses: bool) -> None:
    with pytest.raises(SnapshotError) as info:
        strict_copy(value, "v", SnapshotError)
    assert message in str(info.value)
    if json_module_refuses:  # ensure_json is lenient where json itself is (tuples, int keys)
        with pytest.raises(StateError) as state_info:
            ensure_json(value, "v")
        assert message in str(state_info.value)
    else:
        assert ensure_json(value, "v") == json.loads(json.dumps(value))


def test_ensure_json_returns_a_copy() -> None:
    value = {"k": [1]}
    copy = ensure_json(value, "state")
    assert copy == value and copy is not value


@pytest.mark.parametrize("raw", [b"", b"a", b"ab", b"abc", bytes(range(256))])
def test_envelopes_round_trip(raw: bytes) -> None:
    envelope = encode(raw)
    assert envelope == {"$b64": base64.b64encode(raw).decode()}
    assert decode_bytes(envelope) == raw
    assert decode_base64(envelope["$b64"]) == raw


@pytest.mark.parametrize("bad", ["!", "QQ", "QQ=", "QR==", "QQ==\n", " QQ==", "ü", "Q===", "QQ==QQ=="])
def test_invalid_or_non_canonical_base64_raises(bad: str) -> None:
    with pytest.raises(ValueError, match="base64"):
        decode_bytes({"$b64": bad})


def test_decode_bytes_passes_bytes_and_ignores_other_values() -> None:
    assert decode_bytes(b"x") == b"x"
    assert decode_bytes(bytearray(b"y")) == b"y"
    assert decode_bytes({"$b64": 1}) is None
    assert decode_bytes({"$b64": "", "other": 1}) is None
    assert decode_bytes("QQ==") is None


def test_may_hold_bytes_scans_the_frozen_image() -> None:
    assert not may_hold_bytes(freeze({"a": ["text", 1]}))
    assert may_hold_bytes(freeze({"a": [{"$b64": "QQ=="}]}))
    assert may_hold_bytes(freeze({"t": "mentions $b64 in text"}))  # a false positive is allowed, never a false negative
