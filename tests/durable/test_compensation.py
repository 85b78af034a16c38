"""Compensation (tether.durable.compensation): a failed, cancelled or budget-stopped run's
performed effects are undone newest first, once each, each undo a recorded step; the example
``examples/compensation.py`` is the agent under test (its provider log is keyed by idempotency key)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, Budget, CompensationError
from tether.durable import SQLiteStore
from tether.durable.compensation import performed_calls
from tether.models import tool_call

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import compensation as example  # noqa: E402

RUN = example.RUN_ID
REVERSED = [f"{RUN}/charge/undo", f"{RUN}/hotel/undo", f"{RUN}/flight/undo"]


def booking(tmp_path: Path, **options: Any) -> tuple[Agent, SQLiteStore]:
    store = SQLiteStore(tmp_path / "runs.db")
    return example.build_agent(tmp_path, store, **options), store


def provider(tmp_path: Path) -> dict[str, Any]:
    return example.Provider(tmp_path).read()


def positions(store: SQLiteStore) -> list[str]:
    return [step.position for step in store.history(RUN)]


def status(store: SQLiteStore) -> str:
    (summary,) = store.list_runs()
    return summary.status


def test_a_failed_run_is_undone_in_reverse_once_each(tmp_path: Path) -> None:
    agent, store = booking(tmp_path)
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)
    log = provider(tmp_path)
    assert sorted(log["effects"]) == [f"{RUN}/charge", f"{RUN}/flight", f"{RUN}/hotel"]
    assert log["attempts"] == REVERSED
    assert [log["undone"][key]["what"] for key in REVERSED] == ["charged 740.0", "3 nights in Lisbon", "flight to Lisbon"]
    assert status(store) == "compensated"
    assert positions(store)[-5:] == ["unwind", "undo", "undo", "undo", "unwound"]
    undos = [step.undo for step in store.history(RUN) if step.position == "undo"]
    assert [(u or {}).get("toolUseId") for u in undos] == ["charge", "hotel", "flight"]
    assert all((u or {}).get("outcome") == "undone" for u in undos)


def test_compensation_is_off_by_default_and_on_request_runs_once(tmp_path: Path) -> None:
    agent, store = booking(tmp_path, compensate_on=())
    with pytest.raises(RuntimeError):
        agent("book", run_id=RUN)
    assert provider(tmp_path)["attempts"] == []
    assert status(store) == "failed"
    report = agent.compensate(RUN)
    assert (report.status, report.trigger) == ("compensated", "requested")
    assert [u.tool_use_id for u in report.undos] == ["charge", "hotel", "flight"]
    again = agent.compensate(RUN)  # already compensated: the stored report, nothing undone again
    assert again == report
    assert provider(tmp_path)["attempts"] == REVERSED
    with pytest.raises(CompensationError, match="compensated"):
        agent.resume(RUN)


def test_a_run_that_finishes_undoes_nothing(tmp_path: Path) -> None:
    script = [tool_call("book_flight", {"to": "Oslo"}, tool_use_id="flight"), "booked"]
    agent, store = booking(tmp_path, script=script, compensate_on=("failed", "cancelled", "budget"))
    assert agent("book", run_id=RUN).stop_reason == "end_turn"
    assert provider(tmp_path)["attempts"] == []
    assert status(store) == "finished"
    assert not {"unwind", "undo", "unwound"} & set(positions(store))


def test_a_cancel_mid_run_undoes_what_was_done(tmp_path: Path) -> None:
    holder: list[Agent] = []

    def cancel_then_ticket(_messages: Any) -> Any:
        holder[0].cancel()  # the user cancels while the fourth step is being decided
        return tool_call("book_flight", {"to": "Porto"}, tool_use_id="never")

    script = [*example_script()[:3], cancel_then_ticket]
    agent, store = booking(tmp_path, script=script, compensate_on=("cancelled",))
    holder.append(agent)
    assert agent("book", run_id=RUN).stop_reason == "cancelled"
    assert provider(tmp_path)["attempts"] == REVERSED
    assert status(store) == "compensated"


def test_a_budget_stop_undoes_what_was_done(tmp_path: Path) -> None:
    script = [*example_script()[:3], tool_call("book_flight", {"to": "Porto"}, tool_use_id="fourth"), "done"]
    agent, store = booking(tmp_path, script=script, compensate_on=("budget",), budget=Budget(max_tool_calls=3))
    assert agent("book", run_id=RUN).stop_reason == "budget_exhausted"
    log = provider(tmp_path)
    assert f"{RUN}/fourth" not in log["effects"]
    assert log["attempts"] == REVERSED
    assert status(store) == "compensated"


def test_a_compensation_that_raises_is_recorded_and_the_unwinding_goes_on(tmp_path: Path) -> None:
    agent, store = booking(tmp_path, failing_refund=True)
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id=RUN)
    assert provider(tmp_path)["attempts"] == REVERSED[1:]  # the hotel and the flight still undone
    assert status(store) == "compensation_failed"
    last = store.history(RUN)[-1]
    assert last.position == "unwound"
    assert last.stop_reason is not None and "charge_card (charge): RuntimeError: the card network refused" in last.stop_reason
    report = agent.compensate(RUN)  # asking again runs nothing: a failed undo is not retried blindly
    assert report.status == "compensation_failed"
    assert [(u.tool, u.outcome) for u in report.undos] == [("charge_card", "failed"), ("book_hotel", "undone"), ("book_flight", "undone")]
    assert report.failed[0].error is not None and "refused the refund of 740.0" in report.failed[0].error
    assert provider(tmp_path)["attempts"] == REVERSED[1:]


def test_performed_calls_are_newest_first_with_in_doubt_calls_and_without_errors() -> None:
    def use(ident: str, name: str = "t") -> dict[str, Any]:
        return {"toolUse": {"toolUseId": ident, "name": name, "input": {"x": ident}}}

    def result(ident: str, status: str = "success") -> dict[str, Any]:
        return {"toolResult": {"toolUseId": ident, "status": status, "content": [{"text": ident}]}}

    messages: list[Any] = [
        {"role": "assistant", "content": [use("a"), use("b")]},
        {"role": "user", "content": [result("a"), result("b", "error")]},
        {"role": "assistant", "content": [use("a")]},  # the same call again (a rewritten history): once
        {"role": "assistant", "content": [use("c"), use("d"), use("e")]},
    ]
    open_results: dict[str, Any] = {"c": result("c")["toolResult"]}
    plan = performed_calls(messages, open_results, ["c", "d"], "tools")
    assert [(p["toolUseId"], p["result"] is None) for p in plan] == [("d", True), ("c", False), ("a", False)]


def test_compensate_on_is_checked(tmp_path: Path) -> None:
    with pytest.raises(CompensationError, match="'failure' is not one of"):
        booking(tmp_path, compensate_on=("failure",))
    with pytest.raises(CompensationError, match="the string"):
        booking(tmp_path, compensate_on="failed")


def example_script() -> list[Any]:
    return [
        tool_call("book_flight", {"to": "Lisbon"}, tool_use_id="flight"),
        tool_call("book_hotel", {"city": "Lisbon", "nights": 3}, tool_use_id="hotel"),
        tool_call("charge_card", {"amount": 740.0}, tool_use_id="charge"),
    ]
