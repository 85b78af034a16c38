"""No command prints a traceback: a missing run, a bad store file, a damaged row is one line, exit 1.

The damaged rows are written with the ``sqlite3`` module behind the store's back; the store
reports each as a ``StoreError`` naming the run and the row. A raw ``sqlite3`` error (a foreign
file) or an exception Tether did not raise on purpose is reported too, in one line naming the
run or the store file. ``tether runs`` lists a run whose head is damaged as ``corrupt``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tether.cli import main
from tether.durable.sqlite import SPAN

from .conftest import Outcome, one_line_error, tether_process

NOT_JSON = "garbage{"
WRONG_SHAPE = '{"cursor": {"cycle_index": "x"}, "next_seq": "a", "start_seq": 0, "metrics": 3, "turns": "many", "state": 5}'
"""JSON whose fields have the wrong types (it used to break ``int()`` and ``.get`` deep in the store)."""
MISSING_FIELDS = '{"cursor": {}, "next_seq": 1}'
"""A head without ``start_seq`` (it used to raise a raw ``KeyError`` in the store)."""

COMMANDS: dict[str, list[str]] = {
    "show": ["show", "RUN"],
    "export": ["export", "RUN"],
    "size": ["size", "RUN"],
    "resume": ["resume", "RUN", "--model", "MODEL"],
    "resume-ignoring-hint": ["resume", "RUN", "--model", "MODEL", "--ignore-stored-config"],
    "fork": ["fork", "RUN", "--at", "1"],
    "runs": ["runs"],
    "run": ["run", "more", "--run-id", "RUN", "--model", "MODEL"],
}
SCENARIOS = [
    "missing run",
    "garbage store file",
    "foreign SQLite file",
    "store is a directory",
    "not JSON",
    "wrong shape",
    "missing fields",
]
CASES = [
    (command, scenario)
    for command in COMMANDS
    for scenario in SCENARIOS
    if not (scenario == "missing run" and command in ("runs", "run"))  # `runs` names no run; `run` would start it
    and not (scenario in ("not JSON", "wrong shape", "missing fields") and command == "runs")  # listed as corrupt: see below
]


def corrupt(db: Path, run_id: str, text: str) -> None:
    """Overwrite the run's head and every step row with ``text``."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE runs SET head = ? WHERE run_id = ?", (text, run_id))
        base = f"(SELECT num FROM runs WHERE run_id = ?) * {SPAN}"  # steps are keyed by run number and step
        conn.execute(f"UPDATE steps SET body = ? WHERE k >= {base} AND k < {base} + {SPAN}", (text, run_id, run_id))


@pytest.mark.parametrize(("command", "scenario"), CASES)
def test_bad_input_is_one_line_and_exit_1(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], command: str, scenario: str
) -> None:
    spec = script("hello", "again")
    assert cli("run", "hi", "--model", spec, "--run-id", "r1").code == 0
    db = home / "runs.db"
    run_id, needle = "r1", "'r1'"
    store_args: list[str] = []
    if scenario == "missing run":
        run_id, needle = "ghost", "'ghost'"
    elif scenario == "garbage store file":
        bad = tmp_path / "garbage.db"
        bad.write_text("this is not a database\n" * 100)
        store_args, needle = ["--store", str(bad)], "garbage.db"
    elif scenario == "foreign SQLite file":
        bad = tmp_path / "other-app.db"
        with contextlib.closing(sqlite3.connect(bad)) as conn, conn:
            conn.execute("CREATE TABLE runs (name TEXT)")  # another program's table of the same name
        store_args, needle = ["--store", str(bad)], "other-app.db"
    elif scenario == "store is a directory":
        (tmp_path / "a-directory").mkdir()
        store_args, needle = ["--store", str(tmp_path / "a-directory")], "a-directory"
    else:
        corrupt(db, "r1", {"not JSON": NOT_JSON, "wrong shape": WRONG_SHAPE, "missing fields": MISSING_FIELDS}[scenario])
    args = [spec if word == "MODEL" else run_id if word == "RUN" else word for word in COMMANDS[command]]

    outcome = cli(*store_args, *args)

    assert outcome.code == 1, outcome
    one_line_error(outcome)
    line = outcome.err.strip()
    assert needle in line or (command == "runs" and "runs.db" in line), line  # names the run or the file
    assert "Traceback" not in outcome.out + outcome.err


def test_the_console_script_prints_no_traceback_for_a_damaged_row(tmp_path: Path, home: Path, script: Callable[..., str]) -> None:
    assert main(["run", "hi", "--model", script("hello"), "--run-id", "r1"]) == 0
    corrupt(home / "runs.db", "r1", WRONG_SHAPE)
    process = tether_process("show", "r1", home=home, module=False)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: tether show: run 'r1': head: ") and "the store is damaged" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("damage", [NOT_JSON, WRONG_SHAPE, MISSING_FIELDS])
def test_runs_lists_a_damaged_run_as_corrupt_and_the_others_as_usual(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str], damage: str
) -> None:
    spec = script("hello", "again")
    assert cli("run", "hi", "--model", spec, "--run-id", "r1").code == 0
    assert cli("run", "hi", "--model", spec, "--run-id", "r2").code == 0
    corrupt(home / "runs.db", "r1", damage)
    outcome = cli("runs")
    assert outcome.code == 0 and outcome.err == "", outcome
    lines = {line.split()[1]: line for line in outcome.out.splitlines() if line.split()[1:2] in (["r1"], ["r2"])}
    assert "corrupt" in lines["r1"] and "finished" in lines["r2"], outcome.out


def test_tether_debug_shows_the_traceback_of_unexpected_errors(
    home: Path, script: Callable[..., str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tether.durable import SQLiteStore

    assert main(["run", "hi", "--model", script("hello"), "--run-id", "r1"]) == 0

    def buggy(self: SQLiteStore, run_id: str) -> None:
        int("not a number")  # a bug: an exception Tether does not raise on purpose

    monkeypatch.setattr(SQLiteStore, "load", buggy)
    assert main(["export", "r1"]) == 1
    assert "TETHER_DEBUG=1" in capsys.readouterr().err
    monkeypatch.setenv("TETHER_DEBUG", "1")
    with pytest.raises(ValueError, match="invalid literal"):
        main(["export", "r1"])
