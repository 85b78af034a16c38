"""Shared test helpers: tiny tools and message builders used across the suite."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tether import tool
from tether.tools.decorator import FunctionTool
from tether.types import Message

# Keeps the exit status right when Temporal's native runtime crashes at interpreter exit.
pytest_plugins = ["tests._exit_plugin"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", default=False, help="run the tests marked soak at their full size")


@pytest.fixture
def soak(request: pytest.FixtureRequest) -> bool:
    """True for a soak run (``--soak`` or ``TETHER_SOAK=1``): a test marked ``soak`` then runs
    its full size; otherwise (CI) its small size, which checks the same promise."""
    return bool(request.config.getoption("--soak")) or os.environ.get("TETHER_SOAK") == "1"


@pytest.fixture(autouse=True)
def _hermetic_tether_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default stores (``Agent(run_id=...)`` without a store, ``tether`` without --store) go to a temporary TETHER_HOME,
    and no terminal size is set."""
    monkeypatch.setenv("TETHER_HOME", str(tmp_path_factory.mktemp("tether-home")))
    # No terminal size: pytest-xdist's workers export COLUMNS=80 and LINES=24 (so may a shell),
    # which would make the CLI fit its tables to 80 columns instead of printing whole rows.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


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
