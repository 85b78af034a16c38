"""The local driver: model calls with retry and overflow handling, tool runs, events, persistence points."""

from __future__ import annotations

import contextlib
import random
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from tether import (
    AfterModelCall,
    Agent,
    ContextWindowExhaustedError,
    ContextWindowOverflowError,
    Limits,
    ModelAuthError,
    ModelResponseError,
    ModelThrottledError,
    RetryPolicy,
    ScriptedModel,
    tool,
)
from tether.loop import CoreConfig, DriverOptions, LocalDriver, LoopCore, LoopHost, Stop
from tether.models import tool_calls
from tether.tools.decorator import FunctionTool
from tether.types import Message, ModelRequest, StreamEvent, ToolResult, ToolUse

from ..conftest import call, user


@dataclass(frozen=True)
class RecordingRetry(RetryPolicy):
    """A retry policy that records what it was asked and never really waits."""

    asked: list[tuple[int, float | None]] = field(default_factory=list)

    def delay(self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None) -> float:
        self.asked.append((attempt, retry_after))
        return 0.0


def test_throttling_backs_off_attempt_by_attempt() -> None:
    retry = RecordingRetry(max_attempts=4)
    script = [ModelThrottledError(), ModelThrottledError(retry_after=1.5), ModelThrottledError(), "ok"]
    agent = Agent(model=ScriptedModel(script), retry=retry)
    assert str(agent("x")) == "ok"
    assert retry.asked == [(1, None), (2, 1.5), (3, None)]


def test_throttling_budget_is_per_model_call(add_tool: FunctionTool) -> None:
    retry = RecordingRetry(max_attempts=2)
    script = [ModelThrottledError(), call("add", {"a": 1, "b": 1}), ModelThrottledError(), "ok"]
    agent = Agent(model=ScriptedModel(script), tools=[add_tool], retry=retry)
    assert str(agent("x")) == "ok"
    assert retry.asked == [(1, None), (1, None)]


def test_throttling_gives_up_with_the_provider_error() -> None:
    retry = RecordingRetry(max_attempts=2)
    model = ScriptedModel([ModelThrottledError("rate limited")] * 3)
    seen: list[BaseException | None] = []

    def watch(event: AfterModelCall) -> None:
        seen.append(event.exception)

    with pytest.raises(ModelThrottledError, match="rate limited"):
        Agent(model=model, retry=retry, hooks=[watch])("x")
    assert model.index == 2
    assert retry.asked == [(1, None)]
    assert len(seen) == 2 and all(isinstance(e, ModelThrottledError) for e in seen)


def test_real_backoff_with_tiny_delays() -> None:
    agent = Agent(
        model=ScriptedModel([ModelThrottledError(), ModelThrottledError(), "ok"]),
        retry=RetryPolicy(max_attempts=3, initial_delay=0.001, max_delay=0.004, jitter=0.5),
    )
    assert str(agent("x")) == "ok"


@pytest.mark.parametrize("error", [ModelAuthError("set OPENAI_API_KEY"), RuntimeError("sdk bug")])
def test_other_model_errors_are_not_retried(error: Exception) -> None:
    model = ScriptedModel([error, "unreached"])
    with pytest.raises(type(error)):
        Agent(model=model, retry=RecordingRetry())("x")
    assert model.index == 1


def test_invalid_tool_json_from_a_model_is_a_response_error() -> None:
    class BrokenModel:
        model_id = "broken"

        async def stream(self, request: ModelRequest) -> Any:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t", "name": "f"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": "{nope"}}}}
            yield {"messageStop": {"stopReason": "tool_use"}}

    with pytest.raises(ModelResponseError, match="invalid JSON"):
        Agent(model=BrokenModel())("x")


def test_overflow_reduction_budget_is_per_model_call() -> None:
    model = ScriptedModel([ContextWindowOverflowError(), ContextWindowOverflowError(), "fits"])
    agent = Agent(
        model=model,
        messages=[user(f"q{i}") if i % 2 == 0 else {"role": "assistant", "content": [{"text": "a"}]} for i in range(16)],
        limits=Limits(max_overflow_reductions=2),
    )
    assert str(agent("x")) == "fits"

    exhausted = ScriptedModel([ContextWindowOverflowError()] * 3)
    agent = Agent(model=exhausted, messages=list(agent.messages), limits=Limits(max_overflow_reductions=0))
    with pytest.raises(ContextWindowExhaustedError, match="after 0 reductions"):
        agent("y")
    assert exhausted.index == 1


def test_model_state_from_the_stream_is_kept_in_the_run() -> None:
    class StatefulModel:
        model_id = "stateful"

        def __init__(self) -> None:
            self.seen: list[dict[str, Any]] = []

        async def stream(self, request: ModelRequest) -> Any:
            self.seen.append(dict(request["model_state"]))
            yield {"modelState": {"response_id": f"r{len(self.seen)}"}}
            yield {"contentBlockDelta": {"delta": {"text": "ok"}}}
            yield {"messageStop": {"stopReason": "end_turn"}}

    model = StatefulModel()
    agent = Agent(model=model)
    agent("a")
    agent("b")
    assert model.seen == [{}, {"response_id": "r1"}]
    assert agent.run_state.model_state == {"response_id": "r2"}


def test_request_carries_system_prompt_specs_and_messages(add_tool: FunctionTool) -> None:
    model = ScriptedModel(["ok"])
    model.record_requests = True
    Agent(model=model, tools=[add_tool], system_prompt="sys")("hi")
    request = model.calls[0]
    assert request["messages"] == [user("hi")]
    assert request["system_prompt"] == [{"text": "sys"}]
    assert request["tool_specs"] == [add_tool.spec]
    assert request["tool_choice"] is None
    assert request["model_state"] == {}


# -- driving the driver directly ------------------------------------------------------------


async def drive(agent: Agent, prompt: str, *, forward: bool) -> tuple[list[dict[str, Any]], LocalDriver]:
    core = LoopCore(agent.run_state, CoreConfig())
    core.start([user(prompt)])
    driver = LocalDriver(agent.host(), core, DriverOptions(forward_deltas=forward), threading.Event())
    events = [event async for event in driver.run()]
    return events, driver


async def test_driver_runs_to_the_final_effect(add_tool: FunctionTool) -> None:
    agent = Agent(model=ScriptedModel([call("add", {"a": 2, "b": 2}), "4"]), tools=[add_tool])
    events, driver = await drive(agent, "2+2", forward=True)
    assert driver.final == Stop("end_turn")
    assert [e["type"] for e in events] == ["message", "tool_start", "tool_result", "message", "text_delta", "message"]
    assert agent.messages[-1]["content"] == [{"text": "4"}]


async def test_deltas_are_forwarded_only_when_asked() -> None:
    script: list[Any] = [{"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "hmm"}}}, {"text": "hi"}]}]
    events, _ = await drive(Agent(model=ScriptedModel(script)), "x", forward=True)
    assert [(e["type"], e.get("text")) for e in events if "delta" in e["type"]] == [("reasoning_delta", "hmm"), ("text_delta", "hi")]
    quiet, _ = await drive(Agent(model=ScriptedModel(list(script))), "x", forward=False)
    assert [e["type"] for e in quiet] == ["message"]


class PersistingDriver(LocalDriver):
    """Records the persistence points in order, as a durable driver would write them."""

    log: ClassVar[list[Any]] = []

    async def on_messages(self, messages: list[Message]) -> None:
        self.log.append(("messages", [m["role"] for m in messages]))

    async def on_tool_started(self, tool_use: ToolUse) -> None:
        self.log.append(("started", tool_use["toolUseId"]))

    async def on_tool_result(self, tool_use_id: str, result: ToolResult) -> None:
        self.log.append(("result", tool_use_id, result["status"]))


class PersistingAgent(Agent):
    def make_driver(self, host: LoopHost, core: LoopCore, options: DriverOptions, cancel: threading.Event) -> LocalDriver:
        return PersistingDriver(host, core, options, cancel)


def test_persistence_points_in_order(add_tool: FunctionTool) -> None:
    PersistingDriver.log = []
    script = [
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "a", "name": "add", "input": {"a": 1, "b": 1}}},
                {"toolUse": {"toolUseId": "b", "name": "nope", "input": {}}},
            ],
        },
        "done",
    ]
    agent = PersistingAgent(model=ScriptedModel(script), tools=[add_tool])
    agent("go")
    log = PersistingDriver.log
    assert log[0] == ("messages", ["user"])
    assert log[1] == ("messages", ["assistant"])
    started = log.index(("started", "a"))
    assert log.index(("result", "a", "success")) > started
    assert log.index(("result", "b", "error")) > log.index(("started", "b"))
    assert log[-2] == ("messages", ["user"])  # the tool results, after both results were written
    assert log[-1] == ("messages", ["assistant"])


def test_tools_run_concurrently_in_threads_by_default() -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def meet(name: str) -> str:
        barrier.wait()  # both calls must be running at once to get past this
        return name

    agent = Agent(model=ScriptedModel([tool_calls([("meet", {"name": "a"}), ("meet", {"name": "b"})]), "done"]), tools=[meet])
    assert str(agent("go")) == "done"


def test_a_model_stream_that_yields_nothing_is_an_empty_answer() -> None:
    class Silent:
        model_id = "silent"

        async def stream(self, request: ModelRequest) -> Any:
            if False:
                yield StreamEvent()

    result = Agent(model=Silent())("x")
    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": []}


def test_cancel_during_a_throttling_backoff_stops_without_another_call() -> None:
    def throttle_and_cancel(messages: list[Message]) -> Exception:
        agent.cancel()
        return ModelThrottledError("slow down")

    model = ScriptedModel([throttle_and_cancel, "unreached"])
    agent = Agent(model=model, retry=RetryPolicy(initial_delay=30.0, max_delay=30.0, jitter=0.0))
    result = agent("x")
    assert result.stop_reason == "cancelled"
    assert model.index == 1


# -- events in true order ---------------------------------------------------------------------


def _two_calls() -> Message:
    return {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "a", "name": "mark", "input": {"name": "a"}}},
            {"toolUse": {"toolUseId": "b", "name": "mark", "input": {"name": "b"}}},
        ],
    }


@pytest.mark.parametrize("executor", ["concurrent", "sequential", "single"])
@pytest.mark.parametrize("store", [None, "sqlite"])
@pytest.mark.parametrize("in_thread", [False, True])
async def test_tool_start_reaches_the_caller_before_the_tool_body_runs(
    executor: str, store: str | None, in_thread: bool, tmp_path: Any
) -> None:
    from tether import ConcurrentToolExecutor, SequentialToolExecutor
    from tether.durable import SQLiteStore

    seen: list[str] = []

    @tool(run_in_thread=in_thread)
    def mark(name: str) -> str:
        seen.append(f"body {name}")
        return name

    message = _two_calls()
    if executor == "single":  # one call: the concurrent executor runs it in order, in the invocation's task
        del message["content"][1]
    agent = Agent(
        model=ScriptedModel([message, "done"]),
        tools=[mark],
        tool_executor=SequentialToolExecutor() if executor == "sequential" else ConcurrentToolExecutor(),
        store=SQLiteStore(tmp_path / "runs.db") if store else None,
    )
    async for event in agent.stream_async("go", run_id="r1" if store else None):
        if event["type"] == "tool_start":
            seen.append(f"start {event['toolUse']['toolUseId']}")
        elif event["type"] == "tool_result":
            seen.append(f"result {event['toolResult']['toolUseId']}")
    for name in "ab" if executor != "single" else "a":
        assert seen.index(f"start {name}") < seen.index(f"body {name}") < seen.index(f"result {name}")
    if executor == "sequential":  # one call after the other, and the caller hears of each as it happens
        assert seen == ["start a", "body a", "result a", "start b", "body b", "result b"]


async def test_a_tool_result_is_yielded_while_other_calls_still_run() -> None:
    import asyncio

    release = asyncio.Event()
    bodies: list[str] = []

    @tool
    async def mark(name: str) -> str:
        bodies.append(name)
        if name == "b":  # b finishes only once the caller has seen a's result (the timeout only ends a broken run)
            await asyncio.wait_for(release.wait(), 60)
        return name

    agent = Agent(model=ScriptedModel([_two_calls(), "done"]), tools=[mark])
    order: list[tuple[str, str]] = []
    async for event in agent.stream_async("go"):
        if event["type"] == "tool_result":
            order.append((event["toolResult"]["toolUseId"], event["toolResult"]["status"]))
            release.set()
    assert order == [("a", "success"), ("b", "success")]


@pytest.mark.parametrize("calls", [1, 2])
@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
async def test_a_caller_that_stops_at_tool_start_never_runs_the_tool(executor: str, calls: int) -> None:
    from tether import ConcurrentToolExecutor, SequentialToolExecutor

    ran: list[str] = []

    @tool
    async def mark(name: str) -> str:
        ran.append(name)
        return name

    message = _two_calls()
    del message["content"][calls:]
    agent = Agent(
        model=ScriptedModel([message, "done"]),
        tools=[mark],
        tool_executor=ConcurrentToolExecutor() if executor == "concurrent" else SequentialToolExecutor(),
    )
    async with contextlib.aclosing(agent.stream_async("go")) as events:
        async for event in events:
            if event["type"] == "tool_start":
                break
    assert ran == []
    assert agent.run_state.cursor.started == []  # nothing recorded as started: nothing in doubt


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
async def test_a_result_the_caller_has_seen_is_stored(executor: str, tmp_path: Any) -> None:
    from tether import ConcurrentToolExecutor, SequentialToolExecutor
    from tether.durable import SQLiteStore

    ran: list[str] = []

    @tool
    async def mark(name: str) -> str:
        ran.append(name)
        return name

    def build() -> Agent:
        return Agent(
            model=ScriptedModel([_two_calls(), "done"], stateful=True),
            tools=[mark],
            tool_executor=SequentialToolExecutor() if executor == "sequential" else ConcurrentToolExecutor(),
            store=SQLiteStore(tmp_path / "runs.db"),
        )

    seen: list[str] = []
    async with contextlib.aclosing(build().stream_async("go", run_id="r")) as events:
        async for event in events:
            if event["type"] == "tool_result":
                seen.append(event["toolResult"]["toolUseId"])
                if len(seen) == 2:
                    break  # the caller stops right after the result that closed the cycle
    result = await build().resume_async("r")
    assert str(result) == "done"
    assert sorted(ran) == ["a", "b"]  # neither call ran again: both results had been stored
