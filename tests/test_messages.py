"""`tether._messages`: message validation with named paths, and decoding bytes envelopes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether._messages import (
    _check_json_message,
    _check_message,
    check_block,
    check_message,
    check_messages,
    decode_message_bytes,
    unvouched_messages,
    validate_messages,
    validate_system_prompt,
)
from tether.errors import ShapeError

from ._json_paths import json_paths

IMAGE = {"format": "png", "source": {"bytes": b"\x89PNG"}}
IMAGE_ENVELOPE = {"format": "png", "source": {"bytes": {"$b64": "iVBORw=="}}}


def test_valid_messages_pass_and_are_returned() -> None:
    messages = [
        {"role": "user", "content": [{"text": "hi"}, {"image": IMAGE}, {"image": IMAGE_ENVELOPE}, {"cachePoint": {"type": "default"}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": None}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "error", "content": [{"text": "x"}, {"json": [1]}]}}]},
        {"role": "assistant", "content": []},
    ]
    assert validate_messages(messages, ["messages"]) is messages
    assert validate_messages(messages[1:], ["m"], pure_json=True) == messages[1:]


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ("x", "messages must be a list"),
        ([1], "messages[0]: a message must be an object"),
        ([{"role": "user", "content": [{"text": "a"}]}, {"role": "bot", "content": []}], "messages[1].role"),
        ([{"role": "user", "content": [{"text": "a"}, {"text": "b", "x": 1}]}], "messages[0].content[1]: a content block"),
        ([{"role": "user", "content": [{"video": {}}]}], "messages[0].content[0]: unknown content block kind 'video'"),
        ([{"role": "user", "content": [{"checkpointResume": {}}]}], "prompt-only control block"),
        ([{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "notbytes"}}}]}], "content[0].image.source.bytes"),
        ([{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": {"$b64": "@@"}}}}]}], "image.source.bytes.$b64"),
        ([{"role": "user", "content": [{"document": {"format": "pdf", "source": {"bytes": b""}}}]}], "content[0].document.name"),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": [{"image": {"format": 1}}]}}]}],
            "content[0].toolResult.content[0].image.format",
        ),
        ([{"role": "assistant", "content": [{"reasoningContent": {"redactedContent": 5}}]}], "reasoningContent.redactedContent"),
        ([{"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "a", "signature": 1}}}]}], "signature"),
        ([{"role": "assistant", "content": [{"cachePoint": {"type": 1}}]}], "content[0].cachePoint.type"),
        ([{"role": "assistant", "content": [], "id": 1}], "messages[0].id: unexpected key"),
    ],
)
def test_invalid_messages_name_the_path(messages: Any, where: str) -> None:
    for pure_json in (False, True):
        with pytest.raises(ShapeError) as info:
            validate_messages(messages, ["messages"], pure_json=pure_json)
        assert where in str(info.value)


@pytest.mark.parametrize(
    ("message", "where"),
    [
        ({"role": "user", "content": [{"image": IMAGE}]}, "m[0].content[0].image.source.bytes: is not JSON (bytes)"),
        (
            {"role": "user", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {"s": {1}}}}]},
            "toolUse.input.s: is not JSON (set)",
        ),
        ({"role": "user", "content": ({"text": "x"},)}, "m[0].content"),
    ],
)
def test_pure_json_mode_refuses_what_memory_allows(message: dict[str, Any], where: str) -> None:
    with pytest.raises(ShapeError) as info:
        validate_messages([message], ["m"], pure_json=True)
    assert where in str(info.value)


def test_check_block_and_check_message_use_absolute_paths() -> None:
    with pytest.raises(ShapeError) as info:
        check_block({"toolUse": {"name": "n"}}, ["prompt", 2])
    assert info.value.path == ["prompt", 2, "toolUse", "toolUseId"]
    with pytest.raises(ShapeError) as info:
        check_message({"role": "user", "content": [{"text": "a"}, {"text": None}]}, ["x", 0])
    assert info.value.path == ["x", 0, "content", 1, "text"]


def test_system_prompt_validation() -> None:
    validate_system_prompt([{"text": "a"}, {"cachePoint": {"type": "default"}}], ["system_prompt"])
    for bad, where in [
        ("a", "system_prompt must be a list"),
        ([{"image": {}}], "system_prompt[0]"),
        ([{"text": 1}], "system_prompt[0].text"),
        ([{"cachePoint": 1}], "system_prompt[0].cachePoint"),
    ]:
        with pytest.raises(ShapeError) as info:
            validate_system_prompt(bad, ["system_prompt"])
        assert where in str(info.value)


def test_decode_message_bytes_decodes_only_bytes_positions() -> None:
    messages: list[Any] = [
        {
            "role": "user",
            "content": [
                {"image": {"format": "png", "source": {"bytes": {"$b64": "AAE="}}}},
                {"document": {"format": "txt", "name": "d", "source": {"bytes": {"$b64": "AAI="}}}},
                {"toolUse": {"toolUseId": "t", "name": "n", "input": {"$b64": "AAM="}}},
                {"text": "$b64"},
            ],
        },
        {"role": "assistant", "content": [{"reasoningContent": {"redactedContent": {"$b64": "AAQ="}}}]},
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t",
                        "status": "success",
                        "content": [{"json": {"$b64": "AAU="}}, {"image": {"format": "png", "source": {"bytes": {"$b64": "AAY="}}}}],
                    }
                }
            ],
        },
    ]
    decode_message_bytes(messages)
    assert messages[0]["content"][0]["image"]["source"]["bytes"] == b"\x00\x01"
    assert messages[0]["content"][1]["document"]["source"]["bytes"] == b"\x00\x02"
    assert messages[0]["content"][2]["toolUse"]["input"] == {"$b64": "AAM="}
    assert messages[1]["content"][0]["reasoningContent"]["redactedContent"] == b"\x00\x04"
    assert messages[2]["content"][0]["toolResult"]["content"][0] == {"json": {"$b64": "AAU="}}
    assert messages[2]["content"][0]["toolResult"]["content"][1]["image"]["source"]["bytes"] == b"\x00\x06"


def test_decode_message_bytes_reports_invalid_base64_with_its_path_and_skips_malformed_shapes() -> None:
    messages: list[Any] = [
        "junk",
        {"role": "user", "content": "junk"},
        {"role": "user", "content": ["junk", {"image": "junk"}, {"toolResult": {"content": ["junk"]}}]},
        {"role": "user", "content": [{"image": {"source": {"bytes": {"$b64": "*"}}}}]},
    ]
    with pytest.raises(ShapeError) as info:
        decode_message_bytes(messages, ["snapshot", "data", "messages"])
    assert info.value.path == ["snapshot", "data", "messages", 3, "content", 0, "image", "source", "bytes", "$b64"]
    assert "base64" in info.value.problem


# -- the fast check and the full one agree ----------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3))
json_value = st.recursive(
    json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=6
)
odd = st.one_of(
    json_value,
    st.binary(max_size=3),
    st.tuples(st.integers()),
    st.frozensets(st.integers(), max_size=2),
    st.just(float("nan")),
    st.builds(lambda: {1: "int key"}),
    st.sampled_from(["user", "assistant", "success", "text", "json", "image"]),
)
text_block = st.builds(lambda t: {"text": t}, st.text(max_size=3))
image = st.builds(
    lambda b: {"format": "png", "source": {"bytes": b}}, st.one_of(st.binary(max_size=3), st.builds(lambda: {"$b64": "AAE="}))
)
item = st.one_of(text_block, st.builds(lambda j: {"json": j}, json_value), st.builds(lambda i: {"image": i}, image))
valid_block = st.one_of(
    text_block,
    st.builds(lambda i, n, j: {"toolUse": {"toolUseId": i, "name": n, "input": j}}, st.text(max_size=3), st.text(max_size=3), json_value),
    st.builds(
        lambda i, s, c: {"toolResult": {"toolUseId": i, "status": s, "content": c}},
        st.text(max_size=3),
        st.sampled_from(["success", "error"]),
        st.lists(item, max_size=3),
    ),
    st.builds(lambda i: {"image": i}, image),
    st.builds(lambda: {"cachePoint": {"type": "default"}}),
)
valid_message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.lists(valid_block, max_size=3)})


@st.composite
def messages_with_one_flaw_each(draw: st.DrawFn) -> list[Any]:
    """Valid messages, each one maybe changed at one random place (replaced, deleted or added to)."""
    messages: list[Any] = draw(st.lists(valid_message, max_size=4))
    for index in range(len(messages)):
        if not draw(st.booleans()):
            continue
        location = draw(st.sampled_from(json_paths(messages[index])))
        if not location:
            messages[index] = draw(odd)
            continue
        parent: Any = messages[index]
        for part in location[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[location[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "text", "json", "toolUse"]))] = draw(odd)
        else:
            parent[location[-1]] = draw(odd)
    return messages


def _accepted(check: Any, value: Any) -> bool:
    try:
        check(value)
    except ShapeError:
        return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages_with_one_flaw_each())
def test_what_the_fast_check_vouches_for_the_full_check_accepts(messages: list[Any]) -> None:
    for pure_json, check in ((False, _check_message), (True, _check_json_message)):
        vouched = set(range(len(messages))) - set(unvouched_messages(messages, pure_json))
        for index in vouched:
            assert _accepted(check, messages[index]), (pure_json, messages[index])
        try:
            found = check_messages(messages, ["m"], pure_json=pure_json)
        except ShapeError as exc:
            first_bad = next(i for i, m in enumerate(messages) if not _accepted(check, m))
            assert str(exc).startswith(f"m[{first_bad}]")
        else:
            assert all(_accepted(check, m) for m in messages)
            assert found == (len(vouched) < len(messages))


def test_check_messages_says_whether_bytes_positions_may_hold_envelopes() -> None:
    plain = [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": [{"json": 1}, {"text": "x"}]}}]},
    ]
    assert check_messages(plain, ["m"]) is False
    assert check_messages(plain, ["m"], pure_json=True) is False
    assert check_messages([*plain, {"role": "user", "content": [{"image": IMAGE_ENVELOPE}]}], ["m"]) is True


def test_the_fast_check_survives_circular_tool_input() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    messages = [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": loop}}]}]
    validate_messages(messages, ["m"])  # shapes only: fine
    with pytest.raises(ShapeError, match=r"m\[0\]\.content\[0\]\.toolUse"):
        validate_messages(messages, ["m"], pure_json=True)


TEMPLATE: list[dict[str, Any]] = [
    {"role": "user", "content": [{"text": "hi"}, {"image": {"format": "png", "source": {"bytes": {"$b64": "AAE="}}}}]},
    {"role": "assistant", "content": [{"text": "ok"}, {"toolUse": {"toolUseId": "t", "name": "n", "input": {"a": [1, 2.5]}}}]},
    {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": [{"text": "x"}, {"json": {"b": None}}]}}],
    },
]
FLAWS: list[Any] = [b"x", 1, None, (1,), frozenset({1}), float("nan"), "user", {"k": 1}, [], {1: 2}]


def test_every_single_flaw_in_a_template_is_left_to_the_full_check_or_is_harmless() -> None:
    """Exhaustive over the template's places: replace with each flaw, delete, or add a key."""
    cases: list[Any] = []
    for index, message in enumerate(TEMPLATE):
        for location in json_paths(message):
            for flaw in [*FLAWS, "delete", "add"]:
                changed: Any = copy.deepcopy(message)
                if not location:
                    cases.append(flaw)
                    continue
                parent = changed
                for part in location[:-1]:
                    parent = parent[part]
                if flaw == "delete":
                    if not isinstance(parent, dict):
                        continue
                    del parent[location[-1]]
                elif flaw == "add":
                    target = parent[location[-1]]
                    if not isinstance(target, dict):
                        continue
                    target["extra"] = frozenset({1})
                else:
                    parent[location[-1]] = flaw
                cases.append(changed)
        assert index < len(TEMPLATE)
    assert len(cases) > 300
    for pure_json, check in ((False, _check_message), (True, _check_json_message)):
        vouched = set(range(len(cases))) - set(unvouched_messages(cases, pure_json))
        assert vouched, "some flaws are harmless (e.g. a text replaced by another string)"
        for index in vouched:
            assert _accepted(check, cases[index]), (pure_json, cases[index])
