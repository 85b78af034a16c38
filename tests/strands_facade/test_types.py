"""``tether.strands.types``: Strands' module paths and names, and exceptions Tether's errors map onto."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

import tether.strands as ts
from tether.errors import ContextWindowExhaustedError, ContextWindowOverflowError, ModelThrottledError, TetherError
from tether.strands.agent.conversation_manager import NullConversationManager
from tether.strands.types import exceptions
from tether.types import ModelRequest, StreamEvent

from .test_agent import TetherFake, plain, strands_fake


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("types.content", ["ContentBlock", "Message", "Messages", "SystemContentBlock", "CachePoint", "Role", "SystemPrompt"]),
        ("types.streaming", ["StreamEvent", "StopReason", "Usage", "ContentBlockDelta", "MessageStopEvent", "MetadataEvent"]),
        ("types.tools", ["ToolSpec", "ToolUse", "ToolResult", "ToolContext", "ToolChoice", "ToolResultContent"]),
        ("types.event_loop", ["Usage", "Metrics", "StopReason"]),
        ("types.agent", ["AgentInput"]),
        ("types.interrupt", ["InterruptResponse", "InterruptResponseContent"]),
        ("types._snapshot", ["Snapshot", "SnapshotField", "SnapshotPreset", "Scope", "SNAPSHOT_SCHEMA_VERSION"]),
        ("experimental.checkpoint", ["Checkpoint", "CheckpointPosition", "CHECKPOINT_SCHEMA_VERSION"]),
        ("agent", ["Agent", "AgentResult", "ConversationManager", "SlidingWindowConversationManager", "SummarizingConversationManager"]),
        ("handlers", ["PrintingCallbackHandler", "CompositeCallbackHandler", "null_callback_handler"]),
    ],
)
def test_strands_names_exist_at_strands_paths(module: str, names: list[str]) -> None:
    theirs = importlib.import_module(f"strands.{module}")
    ours = importlib.import_module(f"tether.strands.{module}")
    for name in names:
        assert hasattr(theirs, name), name  # the name is Strands' (a typo here would test nothing)
        assert hasattr(ours, name), name


def test_every_strands_exception_has_a_tether_error_of_its_name() -> None:
    import strands.types.exceptions as theirs

    names = [n for n, v in vars(theirs).items() if isinstance(v, type) and issubclass(v, Exception) and v.__module__ == theirs.__name__]
    assert len(names) >= 10
    for name in names:
        ours = getattr(exceptions, name)
        assert issubclass(ours, TetherError), name


def test_snapshot_and_checkpoint_exceptions_are_tethers() -> None:
    from tether.errors import CheckpointError, SnapshotError

    assert exceptions.SnapshotException is SnapshotError
    assert issubclass(exceptions.CheckpointException, CheckpointError)
    assert exceptions.CheckpointException.__name__ == "CheckpointException"


def test_facade_raises_strands_named_errors_that_are_tether_errors() -> None:
    from tether.errors import CheckpointError, SnapshotError, StateError, TetherError
    from tether.strands import Agent
    from tether.strands.experimental.checkpoint import Checkpoint

    agent = Agent(model="openai:gpt-4o-mini", callback_handler=None)
    with pytest.raises(ValueError, match="Value is not JSON serializable") as state_error:
        agent.state.set("bad", object())
    assert type(state_error.value).__name__ == "ValueError" and isinstance(state_error.value, StateError)
    with pytest.raises(ValueError, match="checkpointing=False") as not_checkpointing:
        agent({"checkpointResume": {"checkpoint": {"position": "after_model", "cycle_index": 0, "schema_version": "1.0"}}})
    assert type(not_checkpointing.value).__name__ == "ValueError" and isinstance(not_checkpointing.value, CheckpointError)
    with pytest.raises(exceptions.CheckpointException) as bad_version:
        Checkpoint.from_dict({"position": "after_model", "cycle_index": 0, "schema_version": "0.1"})
    assert isinstance(bad_version.value, TetherError)
    with pytest.raises(exceptions.SnapshotException) as bad_field:
        agent.take_snapshot(include=["nonsense"])  # type: ignore[list-item]
    assert type(bad_field.value).__name__ == "SnapshotException" and isinstance(bad_field.value, SnapshotError)


def test_interrupt_has_strands_response() -> None:
    from tether.interrupts import Interrupt as TetherInterrupt
    from tether.strands.types.interrupt import Interrupt

    view = Interrupt.of(TetherInterrupt(id="i1", name="approve", reason={"n": 1}))
    assert (view.id, view.name, view.reason, view.response) == ("i1", "approve", {"n": 1}, None)
    assert isinstance(view, TetherInterrupt)


# -- max tokens -----------------------------------------------------------------------


def test_max_tokens_raises_strands_exception_with_the_partial_message_kept() -> None:
    import strands
    from strands.types.exceptions import MaxTokensReachedException as StrandsMaxTokens

    turns = [[{"text": "cut sh"}]]
    theirs = strands.Agent(model=strands_fake(turns, ["max_tokens"]), callback_handler=None)
    with pytest.raises(StrandsMaxTokens) as expected:
        theirs("hi")
    ours = ts.Agent(model=TetherFake(turns, ["max_tokens"]), callback_handler=None)
    with pytest.raises(exceptions.MaxTokensReachedException) as got:
        ours("hi")
    assert str(got.value) == str(expected.value)
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]


# -- context overflow -----------------------------------------------------------------


class Overflowing:
    """A model whose every call overflows the context window, with ``error``."""

    model_id = "overflowing"

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        raise self.error
        yield {}


def test_an_overflow_the_manager_cannot_reduce_is_caught_as_strands_exception() -> None:
    model = Overflowing(ContextWindowOverflowError("too long"))
    agent = ts.Agent(model=model, conversation_manager=NullConversationManager(), callback_handler=None)
    with pytest.raises(exceptions.ContextWindowOverflowException) as caught:
        agent("hi")
    assert isinstance(caught.value, ContextWindowExhaustedError)  # still Tether's error too
    assert isinstance(caught.value.__cause__, ContextWindowExhaustedError)


def test_strands_overflow_raised_by_a_model_makes_the_manager_reduce() -> None:
    class OverflowOnce(TetherFake):
        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            if len(request["messages"]) > 1:
                raise exceptions.ContextWindowOverflowException("too long")
            async for chunk in super().stream(request):
                yield chunk

    history: list[Any] = [{"role": "user", "content": [{"text": "old"}]}, {"role": "assistant", "content": [{"text": "reply"}]}]
    model = OverflowOnce([[{"text": "fits"}]])
    agent = ts.Agent(model=model, messages=history, callback_handler=None)
    assert str(agent("new")) == "fits\n"
    assert agent.messages[0] == {"role": "user", "content": [{"text": "new"}]}


# -- throttling -----------------------------------------------------------------------


def test_throttling_after_the_retries_is_caught_as_strands_exception() -> None:
    agent = ts.Agent(model=Overflowing(ModelThrottledError("slow down")), retry_strategy=None, callback_handler=None)
    with pytest.raises(exceptions.ModelThrottledException, match="slow down") as caught:
        agent("hi")
    assert isinstance(caught.value, ModelThrottledError)
    assert caught.value.message == "slow down"


def test_strands_throttling_raised_by_a_model_is_retried() -> None:
    from tether.loop.policies import RetryPolicy

    class ThrottleOnce(TetherFake):
        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            if not getattr(self, "thrown", False):
                self.thrown = True
                raise exceptions.ModelThrottledException("busy")
            async for chunk in super().stream(request):
                yield chunk

    agent = ts.Agent(model=ThrottleOnce([[{"text": "ok"}]]), retry=RetryPolicy(initial_delay=0.0, jitter=0.0), callback_handler=None)
    assert str(agent("hi")) == "ok\n"
