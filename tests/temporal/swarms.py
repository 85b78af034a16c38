"""Swarm factories of the Temporal swarm tests (``test_swarm.py``, ``record_histories.py --corpus swarm``).

The members' models are stateful scripts that decide from their prompt, so a local swarm built
from the same registry gives the reference result; model calls and tool starts are logged to
the side-effect file named in the config (``log``).
"""

from __future__ import annotations

from typing import Any

from tether import Agent, ScriptedModel
from tether.models.scripted import tool_call
from tether.multiagent import Swarm
from tether.temporal import AgentRegistry
from tether.types import Message

from .agents import log, publish_tool, published_answer, relay_builder

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
    drafter = _member(config, "drafter", _handoff("publisher", "publish it", {"title": "tides"}), "handed off")
    published = published_answer(config, "publisher model 1")
    publisher = _member(config, "publisher", tool_call("publish", {"title": "tides"}), published, tools=[publish_tool(config)])
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

    scout = _member(config, "scout", _handoff("builder", "build it"), "handed off")
    return Swarm([scout, relay_builder(config)])
