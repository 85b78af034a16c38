"""`tether._messages`: message validation with named paths, and decoding bytes envelopes."""

from __future__ import annotations

from typing import Any

import pytest

from tether._messages import (
    _Invalid,
    check_block,
    check_message,
    decode_message_bytes,
    validate_messages,
    validate_system_prompt,
)
from tether.errors import ConfigurationError, SnapshotError

IMAGE = {"format": "png", "source": {"bytes": b"\x89PNG"}}
IMAGE_ENVELOPE = {"format": "png", "source": {"bytes": {"$b64": "iVBORw=="}}}


def test_valid_messages_pass_and_are_returned() -> None:
    messages = [
        {"role": "user", "content": [{"text": "hi"}, {"image": IMAGE}, {"image": IMAGE_ENVELOPE}, {"cachePoint": {"type": "default"}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": None}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "error", "content": [{"text": "x"}, {"json": [1]}]}}]},
        {"role": "assistant", "content": []},
    ]
    assert validate_messages(messages, ["messages"], ConfigurationError) is messages
    assert validate_messages(messages[1:], ["m"], ConfigurationError, pure_json=True) == messages[1:]


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
        with pytest.raises(ConfigurationError) as info:
            validate_messages(messages, ["messages"], ConfigurationError, pure_json=pure_json)
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
    with pytest.raises(SnapshotError) as info:
        validate_messages([message], ["m"], SnapshotError, pure_json=True)
    assert where in str(info.value)


def test_check_block_and_check_message_use_absolute_paths() -> None:
    with pytest.raises(_Invalid) as info:
        check_block({"toolUse": {"name": "n"}}, ["prompt", 2])
    assert info.value.path == ["prompt", 2, "toolUse", "toolUseId"]
    with pytest.raises(_Invalid) as info:
        check_message({"role": "user", "content": [{"text": "a"}, {"text": None}]}, ["x", 0])
    assert info.value.path == ["x", 0, "content", 1, "text"]


def test_system_prompt_validation() -> None:
    validate_system_prompt([{"text": "a"}, {"cachePoint": {"type": "default"}}], ["system_prompt"], SnapshotError)
    for bad, where in [
        ("a", "system_prompt must be a list"),
        ([{"image": {}}], "system_prompt[0]"),
        ([{"text": 1}], "system_prompt[0].text"),
        ([{"cachePoint": 1}], "system_prompt[0].cachePoint"),
    ]:
        with pytest.raises(SnapshotError) as info:
            validate_system_prompt(bad, ["system_prompt"], SnapshotError)
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
    with pytest.raises(_Invalid) as info:
        decode_message_bytes(messages, ["snapshot", "data", "messages"])
    assert info.value.path == ["snapshot", "data", "messages", 3, "content", 0, "image", "source", "bytes", "$b64"]
    assert "base64" in info.value.problem
