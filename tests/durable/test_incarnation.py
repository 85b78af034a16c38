"""A run's incarnation: deleting a run and creating one with the same id makes a new run.

Every head records the incarnation its run was created with (a random nonce); every write is a
compare-and-swap on it as well as on the revision, and an agent's cached session is reused only
for the same incarnation. So a writer or a session of the deleted run can never write into the
new one, even when both are at the same revision. On every store.
"""

from __future__ import annotations

import json

import pytest

from tether import Agent
from tether.durable import RunStore
from tether.durable.incarnation import incarnation_of
from tether.errors import LeaseLostError, RunReplacedError
from tether.models import ScriptedModel

from .backends import Backend, backend

__all__ = ["backend"]  # the fixture


def agent(store: RunStore, note: str) -> Agent:
    """An agent whose state holds a value large enough to be stored as a blob row."""
    return Agent(model=ScriptedModel([f"{note} answer {n}" for n in range(4)]), store=store, state={"notes": note * 1500})


def test_each_creation_of_a_run_id_is_a_new_incarnation(store: RunStore) -> None:
    agent(store, "a")("hi", run_id="r")
    first = incarnation_of(store.head("r"))
    assert isinstance(first, str) and len(first) >= 16
    agent(store, "a")("again", run_id="r")
    assert incarnation_of(store.head("r")) == first  # a later turn keeps it
    store.delete_run("r")
    agent(store, "a")("hi", run_id="r")
    assert incarnation_of(store.head("r")) not in (None, first)


def test_a_writer_of_a_deleted_run_cannot_write_into_its_successor_at_the_same_revision(store: RunStore) -> None:
    agent(store, "a")("hi", run_id="r")
    stale = store.head("r")
    assert stale is not None
    store.delete_run("r")
    agent(store, "b")("hi", run_id="r")
    current = store.head("r")
    assert current is not None and current["rev"] == stale["rev"]  # the revision alone cannot tell them apart
    with store.lease("r") as lease, pytest.raises(RunReplacedError, match=r"run 'r'.*deleted and created again") as caught:
        store.write("r", {**stale, "rev": stale["rev"] + 1}, [], {}, lease=lease)
    assert isinstance(caught.value, LeaseLostError)  # a fenced writer: it stops, like one whose lease was lost
    assert store.head("r") == current
    loaded = store.load("r")
    assert loaded is not None and loaded.head["state"]["notes"] == "b" * 1500


def test_a_cached_session_of_a_deleted_run_is_not_reused_for_its_successor(store: RunStore) -> None:
    """Agent A's run reaches a revision and is deleted; agent B creates the id again and reaches
    the same revision; A's next turn must work on B's run as stored, losing none of it."""
    a, b = agent(store, "a"), agent(store, "b")
    a("first", run_id="r")
    rev = store.head("r")["rev"]  # type: ignore[index]
    store.delete_run("r")
    b("second", run_id="r")
    assert store.head("r")["rev"] == rev  # type: ignore[index]
    result = a("third", run_id="r")
    assert str(result) == "a answer 1"
    loaded = store.load("r")
    assert loaded is not None
    texts = [block["text"] for message in loaded.messages for block in message["content"]]
    assert texts == ["second", "b answer 0", "third", "a answer 1"]
    assert loaded.head["state"]["notes"] == "b" * 1500  # B's state, as stored: A adopted the run
    assert [step.position for step in store.history("r")][-1] == "turn_end"


def test_a_head_written_without_the_incarnation_gets_the_one_the_store_holds(backend: Backend) -> None:
    """A Tether that predates incarnations drops the field when it writes a head into a run this
    one created; the store's own record of the incarnation fills it in, so the run goes on."""
    store = backend.make()
    Agent(model=ScriptedModel(["one"]), store=store)("hi", run_id="r")
    head = store.head("r")
    assert head is not None
    mine = head.pop("incarnation")
    backend.raw_set("head", "r", None, json.dumps(head))  # the older Tether's head: no incarnation
    assert incarnation_of(store.head("r")) == mine
    again = Agent(model=ScriptedModel(["two"]), store=backend.make())("again", run_id="r")
    assert str(again) == "two" and incarnation_of(store.head("r")) == mine
