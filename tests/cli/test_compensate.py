"""``tether compensate RUN``: the run's performed effects undone with its tools' compensations;
``tether show`` prints the unwinding."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import Agent, ScriptedModel
from tether.durable.runner import default_store
from tether.models import tool_call

from .compensation_tools import TOOLS
from .conftest import Outcome

FLAGS = ("--tools", "tests.cli.compensation_tools:TOOLS", "--no-demo-tools")


def test_compensate_undoes_a_failed_run_and_show_prints_it(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "effects.log"
    monkeypatch.setenv("COMPENSATION_LOG", str(log))
    script = [
        tool_call("book", {"city": "Oslo"}, tool_use_id="b1"),
        tool_call("book", {"city": "Rome"}, tool_use_id="b2"),
        RuntimeError("down"),
    ]
    agent = Agent(model=ScriptedModel(script), tools=TOOLS, store=default_store())
    with pytest.raises(RuntimeError):
        agent("book two rooms", run_id="trip")
    agent.close()
    done = cli("compensate", "trip", *FLAGS, "--json")
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert (report["status"], report["trigger"]) == ("compensated", "requested")
    assert [u["toolUseId"] for u in report["undos"]] == ["b2", "b1"]
    assert log.read_text().splitlines() == ["did trip/b1", "did trip/b2", "undid trip/b2/undo", "undid trip/b1/undo"]
    again = cli("compensate", "trip", *FLAGS)  # compensated already: the report, nothing undone again
    assert again.code == 0 and "compensated" in again.out
    assert len(log.read_text().splitlines()) == 4
    shown = cli("show", "trip").out
    assert "compensated" in shown
    assert "unwinding (requested): book (b2), book (b1)" in shown
    assert "undo book (b2) undone" in shown and "undo book (b1) undone" in shown
    listed = cli("runs", "--status", "compensated").out
    assert "trip" in listed


def test_an_unwinding_cut_short_is_shown_and_finished_with_the_same_key(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "effects.log"
    monkeypatch.setenv("COMPENSATION_LOG", str(log))
    agent = Agent(
        model=ScriptedModel([tool_call("book", {"city": "Oslo"}, tool_use_id="b1"), RuntimeError("down")]),
        tools=TOOLS,
        store=default_store(),
    )
    with pytest.raises(RuntimeError):
        agent("book a room", run_id="cut")
    monkeypatch.setenv("COMPENSATION_STOP", "1")
    with pytest.raises(KeyboardInterrupt):
        agent.compensate("cut")
    agent.close()
    shown = cli("show", "cut").out
    assert "compensating" in shown and "its unwinding was cut short" in shown and "compensate cut" in shown
    monkeypatch.delenv("COMPENSATION_STOP")
    assert cli("compensate", "cut", *FLAGS).code == 0
    assert log.read_text().splitlines() == ["did cut/b1", "undid cut/b1/undo"]
    assert "undo book (b1) undone (undo re-run, same key)" in cli("show", "cut").out


def test_compensate_an_unknown_run_is_an_error(home: Path, cli: Callable[..., Outcome]) -> None:
    default_store().close()  # the store exists; the run does not
    outcome = cli("compensate", "nope", *FLAGS)
    assert outcome.code == 1 and "no run 'nope'" in outcome.err


def test_show_names_the_nested_run_an_undo_unwound(tmp_path: Path, home: Path, cli: Callable[..., Outcome]) -> None:
    from tests.durable.compensation_worker import build_nested

    agent = build_nested(tmp_path, default_store(), compensate_on=("failed",))
    with pytest.raises(RuntimeError, match="ticketing"):
        agent("book", run_id="trip-7")
    agent.close()
    shown = cli("show", "trip-7").out
    assert "unwinding (failed): charge_card (charge), booker (booker)" in shown
    assert "undo booker (booker) undone (nested run trip-7.booker unwound)" in shown
    child = cli("show", "trip-7.booker").out
    assert "undo book_hotel (hotel) undone" in child and "undo book_flight (flight) undone" in child
