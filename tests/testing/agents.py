"""Agent factories for the crashtest tests (imported by crashtest's child processes).

Tools write their external effects under ``$TETHER_CRASHTEST_SCRATCH`` (a directory per crash
point, shared by the crashed run and its resumers), like a real external system would keep them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tether import Agent, BeforeToolCall, tool
from tether.durable import MemoryStore
from tether.durable.indoubt import RERUN, InDoubtCall
from tether.models import ScriptedModel
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.tools.executors import SequentialToolExecutor
from tether.types import ToolResult, ToolUse


def script(cycles: int, tools: tuple[str, ...]) -> list[Any]:
    """``cycles`` model turns that each call both ``tools``, then a final answer."""
    out: list[Any] = []
    for i in range(cycles):
        uses = [{"toolUse": {"toolUseId": f"c{i}-{name}", "name": name, "input": {"n": i}}} for name in tools]
        out.append({"role": "assistant", "content": [{"text": f"cycle {i}"}, *uses]})
    out.append("all done")
    return out


def scratch() -> Path:
    return Path(os.environ.get("TETHER_CRASHTEST_SCRATCH", "."))


def effects(key: str) -> int:
    """How many times the external effect for ``key`` happened (then records one more)."""
    path = scratch() / (key.replace("/", "_") + ".count")
    count = int(path.read_text()) if path.exists() else 0
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(str(count + 1))
    temp.replace(path)  # atomic: a crash mid-write (another thread's save point) leaves the old count
    return count + 1


@tool
def lookup(n: int) -> str:
    """Read-only lookup: the same answer every time."""
    return f"value {n * 7}"


@tool
def record(n: int, ctx: ToolContext) -> str:
    """An idempotent write: keyed by the idempotency key, so a re-run changes nothing."""
    effects(ctx.idempotency_key)
    return f"recorded {n}"


@tool
def charge_card(n: int, ctx: ToolContext) -> str:
    """NOT idempotent in effect: every call makes a new charge with a new receipt number."""
    return f"charged {n}, receipt #{effects(ctx.idempotency_key)}"


@tool(idempotent=False)
def send_email(n: int, ctx: ToolContext) -> str:
    """Declared non-idempotent; its result does not depend on how often it ran."""
    effects(ctx.idempotency_key)
    return f"email {n} sent"


def sound(cycles: int = 3) -> Agent:
    """3 cycles x 2 tools, both safe to re-run."""
    return Agent(model=ScriptedModel(script(cycles, ("lookup", "record")), stateful=True), tools=[lookup, record], store=MemoryStore())


def long_sound() -> Agent:
    """10 cycles x 2 tools (the crashtest timing figure)."""
    return sound(10)


def charging() -> Agent:
    """A tool that returns a different result when re-run in doubt (one call per cycle, so which
    crash points find it in doubt does not depend on thread timing)."""
    return Agent(model=ScriptedModel(script(3, ("charge_card",)), stateful=True), tools=[charge_card])


def emailing() -> Agent:
    """``idempotent=False`` with no reconcile: in-doubt calls become ``tether.in_doubt`` interrupts."""
    return Agent(model=ScriptedModel(script(2, ("lookup", "send_email")), stateful=True), tools=[lookup, send_email])


def reconcile(call: InDoubtCall) -> ToolResult:
    """Settle an in-doubt email by checking the outbox: the result it would have returned."""
    n = call.tool_use["input"]["n"]
    return {"toolUseId": call.tool_use["toolUseId"], "status": "success", "content": [{"text": f"email {n} sent"}]}


def emailing_reconciled() -> Agent:
    """``idempotent=False`` with a ``reconcile``: in-doubt calls are settled without a re-run."""
    return Agent(model=ScriptedModel(script(2, ("lookup", "send_email")), stateful=True), tools=[lookup, send_email], reconcile=reconcile)


def unlocked() -> Agent:
    """The sound agent on a store whose run lock is broken (no flock): racing resumers both proceed."""
    from collections.abc import Iterator
    from contextlib import contextmanager

    import tether.durable.sqlite as sqlite_module

    @contextmanager
    def no_lock(path: Path, run_id: str) -> Iterator[None]:
        yield

    sqlite_module.file_lease = no_lock  # type: ignore[assignment]

    @tool
    def lookup(n: int) -> str:
        """Read-only lookup; a racing resumer first waits (at most 10 s) for the other to arrive,
        so both are inside the run at once (nothing else would stop the second one)."""
        if os.environ.get("TETHER_CRASHTEST_RACER"):
            (scratch() / f"arrived-{os.getpid()}").touch()
            deadline = time.monotonic() + 10
            while len(list(scratch().glob("arrived-*"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.005)
        return f"value {n * 7}"

    return Agent(model=ScriptedModel(script(3, ("lookup", "record")), stateful=True), tools=[lookup, record])


@tool(idempotent=False)
def pay(n: int, ctx: ToolContext) -> str:
    """Declared non-idempotent, and every call makes a new charge with a new receipt number."""
    return f"paid {n}, receipt #{effects(ctx.idempotency_key)}"


def paying() -> Agent:
    """``idempotent=False`` with no reconcile, a new result on every run: in-doubt calls are asked
    about (crashtest answers "rerun"), which is what the declaration asks for, not a failure."""
    return Agent(model=ScriptedModel(script(2, ("pay",)), stateful=True), tools=[pay])


def paying_reconcile_reruns() -> Agent:
    """``idempotent=False`` with a reconcile that always answers rerun, without checking whether
    the charge went through: the second charge's new receipt is the reconcile's fault."""
    return Agent(model=ScriptedModel(script(2, ("pay",)), stateful=True), tools=[pay], reconcile=lambda call: RERUN)


def forgetful() -> Agent:
    """The sound agent (one cycle) on a broken store that loses the recorded result of every
    `record` call of the open cycle when it loads the run: a resume runs a completed call again,
    and it returns the same result (only its start count shows it)."""
    import tether.durable.sqlite as sqlite_module

    original = sqlite_module.SQLiteStore.load

    def load(self: Any, run_id: str) -> Any:
        loaded = original(self, run_id)
        if loaded is not None:
            for tool_use_id in [i for i in loaded.results if i.endswith("-record")]:
                del loaded.results[tool_use_id]
        return loaded

    sqlite_module.SQLiteStore.load = load  # type: ignore[method-assign]
    tools = ("record", "lookup")  # one at a time: record's result is stored while lookup is still to run
    return Agent(model=ScriptedModel(script(1, tools), stateful=True), tools=[record, lookup], tool_executor=SequentialToolExecutor())


class _Twice(Tool):
    """A buggy retry middleware: runs the tool, then runs it once more for the same call."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner

    @property
    def tool_name(self) -> str:
        return self.inner.tool_name

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        await self.inner.invoke(tool_use, context)
        return await self.inner.invoke(tool_use, context)


def retrying() -> Agent:
    """The sound agent (one cycle) with a hook that runs `record` twice per call (same result)."""
    agent = sound(1)

    def twice(event: BeforeToolCall) -> None:
        if event.selected_tool is not None and event.selected_tool.tool_name == "record":
            event.selected_tool = _Twice(event.selected_tool)

    agent.hooks.add_callback(BeforeToolCall, twice)
    return agent


@tool(transactional=True, idempotent=False)
async def place_order(n: int, ctx: ToolContext) -> str:
    """Insert order n's row through the call's transaction: it commits with the recorded result
    (the PostgreSQL outbox), so it needs no idempotency key and no reconcile."""
    async with ctx.transaction() as conn:
        conn.execute("INSERT INTO crashtest_orders (run_id, n) VALUES (%s, %s)", (ctx.run_id, n))
    return f"order {n} placed"


def ordering() -> Agent:
    """Two orders placed at once through the outbox (``idempotent=False``, no reconcile, yet an
    in-doubt call runs again: an unrecorded result means its order row rolled back too). Needs a
    PostgreSQL store and the ``crashtest_orders`` table."""
    uses = [{"toolUse": {"toolUseId": f"order-{n}", "name": "place_order", "input": {"n": n}}} for n in (0, 1)]
    script: list[Any] = [{"role": "assistant", "content": [{"text": "ordering"}, *uses]}, "both ordered"]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[place_order])


@tool(idempotent=False)
def note_marked(n: int) -> str:
    """Declared non-idempotent, so its start is a save point of its own."""
    return f"noted {n}"


@tool(name="note_marked")
def note_riding(n: int) -> str:
    """The same tool declared idempotent: its start rides on the model response's save point."""
    return f"noted {n}"


def fewer_writes_after_the_reference() -> Agent:
    """An agent whose crash runs take fewer save points than its reference run, like tools
    running at once that finish in another order: the reference run's tool is non-idempotent
    (a start marker of its own), every other run's is idempotent. Messages and state end the same."""
    reference = scratch().name == "reference.scratch"
    return Agent(model=ScriptedModel(script(2, ("note_marked",)), stateful=True), tools=[note_marked if reference else note_riding])
