"""Agent factories for the resume-contract tests (imported by the contract's child processes).

One sound agent that asks a person (``booking``), one whose tools declare compensations
(``reserving``) and, for each property, an agent broken so that the contract must catch it (two
for the unwinding: a store that forgets recorded undos, a compensation not idempotent by its key).
Effects go under ``$TETHER_CRASHTEST_SCRATCH`` as in
:mod:`tests.testing.agents`; the "outside world" of ``ticketing`` is one counter file for the
whole contract check (beside its phases' directories), which no run records.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tether import Agent, Undo, tool
from tether.models import ScriptedModel
from tether.tools.context import ToolContext

from .agents import effects, lookup, record, scratch


def _script(*cycles: tuple[str, ...]) -> list[Any]:
    """One model turn per entry calling those tools (input ``n``: the cycle), then a final answer."""
    out: list[Any] = []
    for i, tools in enumerate(cycles):
        uses = [{"toolUse": {"toolUseId": f"c{i}-{name}", "name": name, "input": {"n": i}}} for name in tools]
        out.append({"role": "assistant", "content": [{"text": f"cycle {i}"}, *uses]})
    out.append("all done")
    return out


@tool
def book(n: int, ctx: ToolContext) -> str:
    """Ask for approval, then book once per idempotency key."""
    answer = ctx.interrupt("approve", reason={"flight": n})
    effects(ctx.idempotency_key)
    return f"booked flight {n}: {answer}"


def booking() -> Agent:
    """A lookup, a booking that asks for approval, a record: sound; answer ``{"approve": "yes"}``."""
    model = ScriptedModel(_script(("lookup",), ("book",), ("record",)), stateful=True)
    return Agent(model=model, tools=[lookup, book, record])


def _world() -> Path:
    """The contract check's working directory (two levels above every run's scratch directory)."""
    return scratch().resolve().parent.parent


@tool
def take_ticket(n: int) -> str:
    """Changes state outside the run: the next number of a shared counter, whoever asks."""
    counter = _world() / "tickets.count"
    count = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(count))
    return f"ticket {count} for step {n}"


def ticketing() -> Agent:
    """Broken for fork determinism: two forks of a step take two different tickets."""
    return Agent(model=ScriptedModel(_script(("lookup",), ("take_ticket",)), stateful=True), tools=[lookup, take_ticket])


@tool
def quote(n: int) -> str:
    """Claims to be idempotent, but quotes a fresh random price every call."""
    return f"price {n}: {uuid.uuid4().hex[:8]}"


def diverging() -> Agent:
    """Broken for recovery determinism: two copies of one crashed store re-run the in-doubt quote differently."""
    return Agent(model=ScriptedModel(_script(("lookup", "quote"), ("record",)), stateful=True), tools=[lookup, quote, record])


@tool
def charge(n: int, ctx: ToolContext) -> str:
    """Not idempotent, no reconcile: every call charges again, with a new receipt."""
    return f"charged {n}, receipt #{effects(ctx.idempotency_key)}"


def charging() -> Agent:
    """Broken for effect exactly-once: an in-doubt charge runs again and charges twice."""
    return Agent(model=ScriptedModel(_script(("charge",), ("lookup",)), stateful=True), tools=[charge, lookup])


def loose_state() -> Agent:
    """Broken for checkpoint validity: a state that takes any value (its check is switched off)."""
    import tether.agent_state as agent_state

    agent_state.state_copy = lambda value, what: value  # type: ignore[assignment]
    return booking()


def unlocked_booking() -> Agent:
    """Broken for consume-once: the SQLite run lock is switched off, so every answering process
    gets into the run; each waits in ``book`` (at most 10 s) until another one is inside too, so
    the answer's effect happens at least twice whatever the timing (a working lock lets only one in)."""
    import os
    import time
    from collections.abc import Iterator
    from contextlib import contextmanager

    import tether.durable.sqlite as sqlite_module

    @contextmanager
    def no_lock(path: Path, run_id: str) -> Iterator[None]:
        yield

    sqlite_module.file_lease = no_lock  # type: ignore[assignment]

    @tool(name="book")
    def book_together(n: int, ctx: ToolContext) -> str:
        """Ask for approval, then book; an answering process waits for a second one to arrive."""
        answer = ctx.interrupt("approve", reason={"flight": n})
        if os.environ.get("TETHER_CRASHTEST_RACER"):
            (scratch() / f"arrived-{os.getpid()}").touch()
            deadline = time.monotonic() + 10
            while len(list(scratch().glob("arrived-*"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.005)
        effects(ctx.idempotency_key)
        return f"booked flight {n}: {answer}"

    model = ScriptedModel(_script(("lookup",), ("book",), ("record",)), stateful=True)
    return Agent(model=model, tools=[lookup, book_together, record])


def rewriting() -> Agent:
    """Broken for prefix continuation: a store that, on loading a run, forgets its last message."""
    import tether.durable.sqlite as sqlite_module

    original = sqlite_module.SQLiteStore.load

    def load(self: Any, run_id: str) -> Any:
        loaded = original(self, run_id)
        if loaded is not None and loaded.messages and loaded.head.get("status") != "finished":
            loaded.messages.pop()
        return loaded

    sqlite_module.SQLiteStore.load = load  # type: ignore[method-assign]
    return Agent(model=ScriptedModel(_script(("lookup",), ("record",)), stateful=True), tools=[lookup, record])


def release(undo: Undo) -> str:
    """Undo a reservation, once per undo key (a repeated request with the same key changes nothing)."""
    done = scratch() / (undo.undo_key.replace("/", "_") + ".undone")
    if not done.exists():
        done.write_text(undo.idempotency_key)
    return f"released {undo.input['n']}"


def _reserve(n: int, ctx: ToolContext) -> str:
    """Reserve a seat, once per idempotency key."""
    effects(ctx.idempotency_key)
    return f"reserved seat {n}"


reserve = tool(compensate=release, name="reserve")(_reserve)


def reserving() -> Agent:
    """Sound, with compensations: two reservations and a lookup; its unwinding releases both, newest first."""
    model = ScriptedModel(_script(("reserve",), ("lookup",), ("reserve",)), stateful=True)
    return Agent(model=model, tools=[reserve, lookup])


def forgetful_undo() -> Agent:
    """Broken for the unwinding's effect exactly-once: a store that, loading a run being
    compensated, forgets which undos it recorded as done, so a resumed unwinding undoes them again."""
    import tether.durable.sqlite as sqlite_module

    original = sqlite_module.SQLiteStore.load

    def load(self: Any, run_id: str) -> Any:
        loaded = original(self, run_id)
        record = None if loaded is None else loaded.head.get("compensation")
        if isinstance(record, dict) and not record.get("done"):
            for state in record["undos"].values():
                state.pop("outcome", None)
        return loaded

    sqlite_module.SQLiteStore.load = load  # type: ignore[method-assign]
    return reserving()


def refund_again(undo: Undo) -> str:
    """Not idempotent by its undo key: every call refunds again, with a new refund number."""
    return f"refund #{effects(undo.undo_key)} for seat {undo.input['n']}"


def double_refund() -> Agent:
    """Broken for the unwinding's effect exactly-once: an undo re-run in doubt refunds twice."""
    paid = tool(compensate=refund_again, name="reserve")(_reserve)
    model = ScriptedModel(_script(("reserve",), ("reserve",)), stateful=True)
    return Agent(model=model, tools=[paid])


def refuse_release(undo: Undo) -> None:
    """A compensation that always fails (the unwinding records it and goes on)."""
    raise RuntimeError(f"the seat {undo.input['n']} can no longer be released")


def failing_release() -> Agent:
    """Sound: the first reservation's compensation raises, so the run ends ``compensation_failed`` as designed."""
    stuck = tool(compensate=refuse_release, name="reserve_stuck")(_reserve)
    model = ScriptedModel(_script(("reserve_stuck",), ("reserve",)), stateful=True)
    return Agent(model=model, tools=[stuck, reserve])
