"""Strands' hooks on Tether: the registry's semantics, the event sequence of a run, and what a
Strands hook changes (cancel, replaced tool or input, rewritten result, retry, interrupt) taking
effect through Tether's events; each compared with the real strands package where it runs."""

from __future__ import annotations

from typing import Any

import pytest
import strands.hooks as sh

from tether import Agent, ModelError, ScriptedModel
from tether.errors import ConfigurationError
from tether.hooks import BeforeToolCall
from tether.strands import hooks as th
from tether.strands.hooks import fire_agent_initialized, to_tether_hooks
from tether.strands.tools import to_tether_tools, tool

from ._helpers import call, strands_agent, tool_results


def make_tools(pkg: Any) -> list[Any]:
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    def sub(a: int, b: int) -> int:
        """Subtract."""
        return a - b

    return [pkg(add), pkg(sub)]


def recorder(mod: Any, names: list[str]) -> Any:
    """A provider recording every event class it sees (by name), for ``mod``'s events."""

    class Recorder:
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            for kind in (
                mod.BeforeInvocationEvent, mod.AfterInvocationEvent, mod.MessageAddedEvent, mod.BeforeModelCallEvent,
                mod.AfterModelCallEvent, mod.BeforeToolCallEvent, mod.AfterToolCallEvent,
            ):  # fmt: skip
                registry.add_callback(kind, lambda event: names.append(type(event).__name__))

    return Recorder()


class On:
    """A provider adding one callback for one event type (explicit: this module's annotations are strings)."""

    def __init__(self, event_type: Any, callback: Any) -> None:
        self.event_type, self.callback = event_type, callback

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.event_type, self.callback)


def run_both(script: list[Any], hooks_for: Any) -> tuple[Any, Any]:
    """Run ``script`` on a real Strands agent and on tether.Agent with the facade's adapters,
    each with ``hooks_for(module)``'s hooks; returns both agents."""
    import strands

    theirs = strands_agent(list(script), tools=make_tools(strands.tool), hooks=hooks_for(sh))
    theirs("go")
    ours = Agent(model=ScriptedModel(list(script)), tools=to_tether_tools(make_tools(tool)), hooks=to_tether_hooks(hooks_for(th)))
    ours("go")
    return theirs, ours


SCRIPT = [call("add", {"a": 1, "b": 2}, "u1"), "three"]


def test_the_event_sequence_of_a_tool_cycle_is_strands() -> None:
    seen: dict[Any, list[str]] = {sh: [], th: []}
    theirs, ours = run_both(SCRIPT, lambda mod: [recorder(mod, seen[mod])])
    assert seen[th] == seen[sh]
    assert seen[th][0] == "BeforeInvocationEvent" and seen[th][-1] == "AfterInvocationEvent"
    assert tool_results(ours.messages) == tool_results(theirs.messages)


@pytest.mark.parametrize("cancel", [True, "not allowed"])
def test_cancel_tool(cancel: Any) -> None:
    def hooks_for(mod: Any) -> list[Any]:
        def before(event: Any) -> None:
            event.cancel_tool = cancel

        return [On(mod.BeforeToolCallEvent, before)]

    theirs, ours = run_both(SCRIPT, hooks_for)
    assert tool_results(ours.messages) == tool_results(theirs.messages)
    assert tool_results(ours.messages)[0]["status"] == "error"


@pytest.mark.parametrize("cancel", [True, "not allowed"])
def test_the_after_event_of_a_cancelled_call_carries_its_cancel_message(cancel: Any) -> None:
    seen: dict[Any, list[Any]] = {sh: [], th: []}

    def hooks_for(mod: Any) -> list[Any]:
        def before(event: Any) -> None:
            event.cancel_tool = cancel

        def after(event: Any) -> None:
            seen[mod].append((event.cancel_message, event.selected_tool is None, event.exception, event.result["content"]))

        return [On(mod.BeforeToolCallEvent, before), On(mod.AfterToolCallEvent, after)]

    run_both(SCRIPT, hooks_for)
    assert seen[th] == seen[sh]
    assert seen[th][0][0] == (cancel if isinstance(cancel, str) else "tool cancelled by user")


def test_a_call_to_an_unknown_tool_is_answered_as_in_strands() -> None:
    seen: dict[Any, list[Any]] = {sh: [], th: []}

    def hooks_for(mod: Any) -> list[Any]:
        def after(event: Any) -> None:
            seen[mod].append((event.cancel_message, event.selected_tool, str(event.exception), event.result))

        return [On(mod.AfterToolCallEvent, after)]

    theirs, ours = run_both([call("no_such_tool", {"x": 1}, "u1"), "done"], hooks_for)
    assert tool_results(ours.messages) == tool_results(theirs.messages)
    assert tool_results(ours.messages)[0]["content"] == [{"text": "Unknown tool: no_such_tool"}]
    assert seen[th] == seen[sh]


def test_an_unknown_tool_is_answered_as_in_strands_without_any_hook() -> None:
    from tether.strands import Agent as FacadeAgent

    theirs = strands_agent([call("no_such_tool", {"x": 1}, "u1"), "done"])
    theirs("go")
    ours = FacadeAgent(model=ScriptedModel([call("no_such_tool", {"x": 1}, "u1"), "done"]), callback_handler=None)
    ours("go")
    assert tool_results(ours.messages) == tool_results(theirs.messages)


def test_replacing_the_selected_tool_and_the_input() -> None:
    def hooks_for(mod: Any) -> list[Any]:
        def before(event: Any) -> None:
            event.tool_use = {**event.tool_use, "input": {"a": 10, "b": 2}}
            event.selected_tool = event.agent.tool_registry.registry["sub"] if mod is sh else event.agent.tool_registry.get("sub")

        return [On(mod.BeforeToolCallEvent, before)]

    theirs, ours = run_both(SCRIPT, hooks_for)
    assert tool_results(ours.messages) == tool_results(theirs.messages)
    assert tool_results(ours.messages)[0]["content"] == [{"text": "8"}]


def test_renaming_the_call_runs_the_tool_of_that_name() -> None:
    def hooks_for(mod: Any) -> list[Any]:
        def before(event: Any) -> None:
            event.tool_use = {**event.tool_use, "name": "sub"}

        return [On(mod.BeforeToolCallEvent, before)]

    theirs, ours = run_both(SCRIPT, hooks_for)
    assert tool_results(ours.messages) == tool_results(theirs.messages) and tool_results(ours.messages)[0]["content"] == [{"text": "-1"}]


def test_rewriting_the_result_after_the_call() -> None:
    def hooks_for(mod: Any) -> list[Any]:
        def after(event: Any) -> None:
            event.result = {**event.result, "content": [{"text": "redacted"}]}

        return [On(mod.AfterToolCallEvent, after)]

    theirs, ours = run_both(SCRIPT, hooks_for)
    assert tool_results(ours.messages) == tool_results(theirs.messages)
    assert tool_results(ours.messages)[0]["content"] == [{"text": "redacted"}]


def test_callback_order_before_in_order_after_reversed_with_orders() -> None:
    def hooks_for(mod: Any, log: list[str]) -> list[Any]:
        class Provider:
            def register_hooks(self, registry: Any, **kwargs: Any) -> None:
                registry.add_callback(mod.BeforeModelCallEvent, lambda e: log.append("b1"))
                registry.add_callback(mod.BeforeModelCallEvent, lambda e: log.append("b-late"), order=mod.HookOrder.SDK_LAST)
                registry.add_callback(mod.BeforeModelCallEvent, lambda e: log.append("b2"))
                registry.add_callback(mod.AfterModelCallEvent, lambda e: log.append("a1"))
                registry.add_callback(mod.AfterModelCallEvent, lambda e: log.append("a2"))
                registry.add_callback(mod.AfterModelCallEvent, lambda e: log.append("a-first"), order=mod.HookOrder.SDK_FIRST)

        return [Provider()]

    logs: dict[Any, list[str]] = {sh: [], th: []}
    run_both(["hi"], lambda mod: hooks_for(mod, logs[mod]))
    assert logs[th] == logs[sh] == ["b1", "b2", "b-late", "a-first", "a2", "a1"]


@pytest.mark.parametrize("mod", [sh, th], ids=["strands", "tether"])
def test_union_annotations_and_event_lists_register_for_each_type(mod: Any) -> None:
    registry = mod.HookRegistry()
    log: list[str] = []

    def both(event: Any) -> None:
        log.append(type(event).__name__)

    both.__annotations__ = {"event": mod.BeforeModelCallEvent | mod.AfterModelCallEvent, "return": None}

    registry.add_callback(None, both)
    registry.add_callback([mod.MessageAddedEvent], both)
    registry.invoke_callbacks(mod.BeforeModelCallEvent(agent=None))
    registry.invoke_callbacks(mod.AfterModelCallEvent(agent=None))
    registry.invoke_callbacks(mod.MessageAddedEvent(agent=None, message={}))
    assert log == ["BeforeModelCallEvent", "AfterModelCallEvent", "MessageAddedEvent"]
    assert registry.has_callbacks()


def test_event_attributes_are_write_protected_as_in_strands() -> None:
    for mod in (sh, th):
        event = mod.BeforeToolCallEvent(
            agent=None, selected_tool=None, tool_use={"toolUseId": "x", "name": "n", "input": {}}, invocation_state={}
        )
        event.cancel_tool = True
        with pytest.raises(AttributeError, match="not writable"):
            event.invocation_state = {}
        after = mod.AfterModelCallEvent(agent=None)
        after.retry = True
        with pytest.raises(AttributeError):
            after.exception = None
        assert after.should_reverse_callbacks and not event.should_reverse_callbacks


def test_registry_refusals_match_strands() -> None:
    registry = th.HookRegistry()

    async def init(event: th.AgentInitializedEvent) -> None: ...

    with pytest.raises(ValueError, match="synchronous"):
        registry.add_callback(th.AgentInitializedEvent, init)
    with pytest.raises(ValueError, match="cannot be empty"):
        registry.add_callback([], lambda e: None)
    with pytest.raises(ConfigurationError, match="annotate"):
        registry.add_callback(None, lambda e: None)
    with pytest.raises(ValueError, match="Invalid event type"):
        registry.add_callback([int], lambda e: None)

    async def later(event: th.BeforeModelCallEvent) -> None: ...

    registry.add_callback(None, later)
    with pytest.raises(RuntimeError, match="invoke_callbacks_async"):
        registry.invoke_callbacks(th.BeforeModelCallEvent(agent=None))


def test_after_model_retry_calls_the_model_again() -> None:
    attempts: list[str] = []

    def after(event: th.AfterModelCallEvent) -> None:
        attempts.append("error" if event.exception else str(event.stop_response.stop_reason if event.stop_response else None))
        if event.exception is not None:
            event.retry = True

    agent = Agent(model=ScriptedModel([ModelError("flaky"), "ok"]), hooks=to_tether_hooks([after]))
    assert str(agent("go")).strip() == "ok"
    assert attempts == ["error", "end_turn"]


def test_an_interrupt_from_a_before_tool_hook_stops_and_resumes() -> None:
    def approve(event: th.BeforeToolCallEvent) -> None:
        answer = event.interrupt("approve", reason={"tool": event.tool_use["name"]})
        if answer != "yes":
            event.cancel_tool = "denied"

    agent = Agent(
        model=ScriptedModel([call("add", {"a": 1, "b": 2}), "done"]),
        tools=to_tether_tools(make_tools(tool)),
        hooks=to_tether_hooks([approve]),
    )
    first = agent("go")
    assert first.stop_reason == "interrupt" and first.interrupts[0].reason == {"tool": "add"}
    agent([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
    assert tool_results(agent.messages)[0]["content"] == [{"text": "3"}]


@pytest.mark.parametrize(
    ("event_type", "attribute", "value"),
    [
        ("BeforeInvocationEvent", "cancel", True),
        ("BeforeModelCallEvent", "cancel", "stop"),
        ("AfterInvocationEvent", "resume", "again"),
        ("AfterToolCallEvent", "retry", True),
    ],
)
def test_writes_tether_cannot_honour_are_refused_by_name(event_type: str, attribute: str, value: Any) -> None:
    def hook(event: Any) -> None:
        setattr(event, attribute, value)

    registry = th.HookRegistry()
    registry.add_callback(getattr(th, event_type), hook)
    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 2}), "done"]), tools=to_tether_tools(make_tools(tool)))
    agent.hooks = registry
    with pytest.raises(ConfigurationError, match=f"{event_type}.{attribute}"):
        agent("go")


def test_the_facade_registry_as_an_agents_hooks_takes_callbacks_added_later() -> None:
    agent = Agent(model=ScriptedModel([call("add", {"a": 1, "b": 2}), "done"]), tools=to_tether_tools(make_tools(tool)))
    agent.hooks = th.HookRegistry()
    log: list[str] = []
    for item in to_tether_hooks([recorder(th, log)]):
        agent.hooks.add(item)
    agent.hooks.add_callback(BeforeToolCall, lambda e: log.append("tether:BeforeToolCall"))  # Tether's events too
    agent.hooks.add_callback(th.AfterToolCallEvent, lambda e: log.append("late"))
    agent("go")
    i = log.index("BeforeToolCallEvent")
    assert log[i - 1] == "tether:BeforeToolCall"  # a Before event: Tether's callbacks, then Strands'
    assert log[i + 1 : i + 3] == ["late", "AfterToolCallEvent"]  # After events: reversed


def test_fire_agent_initialized_on_the_registry_or_the_bridge() -> None:
    seen: list[Any] = []

    def init(event: th.AgentInitializedEvent) -> None:
        seen.append(event.agent)

    items = to_tether_hooks([init])
    agent = Agent(model=ScriptedModel(["x"]), hooks=items)
    fire_agent_initialized(agent, items)
    registry = th.HookRegistry()
    registry.add_callback(None, init)
    fire_agent_initialized(agent, registry)
    assert seen == [agent, agent]
    assert to_tether_hooks(None) == []
