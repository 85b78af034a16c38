"""The rules for answers to interrupts (:mod:`tether.answers`), one test per rule, each through the
entry points that take answers: an agent's turn, a durable run's in-doubt questions, a graph's and
a swarm's interrupted nodes (the Temporal workflows call the same functions: tests/temporal), and
the server's adapter (tests/serve for the HTTP round trips)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tether import Agent, tool
from tether.answers import (
    IN_DOUBT,
    allow_names,
    answer_block,
    answer_list,
    answers_from,
    as_blocks,
    bodies_of,
    check_answers,
    route_answers,
)
from tether.durable import MemoryStore
from tether.errors import ConfigurationError, InterruptError, PromptError, RequestError
from tether.models import ScriptedModel, tool_call
from tether.multiagent import Graph, GraphBuilder, Swarm
from tether.serve.runs import check_answers as served_check
from tether.tools.context import ToolContext

from .durable.helpers import Crash

PENDING: dict[str, dict[str, Any]] = {"a": {"id": "a", "name": "approve"}, "b": {"id": "b", "name": "confirm"}}


# -- the common form ----------------------------------------------------------------------


def test_every_form_reads_as_the_same_bodies() -> None:
    bodies = [{"interruptId": "a", "response": "yes"}, {"interruptId": "b", "response": {"n": 1}}]
    assert answers_from(bodies) == answers_from(as_blocks(bodies)) == answers_from({"a": "yes", "b": {"n": 1}}) == bodies
    assert bodies_of([answer_block("a", 1), {"interruptId": "b", "response": 2}]) == [
        {"interruptId": "a", "response": 1},
        {"interruptId": "b", "response": 2},
    ]
    assert answer_list(as_blocks(bodies)) == as_blocks(bodies)
    assert answer_list([]) is None and answer_list("a task") is None and answer_list([{"text": "hi"}]) is None


@pytest.mark.parametrize(
    ("responses", "match"),
    [
        (3, r"answers must be a list"),
        (["yes"], r"responses\[0\] must be an object"),
        ([{"interruptId": 5, "response": 1}], r"responses\[0\]\.interruptId must be a string"),
        ([{"interruptId": "", "response": 1}], r"responses\[0\]\.interruptId must be a string"),
        ([{"interruptId": "a"}], r"responses\[0\]\.response is missing: the answer to interrupt 'a' has no response"),
        ([{"interruptId": "a", "response": 1, "note": "x"}], r"responses\[0\]\.note is not an interruptResponse key"),
        ([{"interruptId": "a", "response": object()}], r"responses\[0\]\.response is not JSON"),
    ],
)
def test_a_malformed_answer_is_refused(responses: Any, match: str) -> None:
    with pytest.raises(InterruptError, match=match):
        answers_from(responses)


def test_an_answer_with_another_key_is_refused_by_the_server_too() -> None:
    """The rule that changed: the server dropped keys besides interruptId and response silently;
    the agent's turn refused them. Now both refuse (and nothing is launched)."""
    with pytest.raises(RequestError, match=r"run 'r1': responses\[0\]\.note is not an interruptResponse key"):
        served_check("r1", [{"interruptId": "a", "response": "yes", "note": "x"}, {"interruptId": "b", "response": 1}], PENDING)
    assert served_check("r1", {"a": "yes", "b": 1}, PENDING) == [answer_block("a", "yes"), answer_block("b", 1)]


# -- against the run's interrupts ---------------------------------------------------------


def test_an_unknown_id_is_refused_naming_what_is_pending() -> None:
    with pytest.raises(InterruptError, match=r"unknown interrupt id 'c'; pending interrupts: a, b"):
        check_answers(answers_from({"a": 1, "c": 2}), PENDING)
    with pytest.raises(RequestError, match=r"run 'r1': responses\[0\]\.interruptId: unknown interrupt id 'c'"):
        served_check("r1", {"c": 2}, PENDING)


def test_an_interrupt_answered_earlier_or_twice_is_refused() -> None:
    answered = {**PENDING, "a": {**PENDING["a"], "response": "yes"}}
    with pytest.raises(InterruptError, match=r"interrupt 'a' \(approve\) is already answered$"):
        check_answers(answers_from({"a": "again"}), answered)
    twice = answers_from([{"interruptId": "b", "response": 1}, {"interruptId": "b", "response": 2}])
    with pytest.raises(InterruptError, match=r"responses\[1\]\.interruptId: interrupt .b. \(confirm\) is already answered \(answered"):
        check_answers(twice, PENDING)


def test_every_pending_interrupt_answered_only_where_asked() -> None:
    check_answers(answers_from({"a": 1}), PENDING)  # an agent's turn stops again for the others
    with pytest.raises(InterruptError, match=r"the run waits for answers to \['b'\]; answer every pending interrupt"):
        check_answers(answers_from({"a": 1}), PENDING, every=True)
    with pytest.raises(RequestError, match="answer every pending interrupt"):
        served_check("r1", {"a": 1}, PENDING)  # the server's rule


@pytest.mark.parametrize("response", [42, None, ["charged"], True])
def test_an_in_doubt_question_takes_rerun_a_string_or_an_object(response: Any) -> None:
    doubt = {"d": {"id": "d", "name": IN_DOUBT}}
    for ok in ("rerun", "charged 5", {"status": "success", "content": [{"text": "charged"}]}):
        check_answers(answers_from({"d": ok}), doubt)
    with pytest.raises(InterruptError, match=r"in-doubt call 'd' takes 'rerun' or the result to record"):
        check_answers(answers_from({"d": response}), doubt)
    with pytest.raises(RequestError, match="in-doubt call 'd' takes 'rerun'"):
        served_check("r1", {"d": response}, doubt)


def make_charger(store: MemoryStore, log: list[str], crash: bool) -> Agent:
    @tool(idempotent=False)
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charge a card."""
        log.append(ctx.idempotency_key)
        if crash:
            raise Crash("after the charge")
        return f"charged {amount}"

    model = ScriptedModel([tool_call("charge", {"amount": 5}, tool_use_id="c1"), "paid"], stateful=True)
    return Agent(model=model, tools=[charge], store=store)


def test_a_durable_run_refuses_an_in_doubt_answer_of_another_type_and_stores_nothing() -> None:
    """The rule that changed: a durable run recorded any JSON answer to an in-doubt question as
    the call's result (``42`` became a JSON result); the server refused all but ``"rerun"``, a
    string or an object. Now every entry point refuses it, before anything changes."""
    store, log = MemoryStore(), []
    with pytest.raises(Crash):
        make_charger(store, log, crash=True)("pay", run_id="p")
    (question,) = make_charger(store, log, crash=False).resume("p").interrupts
    assert question.name == IN_DOUBT
    before = json.dumps(store.head("p"), sort_keys=True, default=str)
    with pytest.raises(InterruptError, match="takes 'rerun' or the result to record"):
        make_charger(store, log, crash=False).resume("p", [answer_block(question.id, 42)])
    assert json.dumps(store.head("p"), sort_keys=True, default=str) == before and log == ["p/c1"]
    assert str(make_charger(store, log, crash=False).resume("p", [answer_block(question.id, "charged 5")])) == "paid"
    assert log == ["p/c1"]  # recorded, not re-run


# -- routed to a graph's nodes and a swarm's member ---------------------------------------


def two_askers(log: list[str]) -> Graph:
    @tool
    def approve(ctx: ToolContext, amount: int) -> str:
        """Ask a human to approve an amount."""
        log.append(f"approved {amount}: {ctx.interrupt('approval', amount)}")
        return "ok"

    builder = GraphBuilder()
    for name, amount in (("ask", 5), ("ask2", 7)):
        model = ScriptedModel([tool_call("approve", {"amount": amount}, tool_use_id=f"{name}-1"), f"{name} done"], stateful=True)
        builder.add_node(Agent(model=model, tools=[approve], name=name), name)
    return builder.build()


def test_route_answers_checks_every_owners_share_first() -> None:
    waiting = {"n1": [PENDING["a"]], "n2": [PENDING["b"]]}
    assert route_answers(answers_from({"a": 1, "b": 2}), waiting, "node of this graph") == {
        "n1": [{"interruptId": "a", "response": 1}],
        "n2": [{"interruptId": "b", "response": 2}],
    }
    with pytest.raises(InterruptError, match=r"id .c.: no interrupted node of this graph waits on interrupt .c. \(waiting: a, b\)"):
        route_answers(answers_from({"c": 1}), waiting, "node of this graph")
    with pytest.raises(InterruptError, match="is already answered"):
        route_answers(answers_from([{"interruptId": "a", "response": 1}, {"interruptId": "a", "response": 2}]), waiting, "node")


def test_a_graph_refuses_a_bad_answer_before_any_node_resumes() -> None:
    """The defect fixed: a graph checked only which node an answer belongs to, so with one good
    and one bad answer the first node resumed (its tool ran) before the second refused."""
    log: list[str] = []
    graph = two_askers(log)
    first = graph("go")
    assert first.status == "interrupted" and log == []
    ids = {i.reason: i.id for i in first.interrupts}
    bad = [answer_block(ids[5], "yes"), {"interruptResponse": {"interruptId": ids[7]}}]  # the second has no response
    with pytest.raises(InterruptError, match=r"responses\[1\]\.interruptResponse\.response is missing"):
        graph(bad)
    assert log == []  # no node resumed
    done = graph([answer_block(ids[5], "yes"), answer_block(ids[7], "no")])
    assert done.status == "completed" and sorted(log) == ["approved 5: yes", "approved 7: no"]


def test_a_swarm_refuses_a_bad_answer_to_its_waiting_member() -> None:
    @tool
    def publish(ctx: ToolContext) -> str:
        """Publish once approved."""
        return f"published ({ctx.interrupt('approve')})"

    model = ScriptedModel([tool_call("publish", {}), "sent"], stateful=True)
    swarm = Swarm([Agent(model=model, tools=[publish], name="publisher")])
    first = swarm("go")
    (question,) = first.interrupts
    for bad, match in [
        ([answer_block("nope", 1)], "no interrupted member of this swarm waits on interrupt 'nope'"),
        ([answer_block(question.id, 1), answer_block(question.id, 2)], "answered twice"),
        ([{"interruptResponse": {"interruptId": question.id, "response": 1, "x": 2}}], "x is not an interruptResponse key"),
    ]:
        with pytest.raises(PromptError, match=match):  # an InterruptError is a PromptError, as the multi-agent refusals were
            swarm(bad)
    assert swarm([answer_block(question.id, "ok")]).status == "completed"


# -- the names of the differences a resume accepts ----------------------------------------


@pytest.mark.parametrize("refuse", [allow_names, lambda allow: Agent(model=ScriptedModel(["hi"]))("hi", allow=allow)])
def test_allow_is_a_list_of_names(refuse: Callable[[Any], Any]) -> None:
    """The rule that changed for an agent: it refused a string but took a list of anything; the
    Temporal client and workflow refused non-string names. Now all refuse both."""
    assert allow_names(None) == [] and allow_names(("tool_removed:x",)) == ["tool_removed:x"]
    for allow in ("tool_removed", [1], 5):
        with pytest.raises(ConfigurationError, match="allow must be a list of difference names"):
            refuse(allow)
    with pytest.raises(InterruptError, match="allow must be"):
        allow_names(["ok", None], InterruptError)
