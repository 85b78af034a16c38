"""The exception hierarchy, and bad input across the core raising TetherErrors that name the field."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import tether
from tether import errors
from tether.errors import json_path


def test_every_error_is_a_tether_error() -> None:
    classes = [obj for _, obj in inspect.getmembers(errors, inspect.isclass) if issubclass(obj, BaseException)]
    assert len(classes) >= 15
    for cls in classes:
        assert issubclass(cls, tether.TetherError), cls


def test_value_errors_are_catchable_as_value_error() -> None:
    for cls in (tether.ConfigurationError, tether.StateError, tether.PromptError, tether.SnapshotError, tether.CheckpointError):
        assert issubclass(cls, ValueError)


def test_model_error_family() -> None:
    for cls in (
        tether.ModelThrottledError,
        tether.ContextWindowOverflowError,
        tether.ModelAuthError,
        tether.ModelResponseError,
        tether.ScriptExhaustedError,
    ):
        assert issubclass(cls, tether.ModelError)
    assert not issubclass(tether.ContextWindowExhaustedError, tether.ModelError)


def test_throttled_error_carries_retry_after() -> None:
    assert tether.ModelThrottledError().retry_after is None
    error = tether.ModelThrottledError("rate limited", retry_after=2.5)
    assert error.retry_after == 2.5 and str(error) == "rate limited"


def test_snapshot_exception_alias() -> None:
    assert tether.SnapshotException is tether.SnapshotError


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        ([], "<root>"),
        (["state"], "state"),
        (["data", "messages", 3, "content", 0], "data.messages[3].content[0]"),
        ([0, "x"], "[0].x"),
    ],
)
def test_json_path(path: list[Any], rendered: str) -> None:
    assert json_path(path) == rendered


@pytest.mark.parametrize(
    ("build", "error", "names"),
    [
        (lambda: tether.Agent(state={"k": object()}), tether.StateError, "k"),
        (lambda: tether.Agent().state.set("when", {1, 2}), tether.StateError, "when"),
        (lambda: tether.Agent(messages=[{"role": "user", "content": "text"}]), tether.ConfigurationError, "messages[0].content"),
        (lambda: tether.Agent(system_prompt=[{"txt": "x"}]), tether.ConfigurationError, "system_prompt[0]"),
        (lambda: tether.Limits(max_cycles=0), tether.ConfigurationError, "max_cycles"),
        (lambda: tether.Limits(max_tokens=-1), tether.ConfigurationError, "max_tokens"),
        (lambda: tether.RetryPolicy(max_attempts=0), tether.ConfigurationError, "max_attempts"),
        (lambda: tether.RetryPolicy(jitter=2), tether.ConfigurationError, "jitter"),
        (lambda: tether.SlidingWindowConversationManager(window_size=1), tether.ConfigurationError, "window_size"),
        (lambda: tether.SummarizingConversationManager(summary_ratio=1.5), tether.ConfigurationError, "summary_ratio"),
        (lambda: tether.SummarizingConversationManager(preserve_recent_messages=0), tether.ConfigurationError, "preserve_recent_messages"),
        (lambda: tether.tool(name="bad name")(lambda: None), tether.ToolError, "bad name"),
        (lambda: tether.Agent(model=tether.ScriptedModel([]))([{"text": 1}]), tether.PromptError, "prompt[0].text"),
        (lambda: tether.Agent(model=tether.ScriptedModel([]))("hi"), tether.ScriptExhaustedError, "ScriptedModel"),
    ],
)
def test_bad_input_raises_a_tether_error_naming_the_field(build: Any, error: type[Exception], names: str) -> None:
    with pytest.raises(error) as info:
        build()
    assert isinstance(info.value, tether.TetherError)
    assert names in str(info.value)


def test_store_errors_are_exported_and_raised_from_agent_calls(tmp_path: Any) -> None:
    from tether.durable import SQLiteStore

    for name in ("StoreError", "RunNotFoundError", "RunLockedError", "LeaseLostError", "RowTooLargeError"):
        assert getattr(tether, name) is getattr(errors, name)
        assert name in tether.__all__
        assert issubclass(getattr(tether, name), tether.StoreError)
    store = SQLiteStore(tmp_path / "runs.db")
    agent = tether.Agent(model=tether.ScriptedModel(["ok"]), store=store)
    with pytest.raises(tether.RunNotFoundError, match="'nope'"):
        agent.resume("nope")
    agent("hi", run_id="r")
    with store.lease("r"), pytest.raises(tether.RunLockedError, match="'r'"):
        tether.Agent(model=tether.ScriptedModel(["ok"]), store=store)("again", run_id="r")
