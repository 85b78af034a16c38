"""The texts a scripted model reads from its conversation, for tests whose models answer from
their prompt (agent tools, nested runs)."""

from __future__ import annotations

from tether.types import Message


def first_user_text(messages: list[Message]) -> str:
    """The first text block of the first user message that has one (the task)."""
    return next(str(block["text"]) for m in messages if m["role"] == "user" for block in m["content"] if "text" in block)


def last_tool_text(messages: list[Message]) -> str:
    """The text of the last tool result (AssertionError when there is none)."""
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block:
                return str(block["toolResult"]["content"][0].get("text"))
    raise AssertionError("no tool result")
