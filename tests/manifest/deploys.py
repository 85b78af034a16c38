"""The agent of the deploy simulations, in each version a deploy may bring.

Version 1 has one tool, ``send(to)``, which asks for approval (an interrupt) or, with
``crash=True``, dies mid-call (the process killed: the call is left in doubt). A later
version changes one thing: the tool renamed (``deliver``), removed, given a required or an
optional parameter, its effect contract weakened (``idempotent=False``), or the prompt changed.
Every call a tool makes is appended to ``log``.
"""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext


class Killed(BaseException):
    """Stands for the process dying mid-tool (nothing in the loop catches it)."""


CHANGES = ("same", "renamed", "removed", "required", "optional", "prompt", "weakened")


def script() -> ScriptedModel:
    return ScriptedModel([tool_call("send", {"to": "bob"}, tool_use_id="c1"), "done"], stateful=True)


def build(change: str, log: list[str], *, crash: bool = False, **options: Any) -> Agent:
    """The agent after deploy ``change`` (``"same"``: version 1); ``no_interrupt``: the tool
    does not ask for approval."""
    asks = not options.pop("no_interrupt", False) and not options.get("checkpointing")

    def effect(name: str, to: str, ctx: ToolContext, extra: str = "") -> str:
        if crash:
            log.append(f"{name} {to} started")
            raise Killed(name)
        answer = ctx.interrupt("approve", {"to": to}) if asks else ""
        log.append(" ".join(part for part in (name, to, answer, extra.strip()) if part))
        return f"sent to {to}"

    idempotent = change != "weakened"

    @tool(name="send", idempotent=idempotent)
    def send(to: str, ctx: ToolContext) -> str:
        """Send a message."""
        return effect("send", to, ctx)

    @tool(name="deliver")
    def deliver(to: str, ctx: ToolContext) -> str:
        """Send a message (the new name)."""
        return effect("deliver", to, ctx)

    @tool(name="send")
    def send_cc(to: str, cc: str, ctx: ToolContext) -> str:
        """Send a message with a copy."""
        return effect("send", to, ctx, f" cc={cc}")

    @tool(name="send")
    def send_priority(to: str, ctx: ToolContext, priority: int = 0) -> str:
        """Send a message, maybe urgently."""
        return effect("send", to, ctx, f" priority={priority}")

    @tool
    def other(x: int) -> int:
        """Something else."""
        return x

    tools: list[Any] = {
        "same": [send],
        "prompt": [send],
        "weakened": [send],
        "renamed": [deliver],
        "removed": [other],
        "required": [send_cc],
        "optional": [send_priority],
    }[change]
    prompt = "You send messages (v2)." if change == "prompt" else "You send messages."
    return Agent(model=script(), tools=tools, system_prompt=prompt, **options)


def answer(result: Any, response: str = "yes") -> list[dict[str, Any]]:
    """The interrupt responses answering every interrupt of ``result``."""
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]
