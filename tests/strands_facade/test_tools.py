"""The facade's ``@tool``: the same function through Strands' decorator and ours gives the same
spec and the same result dicts, and runs on ``tether.Agent``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import pydantic
import pytest
import strands

from tether import Agent, ScriptedModel
from tether.strands.tools import DecoratedFunctionTool, ToolContext, normalize_tool_spec, to_tether_tools, tool
from tether.strands.tools import decorator as decorator_module

from ._helpers import call, strands_result, tool_results


class Person(pydantic.BaseModel):
    name: str
    age: int


def f_str(text: str) -> str:
    """Echo.

    Args:
        text: What to echo.
    """
    return text.upper()


def f_int(text: str, sep: str = " ") -> int:
    """Count words.

    A longer description.

    Args:
        text: The text
            spread over two lines.
        sep: The separator.

    Returns:
        The count.
    """
    return len(text.split(sep))


def f_dict(a: int, b: int | None = None) -> dict[str, Any]:
    """A dict that is not a tool result."""
    return {"sum": a + (b or 0), "ünï": "cödé"}


def f_list(n: int) -> list[int]:
    """A list."""
    return list(range(n))


def f_none() -> None:
    """Nothing."""


def f_model(name: str) -> Person:
    """A pydantic model."""
    return Person(name=name, age=3)


def f_object() -> object:
    """Something json cannot encode."""
    return {1, 2}


def f_result(ok: bool) -> dict[str, Any]:
    """A ToolResult dict."""
    return {"status": "success" if ok else "error", "content": [{"text": "done"}, {"json": {"x": 1}}]}


def f_value_error(x: int) -> str:
    """Raises ValueError."""
    raise ValueError(f"bad x {x}")


def f_runtime_error() -> str:
    """Raises RuntimeError."""
    raise RuntimeError("boom")


def f_annotated(city: Annotated[str, "The city name"], days: Annotated[int, "How many days"] = 1, tags: list[str] | None = None) -> str:
    """Weather.

    Args:
        city: overridden by Annotated.
        tags: Optional tags.
    """
    return f"{city}:{days}:{tags}"


async def f_async(text: str) -> dict[str, int]:
    """Async."""
    return {"len": len(text)}


FUNCTIONS: list[Callable[..., Any]] = [
    f_str, f_int, f_dict, f_list, f_none, f_model, f_object, f_result, f_value_error, f_runtime_error, f_annotated, f_async,
]  # fmt: skip

INPUTS: dict[str, list[Any]] = {
    "f_str": [{"text": "hi"}, {}],
    "f_int": [{"text": "a b c"}, {"text": "a,b", "sep": ","}, {"text": 3}],
    "f_dict": [{"a": 1, "b": 2}, {"a": 1}, {"a": "x"}],
    "f_list": [{"n": 3}],
    "f_none": [{}],
    "f_model": [{"name": "Al"}],
    "f_object": [{}],
    "f_result": [{"ok": True}, {"ok": False}],
    "f_value_error": [{"x": 4}],
    "f_runtime_error": [{}],
    "f_annotated": [{"city": "Oslo"}, {"city": "Oslo", "days": 2, "tags": ["a"]}],
    "f_async": [{"text": "abc"}],
}


def run_ours(our_tool: Any, inputs: list[Any]) -> list[dict[str, Any]]:
    """Call ``our_tool`` once per input through a tether.Agent; the recorded toolResults."""
    name = our_tool.tool_name
    script = [call(name, inp, f"t{i}") for i, inp in enumerate(inputs)] + ["done"]
    agent = Agent(model=ScriptedModel(script), tools=to_tether_tools([our_tool]))
    agent("go")
    return tool_results(agent.messages)


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
def test_spec_and_results_match_strands(func: Callable[..., Any]) -> None:
    theirs = strands.tool(func)
    ours = tool(func)
    assert ours.tool_spec == theirs.tool_spec
    expected = [
        strands_result(theirs, {"toolUseId": f"t{i}", "name": func.__name__, "input": inp})[1]
        for i, inp in enumerate(INPUTS[func.__name__])
    ]
    assert run_ours(ours, INPUTS[func.__name__]) == expected


def test_the_model_sees_the_spec_strands_registry_sends() -> None:
    from strands.tools.registry import ToolRegistry

    theirs, ours = strands.tool(f_annotated), tool(f_annotated)
    registry = ToolRegistry()
    registry.process_tools([theirs])
    sent: list[Any] = []

    def record(messages: list[Any]) -> str:
        return "ok"

    model = ScriptedModel(["ok"])
    model.record_requests = True
    agent = Agent(model=model, tools=to_tether_tools([ours]))
    agent("go")
    sent = model.calls[0]["tool_specs"]
    assert sent == registry.get_all_tool_specs()
    assert ours.spec == normalize_tool_spec(theirs.tool_spec)


@pytest.mark.parametrize(
    "options",
    [
        {"name": "renamed"},
        {"description": "Custom."},
        {"inputSchema": {"json": {"type": "object", "properties": {"text": {"type": "string"}}}}},
    ],
)
def test_decorator_options_match_strands(options: dict[str, Any]) -> None:
    assert tool(**options)(f_str).tool_spec == strands.tool(**options)(f_str).tool_spec
    assert tool(**options)(f_str).tool_name == strands.tool(**options)(f_str).tool_name


def test_the_decorated_function_stays_callable_and_binds_as_a_method() -> None:
    ours = tool(f_int)
    assert ours("a b") == 2 and ours.__name__ == "f_int" and ours.__doc__ == f_int.__doc__
    assert isinstance(ours, DecoratedFunctionTool) and ours.tool_type == "function"

    class Counter:
        def __init__(self) -> None:
            self.base = 10

        @tool
        def add(self, n: int) -> int:
            """Add to the base."""
            return self.base + n

    counter = Counter()
    assert counter.add(1) == 11
    assert "self" not in counter.add.tool_spec["inputSchema"]["json"]["properties"]
    assert run_ours(counter.add, [{"n": 5}])[0]["content"] == [{"text": "15"}]


def test_context_true_and_a_named_context_parameter() -> None:
    seen: list[Any] = []

    @tool(context=True)
    def with_ctx(x: int, tool_context: ToolContext) -> str:
        """Uses the context."""
        seen.append(
            (tool_context.tool_use["toolUseId"], tool_context.agent, dict(tool_context.invocation_state), tool_context.idempotency_key)
        )
        return str(x)

    @tool(context="ctx")
    async def named(ctx: ToolContext) -> str:
        """Named context."""
        return ctx.tool_use["name"]

    assert "tool_context" not in with_ctx.tool_spec["inputSchema"]["json"]["properties"]
    assert named.tool_spec["inputSchema"]["json"]["properties"] == {}
    agent = Agent(
        model=ScriptedModel([call("with_ctx", {"x": 1}, "a1"), call("named", {}, "a2"), "done"]), tools=to_tether_tools([with_ctx, named])
    )
    agent("go", invocation_state={"user": "u1"})
    assert tool_results(agent.messages)[1]["content"] == [{"text": "named"}]
    (use_id, ctx_agent, state, key) = seen[0]
    assert use_id == "a1" and ctx_agent is agent and key == "a1"
    assert state["user"] == "u1" and state["agent"] is agent  # Strands puts the agent in invocation_state


def test_context_misuse_is_refused_as_strands_does() -> None:
    def needs(x: int, tool_context: ToolContext) -> str:
        return ""

    with pytest.raises(ValueError, match="must be set"):
        tool(needs)
    with pytest.raises(ValueError, match="must be named 'ctx'"):
        tool(context="ctx")(needs)
    with pytest.raises(ValueError, match="cannot be empty"):
        tool(context="  ")(needs)


def test_an_agent_parameter_receives_the_agent() -> None:
    @tool
    def who(agent: Any) -> str:
        """Names the agent."""
        return type(agent).__name__

    assert "agent" not in who.tool_spec["inputSchema"]["json"]["properties"]
    assert run_ours(who, [{}])[0]["content"] == [{"text": "Agent"}]


def test_an_interrupt_from_a_context_tool_stops_and_resumes() -> None:
    @tool(context=True)
    def approve(amount: int, tool_context: ToolContext) -> str:
        """Needs approval."""
        answer = tool_context.interrupt("approval", reason={"amount": amount})
        return f"approved={answer}"

    agent = Agent(model=ScriptedModel([call("approve", {"amount": 5}), "done"]), tools=to_tether_tools([approve]))
    first = agent("pay")
    assert first.stop_reason == "interrupt" and first.interrupts[0].name == "approval"
    assert first.interrupts[0].reason == {"amount": 5}
    agent([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
    assert tool_results(agent.messages)[0]["content"] == [{"text": "approved=yes"}]


async def gen_tool(n: int) -> AsyncIterator[Any]:
    """Streams progress."""
    for i in range(n):
        yield {"progress": i}
    yield "finished"


def test_async_generator_tools_stream_like_strands() -> None:
    theirs, ours = strands.tool(gen_tool), tool(gen_tool)
    streamed, expected = strands_result(theirs, {"toolUseId": "t0", "name": "gen_tool", "input": {"n": 2}})
    agent = Agent(model=ScriptedModel([call("gen_tool", {"n": 2}, "t0"), "done"]), tools=to_tether_tools([ours]))

    async def collect() -> list[Any]:
        return [event async for event in agent.stream_async("go")]

    import asyncio

    events = asyncio.run(collect())
    ours_streamed = [e["tool_stream_event"]["data"] for e in events if e.get("type") == "tool_stream"]
    assert ours_streamed == streamed == [{"progress": 0}, {"progress": 1}, "finished"]
    uses = [e["tool_stream_event"]["tool_use"]["toolUseId"] for e in events if e.get("type") == "tool_stream"]
    assert uses == ["t0"] * 3
    assert tool_results(agent.messages) == [expected]


def test_sync_tools_do_not_stream() -> None:
    assert tool(f_str).streams_events is False and tool(gen_tool).streams_events is True


def test_our_tool_context_is_also_tethers() -> None:
    from tether.tools.context import ToolContext as TetherContext

    assert issubclass(ToolContext, TetherContext)
    assert decorator_module.tool is tool


def test_strands_style_results_survive_a_durable_run_and_keys_are_stable(tmp_path: Any) -> None:
    """A durable run records what facade tools return (extra ToolResult keys such as an MCP
    result's ``structuredContent`` included) and a context tool's idempotency key is
    ``run_id/toolUseId``; a new agent on the same store sees the same conversation."""
    from tether.durable.sqlite import SQLiteStore

    keys: list[str] = []

    @tool(context=True)
    def keyed(tool_context: ToolContext) -> dict[str, Any]:
        """Returns a result with an extra key."""
        keys.append(tool_context.idempotency_key)
        return {"status": "success", "content": [{"text": "ok"}], "structuredContent": {"n": 1}}

    store = SQLiteStore(tmp_path / "runs.db")
    agent = Agent(model=ScriptedModel([call("keyed", {}, "k1"), "done"]), tools=to_tether_tools([keyed]), store=store)
    agent("go", run_id="r1")
    assert keys == ["r1/k1"]
    (result,) = tool_results(agent.messages)
    assert result == {"toolUseId": "k1", "status": "success", "content": [{"text": "ok"}], "structuredContent": {"n": 1}}
    later = Agent(model=ScriptedModel(["again"]), tools=to_tether_tools([keyed]), store=store)
    later("more", run_id="r1")
    assert tool_results(later.messages) == [result]
    store.close()
