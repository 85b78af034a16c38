"""Shared test helpers: tiny tools and message builders used across the suite."""

from __future__ import annotations

from typing import Any

import pytest

from tether import tool
from tether.tools.decorator import FunctionTool
from tether.types import Message

# Keeps the exit status right when Temporal's native runtime crashes at interpreter exit.
pytest_plugins = ["tests._exit_plugin"]


@pytest.fixture(autouse=True)
def _hermetic_tether_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default stores (``Agent(run_id=...)`` without a store, ``tether`` without --store) go to a temporary TETHER_HOME."""
    monkeypatch.setenv("TETHER_HOME", str(tmp_path_factory.mktemp("tether-home")))


def user(text: str) -> Message:
    """A user message with one text block."""
    return {"role": "user", "content": [{"text": text}]}


def assistant(text: str) -> Message:
    """An assistant message with one text block."""
    return {"role": "assistant", "content": [{"text": text}]}


def call(name: str, input: dict[str, Any] | None = None, tool_use_id: str | None = None) -> Message:
    """An assistant message calling one tool."""
    use: dict[str, Any] = {"name": name, "input": input or {}}
    if tool_use_id is not None:
        use["toolUseId"] = tool_use_id
    return {"role": "assistant", "content": [{"toolUse": use}]}  # type: ignore[typeddict-item]


def results_of(message: Message) -> list[dict[str, Any]]:
    """The toolResult bodies of a message, in order."""
    return [block["toolResult"] for block in message["content"] if "toolResult" in block]  # type: ignore[misc]


@pytest.fixture
def add_tool() -> FunctionTool:
    """``add(a, b)``: a trivial sync tool that runs on the event loop."""

    @tool(run_in_thread=False)
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return a + b

    return add
