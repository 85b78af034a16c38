"""Swarm factories of the Temporal swarm tests (``test_swarm.py``, ``record_swarm_histories.py``).

The members' models are stateful scripts that decide from their prompt, so a local swarm built
from the same registry gives the reference result; model calls and tool starts are logged to
the side-effect file named in the config (``log``).
"""

from __future__ import annotations

from typing import Any

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.models.scripted import tool_call
from tether.multiagent import Swarm
from tether.temporal import AgentRegistry
from tether.types import Message

from .agents import fast_and_slow_tools, log

registry = AgentRegistry()


def _prompt(messages: list[Message]) -> str:
    return str(messages[0]["content"][0]["text"])


def _handoff(to: str, message: str, context: dict[str, Any] | None = None) -> Message:
    args: dict[str, Any] = {"agent_name": to, "message": message}
    if context is not None:
        args["context"] = context
    return tool_call("handoff_to_agent", args)


def _member(config: dict[str, Any], name: str, first: Any, *rest: Any, tools: list[Any] | None = None) -> Agent:
    def logged(messages: list[Message]) -> Any:
        log(config, f"{name} model 0")
        return first(messages) if callable(first) else first

    return Agent(model=ScriptedModel([logged, *rest], stateful=True), name=name, description=f"the {name}", tools=tools or [])


@registry.register_swarm("team")
def _team(config: dict[str, Any]) -> Swarm:
    researcher = _member(config, "researcher", _handoff("writer", "write it up", {"facts": ["tides", "moon"]}), "handed off")
    writer = _member(config, "writer", _handoff("editor", "polish it", {"draft": 1}), "handed off")
    editor = _member(config, "editor", lambda m: "final: " + _prompt(m))
    return Swarm([researcher, writer, editor], max_handoffs=5)


@registry.register_swarm("pingpong")
def _pingpong(config: dict[str, Any]) -> Swarm:
    ping = _member(config, "ping", _handoff("pong", "your turn"), "sent")
    pong = _member(config, "pong", _handoff("ping", "your turn"), "sent")
    return Swarm([ping, pong], max_handoffs=int(config.get("max_handoffs", 3)))


@registry.register_swarm("approval")
def _approval(config: dict[str, Any]) -> Swarm:
    @tool
    def publish(title: str, context: ToolContext) -> str:
        """Publish a title once a human approves it."""
        log(config, f"ask {title}")
        verdict = context.interrupt("approve", {"title": title})
        log(config, f"publish {title} {verdict}")
        return f"published {title} ({verdict})"

    def published(messages: list[Message]) -> str:
        log(config, "publisher model 1")
        result = messages[-1]["content"][0]["toolResult"]
        return "done: " + str(result["content"][0]["text"])

    drafter = _member(config, "drafter", _handoff("publisher", "publish it", {"title": "tides"}), "handed off")
    publisher = _member(config, "publisher", tool_call("publish", {"title": "tides"}), published, tools=[publish])
    return Swarm([drafter, publisher])


@registry.register_swarm("broken")
def _broken(config: dict[str, Any]) -> Swarm:
    first = _member(config, "first", _handoff("second", "go on"), "handed off")
    second = Agent(model=ScriptedModel([], stateful=True), name="second")  # no answer scripted: the model call fails
    return Swarm([first, second])


@registry.register_swarm("relay")
def _relay(config: dict[str, Any]) -> Swarm:
    """The scout hands off to the builder, whose turn calls a fast tool, then a slow one
    (``config["sleep"]`` s; it writes ``config["started_marker"]`` when it starts), then answers."""

    def builder_step(label: str, response: Any) -> Any:
        def respond(messages: list[Message]) -> Any:
            log(config, label)
            return response

        return respond

    scout = _member(config, "scout", _handoff("builder", "build it"), "handed off")
    builder = Agent(
        model=ScriptedModel(
            [
                builder_step("builder model 0", tool_call("fast", {"n": 1})),
                builder_step("builder model 1", tool_call("slow", {"n": 2})),
                builder_step("builder model 2", "built"),
            ],
            stateful=True,
        ),
        tools=fast_and_slow_tools(config),
        name="builder",
    )
    return Swarm([scout, builder])
