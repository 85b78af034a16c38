"""Agent factories shared by the in-process and subprocess workers of the Temporal tests.

Every agent uses a stateful ScriptedModel (its position lives in ``model_state``), so each
activity can rebuild the agent from the registry and still continue the same script. Side
effects (model calls, tool starts and ends) are appended to a log file named in the config,
so tests can count what ran even across killed worker processes.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from temporalio import activity

from tether import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    Agent,
    BeforeInvocation,
    BeforeModelCall,
    BeforeToolCall,
    Budget,
    MessageAdded,
    ModelPrice,
    NullConversationManager,
    RetryPolicy,
    ScriptedModel,
    ToolContext,
    tool,
)
from tether.durable.indoubt import InDoubtCall
from tether.errors import ContextWindowOverflowError, ModelAuthError, ModelThrottledError
from tether.loop.state import RunState
from tether.models.scripted import tool_call, tool_calls
from tether.temporal import AgentRegistry
from tether.types import Message, ModelRequest, StreamEvent

registry = AgentRegistry()


def log(config: dict[str, Any], line: str) -> None:
    """Append one line to the side-effect log of the config (if any)."""
    path = config.get("log")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())


class LoggingModel(ScriptedModel):
    """A stateful ScriptedModel that logs each call it serves."""

    def __init__(self, responses: list[Any], config: dict[str, Any], label: str = "model") -> None:
        super().__init__(responses, stateful=True)
        self.config = config
        self.label = label

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        log(self.config, f"{self.label} {request['model_state'].get('scripted_index', 0)}")
        async for event in super().stream(request):
            yield event


def publish_tool(config: dict[str, Any], *, log_verdict: bool = True) -> Any:
    """A ``publish`` tool that asks a human (interrupt ``approve`` with the title) before it
    publishes; it logs ``ask <title>`` on each start and (``log_verdict``) ``publish <title> <answer>``.
    The graph nodes, swarm members and agent tools that wait on a human use it alike."""

    @tool
    def publish(title: str, context: ToolContext) -> str:
        """Publish a title once a human approves it."""
        log(config, f"ask {title}")
        verdict = context.interrupt("approve", {"title": title})
        if log_verdict:
            log(config, f"publish {title} {verdict}")
        return f"published {title} ({verdict})"

    return publish


def published_answer(config: dict[str, Any], label: str) -> Any:
    """A scripted model step that logs ``label`` and answers ``done: <the publish tool's result>``."""

    def published(messages: list[Message]) -> str:
        log(config, label)
        result = messages[-1]["content"][0]["toolResult"]
        return "done: " + str(result["content"][0]["text"])

    return published


def relay_builder(config: dict[str, Any]) -> Agent:
    """The ``builder`` of the relay graph and swarm: a fast tool, then a slow one (the kill -9
    tests kill a worker in it), then the answer ``built``; each model call is logged."""

    def step(label: str, response: Any) -> Any:
        def respond(messages: list[Message]) -> Any:
            log(config, label)
            return response

        return respond

    script = [
        step("builder model 0", tool_call("fast", {"n": 1})),
        step("builder model 1", tool_call("slow", {"n": 2})),
        step("builder model 2", "built"),
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=fast_and_slow_tools(config), name="builder")


def relay_log(key: str) -> list[str]:
    """The side-effect log of a relay whose worker was killed in the builder's slow tool (call
    ``key``): the scout and the builder's first steps once, the slow tool started again."""
    return [
        "scout model 0",
        "builder model 0",
        "fast 1",
        "builder model 1",
        f"slow-start 2 {key}",
        f"slow-start 2 {key}",
        "slow-end 2",
        "builder model 2",
    ]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


TWO_TOOLS_SCRIPT: list[Any] = [
    tool_calls([("add", {"a": 2, "b": 3}), ("multiply", {"a": 4, "b": 5})]),
    tool_call("multiply", {"a": 5, "b": 20}, text="Now the product."),
    "2 + 3 = 5, 4 * 5 = 20 and 5 * 20 = 100.",
]


def two_tools_agent(config: dict[str, Any]) -> Agent:
    return Agent(
        model=LoggingModel(list(TWO_TOOLS_SCRIPT) + list(config.get("extra", [])), config),
        tools=[add, multiply],
        system_prompt="You are a calculator.",
        state={"owner": "tests"},
    )


registry.register("two_tools", two_tools_agent)


@registry.register("delegator")
def delegator_agent(config: dict[str, Any]) -> Agent:
    """Delegates to the agent tool ``worker``: the ``slow`` agent (a fast tool, a slow tool, an
    answer), whose calls run as a child workflow on Temporal."""
    child = slow_agent(config, name="worker")
    script: list[Any] = [tool_call("worker", {"input": "Go."}), "parent done"]
    return Agent(model=LoggingModel(script, config, label="parent"), tools=[child], name="delegator")


@registry.register("slow")
def slow_agent(config: dict[str, Any], name: str | None = None) -> Agent:
    """Cycle 1 calls a fast tool, cycle 2 a slow one (``config["sleep"]`` seconds), then answers."""
    script: list[Any] = [tool_call("fast", {"n": 1}), tool_call("slow", {"n": 2}), "all done"]
    return Agent(model=LoggingModel(script, config), tools=fast_and_slow_tools(config, default_sleep=1.0), name=name)


def fast_and_slow_tools(config: dict[str, Any], *, default_sleep: float = 0.0) -> list[Any]:
    """The ``fast`` tool and the ``slow`` one (it writes ``config["started_marker"]`` when it
    starts, then sleeps ``config["sleep"]`` seconds), both logged: what the kill -9 tests kill
    a worker in (agents, graph nodes and swarm members use them alike)."""

    @tool(name="fast")
    def fast(n: int) -> str:
        log(config, f"fast {n}")
        return f"fast {n} done"

    @tool(name="slow")
    def slow(n: int, context: ToolContext) -> str:
        log(config, f"slow-start {n} {context.idempotency_key}")
        marker = config.get("started_marker")
        if marker:
            Path(marker).write_text("started")
        time.sleep(float(config.get("sleep", default_sleep)))
        log(config, f"slow-end {n}")
        return f"slow {n} done"

    return [fast, slow]


@registry.register("big")
def big_agent(config: dict[str, Any]) -> Agent:
    """Each of ``cycles`` cycles returns a unique ``size``-byte tool output; the answer is large too."""
    size = int(config["size"])
    cycles = int(config["cycles"])

    @tool(name="dump")
    def dump(i: int) -> str:
        return f"{i:08d}" + ("abcdefghij" * (size // 10 + 1))[: size - 8]

    script: list[Any] = [tool_call("dump", {"i": i}) for i in range(cycles)]
    script.append("Z" * int(config.get("answer_size", 10)))
    return Agent(model=ScriptedModel(script, stateful=True), tools=[dump], conversation_manager=NullConversationManager())


@functools.lru_cache(maxsize=4)
def _long_script(cycles: int) -> tuple[Any, ...]:
    """Built once per worker process: every activity rebuilds the agent, not the script."""
    return (*(tool_call("tick", {"i": i}) for i in range(cycles - 1)), "finished")


@registry.register("long")
def long_agent(config: dict[str, Any]) -> Agent:
    """``cycles`` model calls: every one but the last calls the ``tick`` tool."""
    cycles = int(config["cycles"])

    @tool(name="tick", run_in_thread=False)
    def tick(i: int) -> int:
        return i + 1

    return Agent(
        model=ScriptedModel(_long_script(cycles), stateful=True, usage=(3, 2)), tools=[tick], conversation_manager=NullConversationManager()
    )


@registry.register("budgeted")
def budgeted_agent(config: dict[str, Any]) -> Agent:
    """``long``'s script (``cycles`` model calls, each but the last calling ``tick``) under
    ``config["budget"]`` (``Budget.to_dict``), on a priced scripted model reporting (30, 5)."""
    cycles = int(config["cycles"])

    @tool(name="tick", run_in_thread=False)
    def tick(i: int) -> int:
        return i + 1

    return Agent(
        model=ScriptedModel(_long_script(cycles), stateful=True, usage=(30, 5), model_id="temporal-priced"),
        tools=[tick],
        conversation_manager=NullConversationManager(),
        budget=Budget.from_dict(config["budget"]),
        prices={"temporal-priced": ModelPrice(10.0, 100.0)},
    )


@registry.register("budget_lead")
def budget_lead_agent(config: dict[str, Any]) -> Agent:
    """Calls two agent tools at once (``helper`` and ``other``, each four model calls on
    ``budgeted``'s priced model, with no budget of their own) under ``config["budget"]``."""

    @tool(name="tick", run_in_thread=False)
    def tick(i: int) -> int:
        return i + 1

    prices = {"temporal-priced": ModelPrice(10.0, 100.0)}

    def child(name: str) -> Agent:
        model = ScriptedModel(_long_script(4), stateful=True, usage=(30, 5), model_id="temporal-priced")
        return Agent(model=model, tools=[tick], name=name, prices=prices, conversation_manager=NullConversationManager())

    calls = tool_calls([("helper", {"input": "a"}), ("other", {"input": "b"})])
    return Agent(
        model=ScriptedModel([calls, "parent done"], stateful=True, usage=(30, 5), model_id="temporal-priced"),
        tools=[child("helper"), child("other")],
        name="budget_lead",
        budget=Budget.from_dict(config["budget"]),
        prices=prices,
    )


@registry.register("notes")
def notes_agent(config: dict[str, Any]) -> Agent:
    """An agent state of ``count`` notes of ``size`` characters; each of ``cycles - 1`` tool calls
    rewrites one note (cycle ``i`` the note ``i % count``), the last cycle answers."""
    count, size, cycles = int(config["count"]), int(config["size"]), int(config["cycles"])

    @tool(name="note", run_in_thread=False)
    def note(i: int, context: ToolContext) -> int:
        value = context.agent.state.get("notes")
        value[f"n{i % count:05d}"] = note_text(i, size)
        context.agent.state.set("notes", value)
        return i

    script = [*(tool_call("note", {"i": i}) for i in range(cycles - 1)), "noted"]
    state = {"notes": {f"n{j:05d}": note_text(-1 - j, size) for j in range(count)}}
    return Agent(model=ScriptedModel(script, stateful=True), tools=[note], state=state, conversation_manager=NullConversationManager())


def note_text(i: int, size: int) -> str:
    """The text note ``i`` writes (every one differs throughout)."""
    stem = f"{i}|"
    return (stem * (size // len(stem) + 1))[:size]


@registry.register("asker")
def asker_agent(config: dict[str, Any]) -> Agent:
    """Calls ``book``, which asks a human for approval, then answers with what the tool returned."""

    @tool(name="book")
    def book(city: str, context: ToolContext) -> str:
        answer = context.interrupt("approve", {"city": city})
        log(config, f"book {city} {answer}")
        return f"booked {city}: {answer}"

    script: list[Any] = [tool_call("book", {"city": "Lisbon"}), "Booking handled."]
    return Agent(model=LoggingModel(script, config), tools=[book], checkpointing=bool(config.get("checkpointing", False)))


@registry.register("hooked")
def hooked_agent(config: dict[str, Any]) -> Agent:
    """Every hook event logs a line; a BeforeToolCall hook rewrites the tool input."""

    def before_invocation(event: BeforeInvocation) -> None:
        log(config, f"before-invocation resumed={event.resumed}")

    def after_invocation(event: AfterInvocation) -> None:
        log(config, "after-invocation")

    def message_added(event: MessageAdded) -> None:
        assert event.message is not None
        log(config, f"message {event.message['role']} {len(event.message['content'])}")

    def before_model(event: BeforeModelCall) -> None:
        log(config, f"before-model {event.cycle_index}")

    def after_model(event: AfterModelCall) -> None:
        log(config, f"after-model {event.stop_reason}")

    def before_tool(event: BeforeToolCall) -> None:
        assert event.tool_use is not None
        event.tool_use["input"]["b"] = 40
        log(config, f"before-tool {event.tool_use['name']}")

    def after_tool(event: AfterToolCall) -> None:
        assert event.result is not None
        log(config, f"after-tool {event.result['content']}")

    hooks = [before_invocation, after_invocation, message_added, before_model, after_model, before_tool, after_tool]
    script: list[Any] = [tool_call("add", {"a": 2, "b": 3}), "done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[add], hooks=hooks)


@registry.register("failing")
def failing_agent(config: dict[str, Any]) -> Agent:
    """The model fails with ``config["error"]``: ``overflow`` (that nothing can reduce) or ``auth``."""
    error: Exception = (
        ContextWindowOverflowError("prompt is too long") if config["error"] == "overflow" else ModelAuthError("set FAKE_API_KEY")
    )
    return Agent(model=LoggingModel([error], config), conversation_manager=NullConversationManager())


@registry.register("counter")
def counter_agent(config: dict[str, Any]) -> Agent:
    """Two concurrent tool calls and then one more each write the agent state."""

    @tool(name="bump")
    def bump(key: str, context: ToolContext) -> int:
        state = context.agent.state
        value = int(state.get(key, 0)) + 1
        state.set(key, value)
        if state.get("scratch") is not None:
            state.delete("scratch")
        return value

    script: list[Any] = [
        tool_calls([("bump", {"key": "a"}), ("bump", {"key": "b"})]),
        tool_call("bump", {"key": "a"}),
        "counted",
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[bump], state={"scratch": True, "keep": "me"})


def _sleep_once(config: dict[str, Any]) -> float:
    """The seconds to block: ``config["sleep"]`` the first time (the marker file is written),
    none once the marker exists (a later attempt or re-run)."""
    marker = config.get("started_marker")
    if marker and Path(marker).exists() and config.get("once"):
        return 0.0
    if marker:
        Path(marker).write_text("started")
    return float(config.get("sleep", 0.0))


@registry.register("charge")
def charge_agent(config: dict[str, Any]) -> Agent:
    """A non-idempotent ``charge`` tool (blocks ``config["sleep"]`` s); with ``config["reconcile"]``
    the agent reconciles in-doubt calls by "asking the payment system" (the log)."""

    @tool(name="charge", idempotent=False)
    def charge(amount: int, context: ToolContext) -> str:
        log(config, f"charge-start {amount} {context.idempotency_key}")
        time.sleep(_sleep_once(config))
        log(config, f"charge-end {amount}")
        return f"charged {amount}"

    def reconcile(call: InDoubtCall) -> Any:
        log(config, f"reconcile {call.tool_use['name']} {call.idempotency_key}")
        return {"status": "success", "content": [{"text": f"reconciled {call.tool_use['input']['amount']}"}]}

    script: list[Any] = [tool_call("charge", {"amount": 5}), "charged"]
    return Agent(model=LoggingModel(script, config), tools=[charge], reconcile=reconcile if config.get("reconcile") else None)


@registry.register("blocking")
def blocking_agent(config: dict[str, Any]) -> Agent:
    """A sync tool that blocks (``run_in_thread=False``) longer than the heartbeat timeout."""

    @tool(name="block", run_in_thread=False)
    def block() -> str:
        log(config, "block-start")
        time.sleep(float(config["sleep"]))
        log(config, "block-end")
        return "blocked and done"

    return Agent(model=LoggingModel([tool_call("block", {}), "unblocked"], config), tools=[block])


@registry.register("stuck")
def stuck_agent(config: dict[str, Any]) -> Agent:
    """An (idempotent) tool that never finishes within its timeout; the model then gives up."""

    @tool(name="stuck")
    async def stuck() -> str:
        log(config, "stuck-start")
        await asyncio.sleep(60)
        return "never"

    return Agent(model=LoggingModel([tool_call("stuck", {}), "gave up"], config), tools=[stuck])


class SleepyModel(LoggingModel):
    """Blocks its first call (``config["sleep"]`` s, marker written) before answering."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        pause = _sleep_once(self.config)
        if pause:
            await asyncio.sleep(pause)
        async for event in super().stream(request):
            yield event


@registry.register("sleepy")
def sleepy_agent(config: dict[str, Any]) -> Agent:
    return Agent(model=SleepyModel(["awake"], {**config, "once": True}))


class ThrottledModel(LoggingModel):
    """Throttled (``retry_after`` = ``config["retry_after"]``) until the activity's 3rd attempt."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        attempt = activity.info().attempt
        log(self.config, f"attempt {attempt}")
        if attempt < 3:
            raise ModelThrottledError("slow down", retry_after=float(self.config["retry_after"]))
        async for event in super().stream(request):
            yield event


@registry.register("throttled")
def throttled_agent(config: dict[str, Any]) -> Agent:
    retry = RetryPolicy(max_attempts=4, initial_delay=0.2, max_delay=0.5, multiplier=2.0, jitter=0.0)
    return Agent(model=ThrottledModel(["through"], config), retry=retry)


@registry.register("bulky")
def bulky_agent(config: dict[str, Any]) -> Agent:
    """Large values everywhere but in messages: an initial state of ``state_size`` bytes, a tool
    that adds ``grow_size`` bytes to the state, and (with ``reason_size``) a tool whose
    interrupt reason is that large."""

    @tool(name="grow")
    def grow(context: ToolContext) -> str:
        log(config, "grow")
        context.agent.state.set("grown", "g" * int(config["grow_size"]))
        return "grown"

    @tool(name="ask")
    def ask(context: ToolContext) -> str:
        answer = context.interrupt("review", {"document": "r" * int(config["reason_size"])})
        return f"answer of {len(str(answer))} chars"

    script: list[Any] = [tool_call("grow", {})]
    if config.get("reason_size"):
        script.append(tool_call("ask", {}))
    script.append("bulky done")
    state = {"seed": "s" * int(config.get("state_size", 1)), "small": 1}
    manager = NotesManager(int(config.get("notes_size", 0)))
    return Agent(model=LoggingModel(script, config), tools=[grow, ask], state=state, conversation_manager=manager)


class NotesManager(NullConversationManager):
    """Keeps every message and, after each invocation, ``size`` bytes of notes in its state."""

    def __init__(self, size: int) -> None:
        self.size = size

    def apply_management(self, run: RunState) -> None:
        if self.size:
            run.conversation_manager_state["notes"] = "n" * self.size


@registry.register("booking")
def booking_agent(config: dict[str, Any]) -> Agent:
    """Books a flight and a hotel and charges the card (each with a compensation that logs
    ``undo <undo key>``), then its model fails for good (``ModelAuthError``); or, with
    ``config["script"] == "wait"``, asks for approval after them (a cancel catches it waiting).
    ``compensate_on`` from the config (default: failed); ``max_tool_calls``: a budget. The hotel's undo blocks
    ``config["sleep"]`` s on its first attempt (writing ``started_marker``): a worker kill catches it."""

    def undo(item: Any) -> None:
        log(config, f"undo-start {item.undo_key} {item.output}")
        if item.tool == config.get("refuse"):
            raise RuntimeError("the airline refuses to cancel")
        if item.tool == "book_hotel":
            time.sleep(_sleep_once({**config, "once": True}))
        log(config, f"undo-end {item.undo_key}")

    @tool(compensate=undo)
    def book_flight(to: str, context: ToolContext) -> str:
        """Book a flight."""
        log(config, f"book {context.idempotency_key}")
        return f"flight to {to}"

    @tool(compensate=undo)
    def book_hotel(city: str, context: ToolContext) -> str:
        """Book a hotel."""
        log(config, f"book {context.idempotency_key}")
        return f"hotel in {city}"

    @tool(compensate=undo)
    def charge_card(amount: int, context: ToolContext) -> str:
        """Charge the card."""
        log(config, f"book {context.idempotency_key}")
        return f"charged {amount}"

    @tool
    def approve(what: str, context: ToolContext) -> str:
        """Ask a human."""
        return str(context.interrupt("approve", {"what": what}))

    script: list[Any] = [
        tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
        tool_call("book_hotel", {"city": "Lisbon"}, tool_use_id="hotel"),
        tool_call("charge_card", {"amount": 740}, tool_use_id="charge"),
        tool_call("approve", {"what": "trip"}, tool_use_id="ask") if config.get("script") == "wait" else ModelAuthError("ticketing down"),
        "done",
    ]
    return Agent(
        model=LoggingModel(script, config),
        tools=[book_flight, book_hotel, charge_card, approve],
        compensate_on=tuple(config.get("compensate_on", ("failed",))),
        conversation_manager=NullConversationManager(),
        budget=Budget(max_tool_calls=int(config["max_tool_calls"])) if config.get("max_tool_calls") else None,
    )


@registry.register("trip")
def trip_agent(config: dict[str, Any]) -> Agent:
    """Asks its agent tool ``booker`` (the flight and the hotel, with compensations) and then
    charges the card itself; then its model fails for good. Compensates on failure."""
    booking = booking_agent(config)
    tools = booking.tool_registry
    booker = Agent(
        model=LoggingModel(
            [
                tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
                tool_call("book_hotel", {"city": "Lisbon"}, tool_use_id="hotel"),
                "booked",
            ],
            config,
            label="booker",
        ),
        tools=[tools.get("book_flight"), tools.get("book_hotel")],
        name="booker",
        description="Books flights and hotels.",
    )
    script: list[Any] = [
        tool_call("booker", {"input": "Lisbon"}, tool_use_id="booker"),
        tool_call("charge_card", {"amount": 740}, tool_use_id="charge"),
        ModelAuthError("ticketing down"),
    ]
    return Agent(model=LoggingModel(script, config, label="parent"), tools=[booker, tools.get("charge_card")], compensate_on=("failed",))
