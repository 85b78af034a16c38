"""`StateJournal`: each tool call's agent-state changes are committed with its outcome, exactly once.

The property test plays random programs of concurrent calls (reads, read-modify-writes, blind
sets, deletes, in random interleavings, finishing in random order) through the journal as the
driver does: a finished call is folded once its group is ready, and a store may write the
committed view at any moment. At every moment the committed view must be what the folded calls
alone produce, each seeing exactly what it saw in the real run; and a crash at any moment,
followed by a resume that runs the unfolded calls again, must end in the state of the run that
was not interrupted (for programs whose outcome does not depend on the order of calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.agent_state import AgentState
from tether.loop.journal import StateJournal
from tether.loop.state import RunState

KEYS = ("n", "hist", "flag")


def journal_for(initial: dict[str, Any]) -> tuple[StateJournal, AgentState, RunState]:
    run = RunState(state=dict(initial))
    return StateJournal(run), AgentState(lambda: run.state), run


def test_a_write_is_committed_when_its_call_is_folded() -> None:
    journal, state, run = journal_for({"keep": 1})
    journal.begin("a")
    with journal.active("a"):
        state.set("x", 1)
        state.delete("keep")
    assert run.state == {"x": 1}  # the call sees its change at once
    assert journal.committed() == {"keep": 1}  # a store does not, yet
    journal.finish("a", "outcome a")
    assert journal.ready() == [("a", "outcome a")]
    journal.folded(["a"])
    assert journal.committed() is run.state


def test_a_call_that_read_an_unfolded_change_waits_for_its_writer() -> None:
    journal, state, _ = journal_for({})
    for call in ("a", "b"):
        journal.begin(call)
    with journal.active("a"):
        state.set("hist", ["a"])
    with journal.active("b"):
        state.set("hist", [*state.get("hist"), "b"])
    journal.finish("b", "b")
    assert journal.ready() == []  # b read a's change: not stored before a's outcome
    assert journal.committed() == {}
    journal.finish("a", "a")
    assert [call for call, _ in journal.ready()] == ["a", "b"]


def test_calls_that_read_each_other_are_folded_together() -> None:
    journal, state, _ = journal_for({})
    for call in ("a", "b"):
        journal.begin(call)
    with journal.active("a"):
        state.set("x", 1)
    with journal.active("b"):
        state.set("y", state.get("x"))
    with journal.active("a"):
        state.set("z", state.get("y"))
    journal.finish("a", "a")
    assert journal.ready() == []
    journal.finish("b", "b")
    group = [call for call, _ in journal.ready()]
    assert group == ["a", "b"]
    journal.folded(group)
    assert journal.committed() == {"x": 1, "y": 1, "z": 1}


def test_reads_outside_a_call_or_of_another_agent_are_not_tracked() -> None:
    journal, state, run = journal_for({})
    other = AgentState(lambda: {"x": 1})
    journal.begin("a")
    with journal.active("a"):
        assert other.get("x") == 1
        other.set("y", 2)  # another agent's state: not this journal's
    state.set("z", 3)  # outside any call: the state itself
    assert journal.committed() is run.state


# -- the property -------------------------------------------------------------------------

Op = tuple[str, str, Any]  # (kind, key, argument)


def op_strategy(name: str) -> st.SearchStrategy[Op]:
    return st.one_of(
        st.tuples(st.just("incr"), st.sampled_from(KEYS), st.just(None)),
        st.tuples(st.just("append"), st.sampled_from(KEYS), st.just(name)),
        st.tuples(st.just("set"), st.sampled_from(KEYS), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.sampled_from(KEYS), st.just(None)),
        st.tuples(st.just("read"), st.sampled_from(KEYS), st.just(None)),
    )


@dataclass
class Program:
    calls: dict[str, list[Op]]
    schedule: list[str]  # which call takes its next step (its last "step" is finishing)
    commutative: bool = field(default=False)


@st.composite
def programs(draw: st.DrawFn, commutative: bool = False) -> Program:
    count = draw(st.integers(2, 4))
    calls: dict[str, list[Op]] = {}
    for i in range(count):
        name = f"c{i}"
        if commutative:  # counters and appends: the outcome does not depend on the order of calls
            ops = draw(
                st.lists(
                    st.one_of(
                        st.tuples(st.just("incr"), st.just("n"), st.just(None)),
                        st.tuples(st.just("append"), st.just("hist"), st.just(name)),
                        st.tuples(st.just("read"), st.sampled_from(KEYS), st.just(None)),
                    ),
                    max_size=4,
                )
            )
        else:
            ops = draw(st.lists(op_strategy(name), max_size=4))
        calls[name] = ops
    steps = [name for name, ops in calls.items() for _ in range(len(ops) + 1)]
    order = draw(st.permutations(steps))
    return Program(calls, list(order), commutative)


def apply(state: AgentState, op: Op) -> Any:
    """Perform one op; returns what it read (None for blind writes)."""
    kind, key, arg = op
    if kind == "incr":
        seen = state.get(key)
        state.set(key, (seen if isinstance(seen, int) else 0) + 1)
        return seen
    if kind == "append":
        seen = state.get(key)
        state.set(key, [*(seen if isinstance(seen, list) else []), arg])
        return seen
    if kind == "set":
        state.set(key, arg)
        return None
    if kind == "delete":
        state.delete(key)
        return None
    return state.get(key)


def play(program: Program, initial: dict[str, Any]) -> list[tuple[dict[str, Any], set[str], list[tuple[str, Op, Any]]]]:
    """Run ``program`` through a journal as the driver does; every moment a store could write:
    (committed view, folded calls, the steps taken so far with what each read)."""
    journal, state, run = journal_for(initial)
    for name in program.calls:
        journal.begin(name)
    position = dict.fromkeys(program.calls, 0)
    taken: list[tuple[str, Op, Any]] = []
    folded: set[str] = set()
    moments = [(dict(journal.committed()), set(folded), list(taken))]
    for name in program.schedule:
        ops = program.calls[name]
        if position[name] < len(ops):
            op = ops[position[name]]
            with journal.active(name):
                taken.append((name, op, apply(state, op)))
            position[name] += 1
        else:
            journal.finish(name, name)
            group = [call for call, _ in journal.ready()]
            if group:
                journal.folded(group)
                folded.update(group)
        moments.append((dict(journal.committed()), set(folded), list(taken)))
    assert folded == set(program.calls)
    assert journal.committed() is run.state
    return moments


def replay(initial: dict[str, Any], steps: list[tuple[str, Op, Any]], calls: set[str]) -> dict[str, Any]:
    """Only ``calls``' steps, in the real run's order, each checked to read what it read then."""
    store = dict(initial)
    state = AgentState(lambda: store)
    for name, op, seen in steps:
        if name in calls:
            assert apply(state, op) == seen, f"{name} {op} read something else without the unfolded calls"
    return store


@settings(max_examples=300, deadline=None)
@given(program=programs(), initial=st.fixed_dictionaries({}, optional={"n": st.integers(0, 2), "hist": st.just(["x"])}))
def test_the_committed_state_is_what_the_folded_calls_alone_produce(program: Program, initial: dict[str, Any]) -> None:
    for committed, folded, taken in play(program, initial):
        assert committed == replay(initial, taken, folded)


@settings(max_examples=300, deadline=None)
@given(program=programs(commutative=True), initial=st.fixed_dictionaries({}, optional={"n": st.integers(0, 2)}))
def test_a_crash_at_any_moment_then_a_resume_ends_as_the_uninterrupted_run(program: Program, initial: dict[str, Any]) -> None:
    moments = play(program, initial)
    final = moments[-1][0]
    for committed, folded, _ in moments:
        store = dict(committed)
        state = AgentState(lambda store=store: store)  # type: ignore[misc]
        for name, ops in program.calls.items():  # the resumed run: the unfolded calls again, from the start
            if name not in folded:
                for op in ops:
                    apply(state, op)
        assert store.get("n") == final.get("n")
        assert sorted(store.get("hist") or []) == sorted(final.get("hist") or [])
