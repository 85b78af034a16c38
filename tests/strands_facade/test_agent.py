"""The agent facade, ``tether.strands.Agent``, against the real strands-agents 1.62.

The same scripted exchange runs on Strands (its model a ``strands.models.Model`` subclass) and
on the facade (its model a Tether model yielding the same Converse chunks); what a program sees
must be equal: stream events, callback-handler calls, printed output, messages, results.
Other test files of this package import the fakes from here.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pydantic
import pytest

import tether.strands as ts
from tether.errors import ConfigurationError, TetherError
from tether.hooks import AfterInvocation, BeforeInvocation, BeforeToolCall
from tether.strands.agent.conversation_manager import NullConversationManager, SlidingWindowConversationManager
from tether.strands.handlers import PrintingCallbackHandler
from tether.types import ModelRequest, StreamEvent

Turn = list[dict[str, Any]]


def chunks(turn: Turn, usage: tuple[int, int] = (3, 2), stop: str | None = None) -> list[dict[str, Any]]:
    """The Converse chunks of one reply; a block is ``{"text"}``, ``{"reasoning"}`` or ``{"name", "id", "input"}``."""
    out: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for block in turn:
        if "text" in block:
            delta: dict[str, Any] = {"text": block["text"]}
            out += [{"contentBlockStart": {"start": {}}}, {"contentBlockDelta": {"delta": delta}}, {"contentBlockStop": {}}]
        elif "reasoning" in block:
            delta = {"reasoningContent": {"text": block["reasoning"]}}
            out += [{"contentBlockStart": {"start": {}}}, {"contentBlockDelta": {"delta": delta}}, {"contentBlockStop": {}}]
        else:
            start = {"toolUse": {"name": block["name"], "toolUseId": block["id"]}}
            delta = {"toolUse": {"input": json.dumps(block["input"])}}
            out += [{"contentBlockStart": {"start": start}}, {"contentBlockDelta": {"delta": delta}}, {"contentBlockStop": {}}]
    reason = stop or ("tool_use" if any("name" in block for block in turn) else "end_turn")
    usage_data = {"inputTokens": usage[0], "outputTokens": usage[1], "totalTokens": sum(usage)}
    out += [{"messageStop": {"stopReason": reason}}, {"metadata": {"usage": usage_data, "metrics": {"latencyMs": 1}}}]
    return out


class TetherFake:
    """A Tether model replaying scripted replies as Converse chunks (``stops``: stop reasons by reply)."""

    model_id = "fake"

    def __init__(self, turns: list[Turn], stops: list[str | None] | None = None) -> None:
        self.turns = list(turns)
        self.stops = list(stops or [None] * len(turns))
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn, stop = self.turns.pop(0), self.stops.pop(0)
        for chunk in chunks(turn, stop=stop):
            yield chunk  # type: ignore[misc]


def strands_fake(turns: list[Turn], stops: list[str | None] | None = None) -> Any:
    """The same script as a ``strands.models.Model`` subclass (for the real package)."""
    from strands.models.model import Model

    class StrandsFake(Model):  # type: ignore[misc]
        def __init__(self) -> None:
            self.turns = list(turns)
            self.stops = list(stops or [None] * len(turns))

        def update_config(self, **config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError
            yield

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            turn, stop = self.turns.pop(0), self.stops.pop(0)
            for chunk in chunks(turn, stop=stop):
                yield chunk

    return StrandsFake()


_INTERNAL = {
    "agent",
    "event_loop_cycle_id",
    "event_loop_cycle_trace",
    "event_loop_cycle_span",
    "event_loop_parent_cycle_id",
    "event_loop_parent_span",
    "request_state",
    "model",
    "messages",
    "system_prompt",
    "system_prompt_content",
    "tool_config",
    "trace_span",
}
"""Keys Strands adds to events and invocation state from its own internals (spans, cycle ids)."""


def plain(message: dict[str, Any]) -> dict[str, Any]:
    """A message without the bookkeeping Strands 1.62 adds (``metadata``, ``tracking_id``)."""
    return {"role": message["role"], "content": message["content"]}


def normalized(event: dict[str, Any]) -> dict[str, Any]:
    """An event without Strands' internals; messages plain, the result as (stop reason, str)."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key in _INTERNAL:
            continue
        if key == "message":
            value = plain(value)
        elif key == "result":
            value = (value.stop_reason, str(value))
        out[key] = value
    return out


def word_tools(module: Any) -> list[Any]:
    """A text tool and a context tool, built with ``module.tool`` (strands or tether.strands)."""

    @module.tool
    def shout(text: str) -> str:
        """Upper-case a text.

        Args:
            text: The text.
        """
        return text.upper()

    return [shout]


TOOL_EXCHANGE: list[Turn] = [
    [{"text": "let me shout"}, {"name": "shout", "id": "t1", "input": {"text": "hi"}}],
    [{"reasoning": "done"}, {"text": "HI it is"}],
]


async def collect(agent: Any, prompt: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return [normalized(event) async for event in agent.stream_async(prompt, **kwargs)]


def run_both(turns: list[Turn], prompt: Any = "hi", **kwargs: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any, Any]:
    """The normalized events and the agents of the exchange on Strands and on the facade."""
    import strands

    theirs = strands.Agent(model=strands_fake(turns), tools=word_tools(strands), callback_handler=None)
    ours = ts.Agent(model=TetherFake(turns), tools=word_tools(ts), callback_handler=None)
    with pytest.warns() if any(k not in ("invocation_state", "structured_output_model") for k in kwargs) else _nothing():
        expected = asyncio.run(collect(theirs, prompt, **kwargs))
        got = asyncio.run(collect(ours, prompt, **kwargs))
    return expected, got, theirs, ours


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# -- stream events ------------------------------------------------------------------------


def test_stream_events_are_strands_events_in_strands_order() -> None:
    expected, got, _, _ = run_both(TOOL_EXCHANGE, invocation_state={"user": "ann"})
    assert got == expected
    kinds = [next(iter(event)) for event in got]
    assert kinds[:3] == ["init_event_loop", "start", "start_event_loop"]
    assert kinds[-1] == "result"
    assert {"data": "HI it is", "delta": {"text": "HI it is"}, "user": "ann"} in got


def test_messages_after_the_exchange_equal_strands() -> None:
    _, _, theirs, ours = run_both(TOOL_EXCHANGE)
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]


def test_keyword_arguments_are_the_invocation_state_as_in_strands() -> None:
    expected, got, _, _ = run_both([[{"text": "ok"}]], extra="x", invocation_state={"user": "ann"})
    assert got == expected
    assert got[0] == {"init_event_loop": True, "extra": "x", "invocation_state": {"user": "ann"}}


def test_callback_handler_receives_every_yielded_event_then_the_result() -> None:
    calls: list[dict[str, Any]] = []
    agent = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=lambda **event: calls.append(event))

    async def stream() -> list[dict[str, Any]]:
        return [event async for event in agent.stream_async("hi")]

    events = asyncio.run(stream())
    assert calls == events
    assert isinstance(calls[-1]["result"], ts.agent.AgentResult)


def test_invoke_feeds_the_callback_handler_too() -> None:
    calls: list[dict[str, Any]] = []
    agent = ts.Agent(model=TetherFake([[{"text": "hello"}]]), callback_handler=lambda **event: calls.append(event))
    result = agent("hi")
    assert [c["data"] for c in calls if "data" in c] == ["hello"]
    assert calls[-1] == {"result": result}


def test_a_per_call_callback_handler_replaces_the_agents() -> None:
    mine: list[str] = []
    agent = ts.Agent(model=TetherFake([[{"text": "hello"}]]), callback_handler=lambda **event: pytest.fail("agent's handler called"))
    with pytest.warns(UserWarning, match="kwargs"):
        agent("hi", callback_handler=lambda **event: mine.append(event.get("data", "")))
    assert "hello" in mine


# -- tools: invocation state and context ----------------------------------------------


def test_invocation_state_reaches_a_context_tool() -> None:
    seen: list[Any] = []

    @ts.tool(context="context")
    def probe(context: ts.ToolContext) -> str:
        """Look at the context."""
        seen.append((context.invocation_state.get("user"), context.agent))
        return "ok"

    model = TetherFake([[{"name": "probe", "id": "p1", "input": {}}], [{"text": "done"}]])
    agent = ts.Agent(model=model, tools=[probe], callback_handler=None)
    agent("hi", invocation_state={"user": "ann"})
    assert seen == [("ann", agent)]


# -- AgentResult ------------------------------------------------------------------------


def test_result_fields_equal_strands() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake(TOOL_EXCHANGE), tools=word_tools(strands), callback_handler=None)("hi")
    ours = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=None)("hi")
    assert str(ours) == str(theirs) == "HI it is\n"
    assert ours.stop_reason == theirs.stop_reason == "end_turn"
    assert plain(ours.message) == plain(theirs.message)  # type: ignore[arg-type]
    assert ours.metrics.accumulated_usage == theirs.metrics.accumulated_usage == {"inputTokens": 6, "outputTokens": 4, "totalTokens": 10}
    assert ours.metrics.cycle_count == theirs.metrics.cycle_count == 2
    assert ours.metrics.tool_metrics["shout"].call_count == theirs.metrics.tool_metrics["shout"].call_count == 1
    assert ours.metrics.tool_metrics["shout"].success_count == theirs.metrics.tool_metrics["shout"].success_count == 1
    assert ours.interrupts is None and theirs.interrupts is None
    assert ours.structured_output is None and theirs.structured_output is None


def test_result_round_trips_through_strands_json_both_ways() -> None:
    import strands

    ours = ts.Agent(model=TetherFake([[{"text": "hello"}]]), callback_handler=None)("hi")
    theirs = strands.agent.AgentResult.from_dict(ours.to_dict())
    assert str(theirs) == str(ours) == "hello\n"
    back = ts.agent.AgentResult.from_dict(theirs.to_dict())
    assert str(back) == "hello\n" and back.stop_reason == "end_turn"
    with pytest.raises(TypeError):
        ts.agent.AgentResult.from_dict({"type": "something else"})


class Person(pydantic.BaseModel):
    name: str
    age: int


def test_structured_output_model_per_call_and_str_as_json() -> None:
    agent = ts.Agent(model=TetherFake([[{"name": "Person", "id": "s1", "input": {"name": "Ann", "age": 3}}]]), callback_handler=None)
    result = agent("who?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ann", age=3)
    assert str(result) == Person(name="Ann", age=3).model_dump_json()


def test_structured_output_exchange_equals_strands() -> None:
    """Events (``structured_output`` before the tool result), messages and stop reason as in Strands."""
    script: list[Turn] = [[{"name": "Person", "id": "s1", "input": {"name": "Ann", "age": 3}}]]
    expected, got, theirs, ours = run_both(script, "who?", structured_output_model=Person)
    assert got == expected
    assert {"structured_output": Person(name="Ann", age=3)} in got
    assert got[-1]["result"] == ("tool_use", Person(name="Ann", age=3).model_dump_json())
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]


def test_structured_output_model_of_the_agent_is_the_default() -> None:
    agent = ts.Agent(
        model=TetherFake([[{"name": "Person", "id": "s1", "input": {"name": "Bo", "age": 4}}]]),
        structured_output_model=Person,
        callback_handler=None,
    )
    assert agent("who?").structured_output == Person(name="Bo", age=4)


def test_structured_output_leaves_the_conversation_as_it_was() -> None:
    agent = ts.Agent(
        model=TetherFake([[{"text": "hello"}], [{"name": "Person", "id": "s1", "input": {"name": "Cy", "age": 5}}]]),
        callback_handler=None,
    )
    agent("hi")
    before = [dict(m) for m in agent.messages]
    with pytest.warns(DeprecationWarning):
        person = agent.structured_output(Person, "extract")
    assert person == Person(name="Cy", age=5)
    assert agent.messages == before


def test_structured_output_without_prompt_or_history_is_strands_value_error() -> None:
    agent = ts.Agent(model=TetherFake([]), callback_handler=None)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="No conversation history or prompt provided"):
        agent.structured_output(Person)


# -- direct tool calls ----------------------------------------------------------------


def _without_ids(messages: list[Any]) -> list[Any]:
    text = json.dumps([plain(m) for m in messages])
    for message in messages:
        for block in message["content"]:
            for key in ("toolUse", "toolResult"):
                if key in block:
                    text = text.replace(block[key]["toolUseId"], "ID")
    return json.loads(text)  # type: ignore[no-any-return]


def test_direct_tool_call_returns_the_result_and_records_strands_four_messages() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([]), tools=word_tools(strands), callback_handler=None)
    ours = ts.Agent(model=TetherFake([]), tools=word_tools(ts), callback_handler=None)
    expected = theirs.tool.shout(text="hey")
    got = ours.tool.shout(text="hey")
    assert got["status"] == expected["status"] == "success"
    assert got["content"] == expected["content"] == [{"text": "HEY"}]
    assert got["toolUseId"].startswith("tooluse_shout_")
    assert len(ours.messages) == 4
    assert _without_ids(ours.messages) == _without_ids(theirs.messages)


def test_direct_tool_call_with_override_message_equals_strands() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([]), tools=word_tools(strands), callback_handler=None)
    ours = ts.Agent(model=TetherFake([]), tools=word_tools(ts), callback_handler=None)
    theirs.tool.shout(text="a", user_message_override="please")
    ours.tool.shout(text="a", user_message_override="please")
    assert _without_ids(ours.messages) == _without_ids(theirs.messages)


def test_direct_tool_call_not_recorded() -> None:
    agent = ts.Agent(model=TetherFake([]), tools=word_tools(ts), callback_handler=None, record_direct_tool_call=False)
    assert agent.tool.shout(text="x")["content"] == [{"text": "X"}]
    assert agent.messages == []
    recorded = ts.Agent(model=TetherFake([]), tools=word_tools(ts), callback_handler=None)
    recorded.tool.shout(text="x", record_direct_tool_call=False)
    assert recorded.messages == []


def test_direct_tool_call_by_underscore_name_of_a_dashed_tool_and_unknown_names() -> None:
    @ts.tool(name="get-time")
    def get_time() -> str:
        """The time."""
        return "noon"

    agent = ts.Agent(model=TetherFake([]), tools=[get_time], callback_handler=None)
    assert agent.tool.get_time()["content"] == [{"text": "noon"}]
    assert agent.messages[1]["content"][0]["toolUse"]["name"] == "get-time"
    with pytest.raises(AttributeError, match="Tool 'nope' not found"):
        agent.tool.nope()


def test_direct_tool_call_gives_the_tool_a_context_with_the_arguments_as_invocation_state() -> None:
    seen: list[Any] = []

    @ts.tool(context="context")
    def probe(x: int, context: ts.ToolContext) -> str:
        """Probe.

        Args:
            x: A number.
        """
        seen.append((context.agent, dict(context.invocation_state), context.tool_use["name"]))
        return str(x)

    agent = ts.Agent(model=TetherFake([]), tools=[probe], callback_handler=None)
    agent.tool.probe(x=2)
    assert seen == [(agent, {"x": 2, "agent": agent}, "probe")]  # Strands adds its loop internals too (see from-strands.md)


def test_direct_tool_call_records_only_parameters_the_spec_declares() -> None:
    agent = ts.Agent(model=TetherFake([]), tools=word_tools(ts), callback_handler=None)
    agent.tool.shout(text="a", extra=1)
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"text": "a"}


# -- agents as tools ------------------------------------------------------------------


def test_agent_as_tool_spec_equals_strands() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([]), name="researcher", callback_handler=None).as_tool()
    ours = ts.Agent(model=TetherFake([]), name="researcher", callback_handler=None).as_tool()
    assert ours.spec == theirs.tool_spec
    described = ts.Agent(model=TetherFake([]), name="r", description="Finds things", callback_handler=None).as_tool()
    assert described.spec["description"] == "Finds things"


def test_an_agent_in_tools_runs_as_a_tool_and_returns_its_text() -> None:
    child_events: list[dict[str, Any]] = []
    child = ts.Agent(model=TetherFake([[{"text": "found it"}]]), name="researcher", callback_handler=lambda **e: child_events.append(e))
    parent = ts.Agent(
        model=TetherFake([[{"name": "researcher", "id": "c1", "input": {"input": "look"}}], [{"text": "done"}]]),
        tools=[child],
        callback_handler=None,
    )
    result = parent("go")
    assert str(result) == "done\n"
    tool_result = parent.messages[2]["content"][0]["toolResult"]
    assert tool_result["status"] == "success"
    assert "found it" in json.dumps(tool_result["content"])
    assert [e["data"] for e in child_events if "data" in e] == ["found it"]  # the child's handler, as in Strands


def test_agent_as_tool_exchange_leaves_strands_messages() -> None:
    """The parent's conversation (the child's answer as Strands renders it: ``str(result)``)."""
    import strands

    parent_script: list[Turn] = [[{"name": "researcher", "id": "c1", "input": {"input": "look"}}], [{"text": "done"}]]
    child_script: list[Turn] = [[{"text": "found it"}]]
    conversations = []
    for module, parent_model, child_model in (
        (strands, strands_fake(parent_script), strands_fake(child_script)),
        (ts, TetherFake(parent_script), TetherFake(child_script)),
    ):
        child = module.Agent(model=child_model, name="researcher", callback_handler=None)
        parent = module.Agent(model=parent_model, tools=[child], callback_handler=None)
        parent("go")
        conversations.append([plain(m) for m in parent.messages])
    assert conversations[1] == conversations[0]
    assert conversations[1][2]["content"][0]["toolResult"]["content"] == [{"text": "found it\n"}]


def test_as_tool_delegate_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="delegate"):
        ts.Agent(model=TetherFake([]), name="r", callback_handler=None).as_tool(delegate=True)


# -- construction ---------------------------------------------------------------------


def test_strands_defaults() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([]))
    ours = ts.Agent(model=TetherFake([]))
    assert (ours.name, ours.agent_id) == (theirs.name, theirs.agent_id) == ("Strands Agents", "default")
    assert isinstance(ours.callback_handler, PrintingCallbackHandler)
    assert type(theirs.callback_handler).__name__ == "PrintingCallbackHandler"
    assert isinstance(ours.conversation_manager, SlidingWindowConversationManager)
    assert ours.conversation_manager.window_size == theirs.conversation_manager.window_size == 40
    assert ours.record_direct_tool_call is theirs.record_direct_tool_call is True
    assert ours.description is theirs.description is None


def test_state_as_dict_or_agent_state_and_its_api() -> None:
    from tether.strands.agent import AgentState

    for state in ({"n": 1}, AgentState({"n": 1})):
        agent = ts.Agent(model=TetherFake([]), state=state, callback_handler=None)
        assert agent.state.get("n") == 1
        agent.state.set("m", [1])
        assert agent.state.get() == {"n": 1, "m": [1]}
        agent.state.delete("n")
        assert agent.state.get() == {"m": [1]}
        assert isinstance(agent.state, AgentState)


def test_system_prompt_messages_and_tool_names() -> None:
    history: list[Any] = [{"role": "user", "content": [{"text": "x"}]}]
    agent = ts.Agent(model=TetherFake([]), tools=word_tools(ts), system_prompt="be brief", messages=history)
    assert agent.system_prompt == "be brief"
    agent.system_prompt = "be kind"
    assert agent.system_prompt == "be kind"
    assert agent.tool_names == ["shout"]
    assert agent.messages == [{"role": "user", "content": [{"text": "x"}]}]


@pytest.mark.parametrize(
    "argument",
    [
        {"load_tools_from_directory": True},
        {"plugins": [object()]},
        {"context_manager": object()},
        {"memory_manager": object()},
        {"structured_output_prompt": "now"},
        {"aux_model": "x"},
        {"retry_strategy": object()},
        {"concurrent_invocation_mode": "unsafe_reentrant"},
    ],
)
def test_arguments_without_a_tether_equivalent_are_refused_by_name(argument: dict[str, Any]) -> None:
    name = next(iter(argument))
    with pytest.raises(ConfigurationError, match=name):
        ts.Agent(model=TetherFake([]), **argument)


class RecordingTracer:
    """Keeps every span's kind and attributes."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, dict[str, Any]]] = []

    def start_span(self, kind: Any, name: str, attributes: Any, parent: Any = None) -> Any:
        from tether.loop.tracing import NULL_SPAN

        self.spans.append((kind, dict(attributes)))
        return NULL_SPAN


def test_trace_attributes_are_on_the_invocation_span() -> None:
    tracer = RecordingTracer()
    agent = ts.Agent(model=TetherFake([[{"text": "hi"}]]), trace_attributes={"session.id": "s1"}, tracer=tracer, callback_handler=None)
    agent("hi")
    assert agent.trace_attributes == {"session.id": "s1"}
    kinds = {kind: attributes for kind, attributes in tracer.spans}
    assert kinds["invocation"]["session.id"] == "s1"
    assert "session.id" not in kinds["model_call"]


def test_a_second_invocation_while_one_runs_is_strands_concurrency_exception() -> None:
    import strands
    from strands.types.exceptions import ConcurrencyException as StrandsConcurrency

    from tether.errors import AgentBusyError
    from tether.strands.types.exceptions import ConcurrencyException

    async def overlap(agent: Any) -> BaseException:
        stream = agent.stream_async("first")
        await stream.__anext__()
        await stream.__anext__()
        await stream.__anext__()
        await stream.__anext__()  # now inside the invocation
        try:
            await agent.invoke_async("second")
        except Exception as exc:
            return exc
        finally:
            await stream.aclose()
        raise AssertionError("the second invocation ran")

    theirs = asyncio.run(overlap(strands.Agent(model=strands_fake([[{"text": "a"}]]), callback_handler=None)))
    ours = asyncio.run(overlap(ts.Agent(model=TetherFake([[{"text": "a"}]]), callback_handler=None)))
    assert isinstance(theirs, StrandsConcurrency)
    assert isinstance(ours, ConcurrencyException) and isinstance(ours, AgentBusyError)


def test_a_recorded_direct_call_while_an_invocation_runs_is_refused() -> None:
    from tether.strands.types.exceptions import ConcurrencyException

    async def overlap(agent: Any) -> None:
        stream = agent.stream_async("first")
        for _ in range(4):
            await stream.__anext__()
        try:
            with pytest.raises(ConcurrencyException, match="record_direct_tool_call=False"):
                await agent._direct_call("shout", {"text": "x"}, None, None)
            assert (await agent._direct_call("shout", {"text": "x"}, None, False))["content"] == [{"text": "X"}]
        finally:
            await stream.aclose()

    asyncio.run(overlap(ts.Agent(model=TetherFake([[{"text": "a"}]]), tools=word_tools(ts), callback_handler=None)))


def test_the_facade_is_a_tether_agent() -> None:
    import tether

    assert isinstance(ts.Agent(model=TetherFake([])), tether.Agent)


# -- snapshots: conversation-manager state in Strands' shape --------------------------


def test_conversation_manager_state_in_snapshots_is_strands_shape() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([]), callback_handler=None).take_snapshot(preset="session")
    ours = ts.Agent(model=TetherFake([]), callback_handler=None).take_snapshot(preset="session")
    assert ours.data["conversation_manager_state"] == theirs.data["conversation_manager_state"]
    null = ts.Agent(model=TetherFake([]), conversation_manager=NullConversationManager(), callback_handler=None)
    expected = strands.Agent(
        model=strands_fake([]), conversation_manager=strands.agent.NullConversationManager(), callback_handler=None
    ).take_snapshot(preset="session")
    assert null.take_snapshot(preset="session").data["conversation_manager_state"] == expected.data["conversation_manager_state"]


def test_a_strands_snapshot_loads_into_the_facade_and_back() -> None:
    import strands

    theirs = strands.Agent(model=strands_fake([[{"text": "hello"}]]), callback_handler=None)
    theirs("hi")
    theirs.state.set("k", "v")
    ours = ts.Agent(model=TetherFake([]), callback_handler=None)
    ours.load_snapshot(theirs.take_snapshot(preset="session"))
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]
    assert ours.state.get("k") == "v"
    again = strands.Agent(model=strands_fake([]), callback_handler=None)
    again.load_snapshot(strands.Snapshot.from_dict(ours.take_snapshot(preset="session").to_dict()))
    assert [plain(m) for m in again.messages] == [plain(m) for m in theirs.messages]


# -- import hygiene -------------------------------------------------------------------


def test_import_tether_strands_imports_neither_strands_nor_provider_sdks() -> None:
    code = (
        "import sys, tether.strands, tether.strands.agent, tether.strands.handlers, tether.strands.types.exceptions, "
        "tether.strands.experimental.checkpoint, tether.strands.agent.conversation_manager\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('strands', 'openai', 'anthropic', 'boto3', 'llama_cpp'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_errors_are_tether_errors() -> None:
    with pytest.raises(TetherError):
        ts.Agent(model=TetherFake([]), plugins=[object()])


# -- interrupts -----------------------------------------------------------------------


def _approval_agent(module: Any, model: Any) -> Any:
    decorate = module.tool(context=True)

    def approve(what: str, tool_context: Any) -> str:
        """Ask for approval.

        Args:
            what: The thing.
        """
        return f"answer {tool_context.interrupt('approval', reason={'what': what})}"

    approve.__annotations__ = {"what": str, "tool_context": module.ToolContext, "return": str}
    return module.Agent(model=model, tools=[decorate(approve)], callback_handler=None)


def _interrupt_ids_out(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        if "tool_interrupt_event" in event:
            raised = event["tool_interrupt_event"]["interrupts"]
            event = {"tool_interrupt_event": {**event["tool_interrupt_event"], "interrupts": [(i.name, i.reason) for i in raised]}}
        elif "result" in event:
            event = {"result": event["result"][0]}
        out.append(event)
    return out


def test_interrupt_and_answer_equal_strands() -> None:
    import strands

    script: list[Turn] = [[{"name": "approve", "id": "a1", "input": {"what": "x"}}], [{"text": "approved"}]]
    runs = []
    for module, model in ((strands, strands_fake(script)), (ts, TetherFake(script))):
        agent = _approval_agent(module, model)
        events = asyncio.run(collect(agent, "hi"))
        interrupts = next(e for e in events if "tool_interrupt_event" in e)["tool_interrupt_event"]["interrupts"]
        answer = [{"interruptResponse": {"interruptId": interrupts[0].id, "response": "yes"}}]
        result = agent(answer)
        runs.append((_interrupt_ids_out(events), str(result), result.stop_reason, [plain(m) for m in agent.messages]))
    assert runs[1] == runs[0]
    assert runs[1][1] == "approved\n"
    answered = {"toolResult": {"toolUseId": "a1", "status": "success", "content": [{"text": "answer yes"}]}}
    assert {"role": "user", "content": [answered]} in runs[1][3]


def test_interrupted_result_renders_as_strands() -> None:
    agent = _approval_agent(ts, TetherFake([[{"name": "approve", "id": "a1", "input": {"what": "x"}}]]))
    result = agent("hi")
    assert result.stop_reason == "interrupt"
    (interrupt,) = result.interrupts
    assert str(result) == str([{"id": interrupt.id, "name": "approval", "reason": {"what": "x"}, "response": None}])


# -- durable runs (Tether's, through the facade) --------------------------------------


def test_a_durable_turn_and_its_resume_give_strands_results(tmp_path: Any) -> None:
    from tether.durable import SQLiteStore

    script: list[Turn] = [[{"name": "approve", "id": "a1", "input": {"what": "x"}}], [{"text": "approved"}]]
    agent = _approval_agent(ts, TetherFake(script))
    agent.store = SQLiteStore(tmp_path / "runs.db")
    first = agent("hi", run_id="r1")
    assert isinstance(first, ts.agent.AgentResult) and first.stop_reason == "interrupt"
    answer = [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}]
    done = agent.resume("r1", answer)
    assert isinstance(done, ts.agent.AgentResult)
    assert str(done) == "approved\n"


# -- hooks ----------------------------------------------------------------------------


def test_add_hook_with_an_explicit_type_a_list_or_the_annotation() -> None:
    seen: list[str] = []

    def on_tool(event: BeforeToolCall) -> None:
        seen.append(f"tool {event.tool_use['name']}")

    def on_any(event: Any) -> None:
        seen.append(type(event).__name__)

    agent = ts.Agent(model=TetherFake(TOOL_EXCHANGE), tools=word_tools(ts), callback_handler=None)
    agent.add_hook(on_tool)
    agent.add_hook(on_any, [BeforeInvocation, AfterInvocation])
    agent("hi")
    assert seen == ["BeforeInvocation", "tool shout", "AfterInvocation"]
    with pytest.raises(ConfigurationError, match="order"):
        agent.add_hook(on_tool, order=5)


def test_cancel_before_an_invocation_stops_it_as_strands() -> None:
    import strands

    results = []
    for module, model in ((strands, strands_fake([[{"text": "never"}]])), (ts, TetherFake([[{"text": "never"}]]))):
        agent = module.Agent(model=model, callback_handler=None)
        agent.cancel()
        results.append(agent("hi").stop_reason)
    assert results == ["cancelled", "cancelled"]
    with pytest.raises(ConfigurationError, match="cancel"):
        ts.Agent(model=TetherFake([]), callback_handler=None).cancel(message="stop")


def test_agent_keeps_the_callers_messages_list_and_model() -> None:
    from tether.strands import Agent as FacadeAgent

    history = [{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [{"text": "hello"}]}]
    agent = FacadeAgent(model="openai:gpt-4o-mini", messages=history, callback_handler=None)  # type: ignore[arg-type]
    assert agent.messages is history
    agent.messages.append({"role": "user", "content": [{"text": "more"}]})
    assert len(history) == 3
