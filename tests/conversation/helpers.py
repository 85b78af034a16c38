"""Builders of conversations for the manager tests."""

from __future__ import annotations

import itertools
from typing import Any

from tether.types import Message


def turn(i: int, tools: int = 0) -> list[Message]:
    """One user turn: a prompt, ``tools`` tool round trips, and a final answer."""
    messages: list[Message] = [{"role": "user", "content": [{"text": f"q{i}"}]}]
    for k in range(tools):
        tid = f"t{i}_{k}"
        messages.append({"role": "assistant", "content": [{"toolUse": {"toolUseId": tid, "name": "f", "input": {}}}]})
        messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": tid, "status": "success", "content": [{"text": "r"}]}}]})
    messages.append({"role": "assistant", "content": [{"text": f"a{i}"}]})
    return messages


def conversation(shape: list[int]) -> list[Message]:
    """Turns with the given numbers of tool round trips."""
    out: list[Message] = []
    for i, tools in enumerate(shape):
        out.extend(turn(i, tools))
    return out


def assert_well_formed(messages: list[Message]) -> None:
    """Starts with a user message, roles alternate, every toolUse has its toolResult right after."""
    assert messages, "conversation is empty"
    assert messages[0]["role"] == "user"
    assert not any("toolResult" in block for block in messages[0]["content"]), "starts with an orphan toolResult"
    for prev, nxt in itertools.pairwise(messages):
        assert prev["role"] != nxt["role"], "roles do not alternate"
    for i, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if uses:
            results: list[Any] = (
                [b["toolResult"]["toolUseId"] for b in messages[i + 1]["content"] if "toolResult" in b] if i + 1 < len(messages) else []
            )
            assert results == uses, f"toolUse at {i} lost its result"
