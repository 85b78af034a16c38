"""Prompt normalization: str, content blocks, messages, None; errors name the offending part."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tether import CheckpointError, PromptError
from tether._prompt import normalize_prompt

from .conftest import assistant, user


def test_none_and_empty_list_continue() -> None:
    assert normalize_prompt(None).kind == "continue"
    assert normalize_prompt([]).kind == "continue"


def test_string_is_one_user_message() -> None:
    prompt = normalize_prompt("hello")
    assert prompt.kind == "messages"
    assert prompt.messages == [user("hello")]


def test_blocks_are_one_user_message() -> None:
    blocks: list[Any] = [
        {"text": "look"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}},
        {"document": {"format": "txt", "name": "notes", "source": {"bytes": b"hi"}}},
        {"cachePoint": {"type": "default"}},
    ]
    prompt = normalize_prompt(blocks)
    assert prompt.messages == [{"role": "user", "content": blocks}]
    assert prompt.messages[0]["content"] is not blocks


def test_messages_are_kept_in_order_and_copied() -> None:
    messages = [user("a"), assistant("b"), user("c")]
    prompt = normalize_prompt(messages)
    assert prompt.messages == messages
    assert prompt.messages[0] is not messages[0]
    prompt.messages[0]["content"].append({"text": "x"})
    assert messages[0] == user("a")


def test_a_single_message_dict_is_accepted() -> None:
    assert normalize_prompt(user("solo")).messages == [user("solo")]


@pytest.mark.parametrize(
    ("prompt", "names"),
    [
        (42, "got int"),
        (("a",), "got tuple"),
        ([{"text": "ok"}, {"text": 3}], "prompt[1].text"),
        ([{"text": "ok", "image": {}}], "prompt[0]"),
        ([{"video": {}}], "unknown content block kind 'video'"),
        (["just a string"], "prompt[0]"),
        ([user("a"), {"role": "system", "content": []}], "prompt[1].role"),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "meh", "content": []}}]}],
            "prompt[0].content[0].toolResult.status",
        ),
        ([{"role": "user", "content": [{"toolUse": {"name": "x", "input": {}}}]}], "prompt[0].content[0].toolUse.toolUseId"),
        ([{"role": "user", "content": [], "extra": 1}], "prompt[0].extra"),
        ([{"image": {"format": "png", "source": {"bytes": "not bytes"}}}], "prompt[0].image.source.bytes"),
    ],
)
def test_bad_prompts_name_the_offending_part(prompt: Any, names: str) -> None:
    with pytest.raises(PromptError) as info:
        normalize_prompt(prompt)
    assert names in str(info.value)


def test_control_blocks_are_recognized_and_not_mixed() -> None:
    responses = normalize_prompt([{"interruptResponse": {"interruptId": "i", "response": "yes"}}])
    assert responses.kind == "interrupt_responses"
    assert responses.responses == [{"interruptId": "i", "response": "yes"}]
    with pytest.raises(PromptError, match="cannot be mixed"):
        normalize_prompt([{"interruptResponse": {"interruptId": "i", "response": 1}}, {"text": "and"}])
    with pytest.raises(PromptError, match="only block"):
        normalize_prompt([{"checkpointResume": {"checkpoint": {}}}, {"text": "and"}])
    with pytest.raises(CheckpointError, match="checkpoint"):
        normalize_prompt([{"checkpointResume": {}}])
    with pytest.raises(PromptError, match=r"prompt\[0\]\.content\[0\]"):
        normalize_prompt([{"role": "user", "content": [{"interruptResponse": {"interruptId": "i", "response": 1}}]}])


@pytest.mark.parametrize(
    ("prompt", "where"),
    [
        ("hi \ud800", "prompt"),
        ([{"text": "ok"}, {"text": "\udfff"}], "prompt[1].text"),
        ([{"role": "user", "content": [{"text": "a\ud83d"}]}], "prompt[0].content[0].text"),
        ([{"interruptResponse": {"interruptId": "i1", "response": {"note": "\ud800"}}}], "prompt[0].interruptResponse.response.note"),
    ],
)
def test_a_lone_surrogate_is_a_prompt_error_naming_where_it_is(prompt: Any, where: str) -> None:
    with pytest.raises(PromptError, match=rf"^{re.escape(where)} holds a lone surrogate"):
        normalize_prompt(prompt)
    assert normalize_prompt("a \U0001f600 pair is fine").kind == "messages"
