"""The registry the served tests run: scripted agents whose tool can block on a file.

The tool ``slow`` appends its idempotency key to ``calls.log`` in ``$SERVE_TEST_DIR``, writes
``entered-NAME`` and waits for ``release`` there, so a test can kill the server inside it; the
async tool ``effect`` logs its key to ``effects.log`` there (the fleet test's side-effect log).
Imported by the in-process tests and, from a copy on the path, by the server subprocess.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.models.scripted import ScriptedModel
from tether.multiagent import Graph, GraphBuilder
from tether.tools.context import ToolContext


def _dir() -> Path:
    return Path(os.environ["SERVE_TEST_DIR"])


def _block(name: str, context: ToolContext) -> str:
    folder = _dir()
    with open(folder / "calls.log", "a") as log:
        log.write(f"{name} {context.idempotency_key}\n")
    (folder / f"entered-{name}").write_text(context.idempotency_key)
    while not (folder / "release").exists():
        time.sleep(0.02)
    return f"{name} done"


@tool
def slow(what: str, tool_context: ToolContext) -> str:
    """Do something slow (idempotent: safe to run again with the same key)."""
    return _block("slow", tool_context)


@tool(idempotent=False)
def charge(amount: int, tool_context: ToolContext) -> str:
    """Charge a card (not idempotent)."""
    return _block("charge", tool_context)


@tool
def approve(what: str, tool_context: ToolContext) -> str:
    """Ask a human."""
    answer = tool_context.interrupt("approve", reason={"what": what})
    return f"approved: {answer}"


@tool
async def effect(step: int, hold: bool, tool_context: ToolContext) -> str:
    """A side effect (idempotent): appends its idempotency key to ``effects.log``; with ``hold``,
    then waits (without a thread) for ``release`` in the gate folder."""
    folder = _dir()
    with open(folder / "effects.log", "a") as log:
        log.write(f"{tool_context.idempotency_key} {step} {os.getpid()}\n")
    while hold and not (folder / "release").exists():
        await asyncio.sleep(0.02)
    return f"effect {step} done"


def _call(name: str, ident: str | None = None, **args: Any) -> dict[str, Any]:
    use = {"toolUseId": ident or f"t-{name}", "name": name, "input": args}
    return {"role": "assistant", "content": [{"text": f"calling {name}"}, {"toolUse": use}]}


class HeldModel(ScriptedModel):
    """A scripted model that, after streaming the text ``typed it``, waits for ``flush`` in the
    gate folder: that reply is still in flight until the test has seen its live delta."""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        async for event in super().stream(request):
            yield event
            if (event.get("contentBlockDelta") or {}).get("delta", {}).get("text") == "typed it":
                while not (_dir() / "flush").exists():
                    await asyncio.sleep(0.02)


def typist() -> Agent:
    return Agent(model=HeldModel([_call("slow", what="notes"), "typed it"], stateful=True), tools=[slow])


def worker() -> Agent:
    return Agent(model=ScriptedModel([_call("slow", what="report"), "all done"], stateful=True), tools=[slow])


def payer() -> Agent:
    return Agent(model=ScriptedModel([_call("charge", amount=5), "charged"], stateful=True), tools=[charge])


def asker() -> Agent:
    return Agent(model=ScriptedModel([_call("approve", what="deploy"), "deployed"], stateful=True), tools=[approve])


def fleet() -> Agent:
    """Two side effects: the first at once, the second held until ``release`` (the fleet test)."""
    script = [_call("effect", "t-first", step=1, hold=False), _call("effect", "t-second", step=2, hold=True), "fleet done"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[effect])


class ModelDown(RuntimeError):
    """The flaky agent's model error (a provider outage, say)."""


def _recovered(messages: Any) -> str:
    """The flaky agent's second reply: raises once while ``fail-once`` is in the gate folder
    (removing it), then answers ``recovered``."""
    marker = _dir() / "fail-once"
    if marker.exists():
        marker.unlink()
        raise ModelDown("the model is down")
    return "recovered"


def flaky() -> Agent:
    """A side effect (``effects.log``), then a model call that fails once (see :func:`_recovered`)."""
    script = [_call("effect", "t-flaky", step=1, hold=False), _recovered]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[effect])


def _painted(messages: Any) -> str:
    """The painter's answer: the text of the last tool result (the client's)."""
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block:
                return "painted " + "".join(part.get("text", "") for part in block["toolResult"]["content"])
    return "nothing to paint"


def painter() -> Agent:
    """Calls ``pick_color``, a tool the client offers and runs (none of the server's), then
    answers with its result."""
    return Agent(model=ScriptedModel([_call("pick_color", "t-color", shade="warm"), _painted], stateful=True))


def helper() -> Agent:
    """A first turn that finishes (``hi there``), a second that asks for approval, then answers."""
    script = ["hi there", _call("approve", "t-helper", what="release"), "released"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[approve])


def chat() -> Agent:
    return Agent(model=ScriptedModel(["hello there", "again"], stateful=True))


RELEASED = "released <b>v2</b> <img src=x onerror=\"document.title='pwned'\">"
"""The deployer's answer: markup the chat page must show as text."""


def deployer() -> Agent:
    """Asks for approval (an interrupt), then runs the blocking ``slow`` tool, then answers."""
    script = [_call("approve", what="release v2"), _call("slow", what="release v2"), RELEASED]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[approve, slow])


def pipeline() -> Graph:
    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel(["draft"], stateful=True)), "writer")
    builder.add_node(Agent(model=ScriptedModel(["polished"], stateful=True)), "editor")
    builder.add_edge("writer", "editor")
    builder.set_entry_point("writer")
    return builder.build()


AGENTS = {
    "flaky": flaky,
    "worker": worker,
    "payer": payer,
    "asker": asker,
    "chat": chat,
    "typist": typist,
    "pipeline": pipeline,
    "deployer": deployer,
    "painter": painter,
    "helper": helper,
}
FLEET = {"fleet": fleet}
"""The fleet test's registry (``registry_module:FLEET``)."""


def booker() -> Agent:
    """The travel booking of ``examples/compensation.py`` (flight, hotel, card; the fourth step
    fails), not compensating by itself; its provider file is in the gate folder."""
    import runpy

    path = Path(__file__).resolve().parents[2] / "examples" / "compensation.py"
    example = runpy.run_path(str(path), run_name="tether_example_compensation")
    agent: Agent = example["build_agent"](_dir(), None, compensate_on=())
    hotel = agent.tool_registry.get("book_hotel")
    assert hotel is not None and hotel.compensate is not None
    cancel = hotel.compensate

    def cancel_or_hang(undo: Any) -> None:
        """With ``hang-undo`` in the gate folder, the hotel's first undo never ends (``entered-undo``)."""
        if (_dir() / "hang-undo").exists() and not (_dir() / "entered-undo").exists():
            (_dir() / "entered-undo").write_text(undo.undo_key)
            while True:
                time.sleep(0.05)
        cancel(undo)

    hotel.compensate = cancel_or_hang
    return agent


BOOKING = {"booker": booker, "worker": worker, "pipeline": pipeline}
"""The compensation test's registry (``registry_module:BOOKING``)."""
