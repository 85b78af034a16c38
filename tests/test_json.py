"""`tether._json`: JSON checks with paths, fast copies, and the bytes envelope."""

from __future__ import annotations

import base64
import gc
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether._json import (
    _compact_encoder,
    checked_json_copy,
    decode_base64,
    decode_bytes,
    dump_json,
    dumps,
    dumps_compact,
    find_non_json,
    freeze,
    is_json,
    json_copy,
    json_roundtrip_copy,
    may_hold_bytes,
    may_hold_infinity,
    parse_json,
    thaw,
)
from tether.errors import ShapeError, TetherError


class Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -5, 2**70, 1.5, -0.0, "", "ü", [], {}, {"a": [1, {"b": None}]}, [[[]]]],
)
def test_json_values_are_json(value: Any) -> None:
    assert is_json(value)
    copy = json_roundtrip_copy(value, "v")
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
    for copy in (json_roundtrip_copy(value, "v"), json_copy(value), checked_json_copy(value, "v"), thaw(freeze(value))):
        assert copy == value
        copy["a"][1]["b"] = "changed"
        assert value["a"][1]["b"] == "c"


def test_json_copy_turns_bytes_into_envelopes_anywhere() -> None:
    assert json_copy({"x": [b"\x00\xff"]}) == {"x": [{"$b64": "AP8="}]}
    assert json.loads(dumps({"x": b"hi"})) == {"x": {"$b64": "aGk="}}
    assert json_copy((1, 2)) == [1, 2]


def test_json_copy_names_the_path_of_what_json_cannot_write() -> None:
    with pytest.raises(ShapeError) as info:
        json_copy({"a": [1, {2, 3}]}, ["data", "x"])
    assert str(info.value) == "data.x.a[1] is not JSON (set)"
    assert (info.value.path, info.value.problem) == (["data", "x", "a", 1], "is not JSON (set)")
    with pytest.raises(ShapeError, match=r"^v is not JSON \(non-finite float\)$"):
        json_copy(float("nan"), "v")


def test_json_roundtrip_copy_refuses_bytes_and_normalizes_like_json() -> None:
    with pytest.raises(ShapeError):
        json_roundtrip_copy({"x": b"raw"}, "v")
    with pytest.raises(ValueError):  # a ShapeError is a ValueError
        json_roundtrip_copy(float("nan"), "v")
    assert json_roundtrip_copy({1: (2, 3)}, "v") == {"1": [2, 3]}


def test_shape_error_is_a_tether_value_error_worded_path_then_problem() -> None:
    error = ShapeError(["m", 0, "role"], "must be 'user' or 'assistant'")
    assert isinstance(error, TetherError) and isinstance(error, ValueError)
    assert str(error) == "m[0].role: must be 'user' or 'assistant'"
    assert str(ShapeError(["role"], "is missing").under(["m", 2])) == "m[2].role: is missing"


@pytest.mark.parametrize(
    ("value", "message", "json_module_refuses"),
    [
        ({"a": {"b": [0, b"x"]}}, "v.a.b[1] is not JSON (bytes)", True),
        ([float("-inf")], "v[0] is not JSON (non-finite float)", True),
        ({"a": {2: 1}}, "v.a[2] is not JSON (non-string key int)", False),
        ({"t": (1,)}, "v.t is not JSON (tuple)", False),
    ],
)
def test_checked_json_copy_and_json_roundtrip_copy_name_the_path(value: Any, message: str, json_module_refuses: bool) -> None:
    with pytest.raises(ShapeError) as info:
        checked_json_copy(value, "v")
    assert message in str(info.value)
    if json_module_refuses:  # json_roundtrip_copy is lenient where json itself is (tuples, int keys)
        with pytest.raises(ShapeError) as state_info:
            json_roundtrip_copy(value, "v")
        assert message in str(state_info.value)
    else:
        assert json_roundtrip_copy(value, "v") == json.loads(json.dumps(value))


def test_json_roundtrip_copy_returns_a_copy() -> None:
    value = {"k": [1]}
    copy = json_roundtrip_copy(value, "state")
    assert copy == value and copy is not value


@pytest.mark.parametrize("raw", [b"", b"a", b"ab", b"abc", bytes(range(256))])
def test_envelopes_round_trip(raw: bytes) -> None:
    envelope = json_copy(raw)
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


# -- JSON text: dump_json / parse_json --------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, None, True, "ü✓"]}, [], {}, 2**80, -0.0, 1e16, 5e-324, "\x00\u2028"],
)
def test_dump_json_and_parse_json_round_trip(value: Any) -> None:
    text = dump_json(value)
    assert isinstance(text, bytes)
    assert json.loads(text) == value
    assert parse_json(text) == value
    assert parse_json(text.decode()) == value


def test_dump_json_writes_lone_surrogates_with_escapes_and_they_parse_back() -> None:
    value = {"k": "a\ud800b"}
    text = dump_json(value)
    assert text == b'{"k":"a\\ud800b"}'
    assert parse_json(text) == value


def test_parse_json_falls_back_to_json_for_deep_nesting_and_utf16() -> None:
    deep = "[" * 500 + "]" * 500
    parsed = parse_json(deep)
    for _ in range(499):
        parsed = parsed[0]
    assert parsed == []
    assert parse_json('{"a": [1]}'.encode("utf-16")) == {"a": [1]}


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "{", "[1] x", "", "\xff", b"\xff"])
def test_parse_json_refuses_non_json(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        parse_json(text)


def test_parse_json_gives_exact_types_and_inf_for_overflowing_numbers() -> None:
    value = parse_json('{"a": [1, 1.5, "s", true, null, {}], "big": 1e400, "neg": -1e999}')
    assert [type(item) for item in value["a"]] == [int, float, str, bool, type(None), dict]
    assert value["big"] == float("inf") and value["neg"] == float("-inf")
    assert not is_json(value)


def test_may_hold_infinity_never_misses_and_ignores_common_values() -> None:
    assert may_hold_infinity(freeze({"a": [1.0, float("inf")]}))
    assert may_hold_infinity(freeze([-float("inf")]))
    assert may_hold_infinity(freeze(parse_json('{"x": {"y": [2e308]}}')))
    common = {"f": [0.0, 1.0, -1.0, 0.5, 21.5, 1e300, -1e-300], "s": "\x00\x00😀 ünï", "i": [0, 2**70, -(2**200)]}
    assert not may_hold_infinity(freeze(common))


@pytest.mark.parametrize("enabled", [True, False])
def test_large_parses_leave_the_garbage_collector_as_they_found_it(enabled: bool) -> None:
    big = json.dumps({"messages": [{"text": "x" * 100, "n": i} for i in range(1000)]})
    assert len(big) > 64 * 1024
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert len(parse_json(big)["messages"]) == 1000
        assert len(thaw(freeze(parse_json(big)))["messages"]) == 1000
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text() | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
def test_dumps_compact_writes_what_the_compact_encoder_writes(value: Any) -> None:
    """The shared C encoder of dumps_compact writes exactly JSONEncoder.encode's text (bytes as envelopes)."""
    assert dumps_compact(value) == _compact_encoder.encode(value)


def test_dumps_compact_raises_what_the_compact_encoder_raises() -> None:
    circular: list[Any] = [1]
    circular.append({"a": circular})
    for bad, error, match in [
        (circular, ValueError, "Circular reference"),
        ({"a": [float("nan")]}, ValueError, "Out of range float"),
        ({"a": {1, 2}}, TypeError, "set"),
    ]:
        with pytest.raises(error, match=match):
            dumps_compact(bad)
    assert dumps_compact([circular[0], {"b": b"\x00"}]) == '[1,{"b":{"$b64":"AA=="}}]'  # no marker left behind
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        dumps_compact(deep)
