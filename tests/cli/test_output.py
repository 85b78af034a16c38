"""What scripts get from ``tether run``: the prompt from stdin, ``--quiet`` and ``--json``; tables that fit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from .conftest import Outcome, calc_call, one_line_error, store_of, tether_process


def console_run(home: Path, *args: str, stdin: str | None = None, **kwargs: object) -> Outcome:
    process = tether_process(*args, home=home, module=False, stdin=None if stdin is None else -1, **kwargs)  # -1: a pipe
    out, err = process.communicate(stdin, timeout=120)
    return Outcome(process.returncode, out, err)


def test_prompt_from_stdin(home: Path, script: Callable[..., str]) -> None:
    prompt = "What is 12 * 34 + 5?\nShow the calculation."
    done = console_run(home, "run", "-", "--model", script("It is 413."), "--run-id", "piped", stdin=prompt + "\n")
    assert done.code == 0, done.err
    stored = store_of(home).load("piped")
    assert stored is not None and stored.messages[0]["content"] == [{"text": prompt}]


def test_empty_stdin_is_one_line(home: Path, script: Callable[..., str]) -> None:
    one_line_error(console_run(home, "run", "-", "--model", script("x"), stdin=""), "tether run", "standard input")
    assert not home.exists()  # no store was created


def test_quiet_prints_only_the_answer(home: Path, script: Callable[..., str]) -> None:
    done = console_run(home, "run", "What is 12 * 34 + 5?", "--model", script(calc_call(), "It is 413."), "--quiet")
    assert done.code == 0 and done.out == "It is 413.\n" and done.err == ""


def test_json_is_one_object(home: Path, script: Callable[..., str]) -> None:
    done = console_run(home, "run", "What is 12 * 34 + 5?", "--model", script(calc_call(), "It is 413."), "--json", "--run-id", "j")
    assert done.code == 0 and done.err == "" and len(done.out.splitlines()) == 1
    data = json.loads(done.out)
    assert data == {
        "run_id": "j",
        "status": "finished",
        "answer": "It is 413.",
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30},
        "interrupts": [],
    }
    resumed = console_run(home, "resume", "j", "--model", script("Again 413."), "--json", "--ignore-stored-config")
    assert resumed.code == 0 and json.loads(resumed.out)["run_id"] == "j"


def test_quiet_and_json_exclude_each_other(home: Path, cli: Callable[..., Outcome]) -> None:
    one_line_error(cli("run", "hi", "--quiet", "--json"), "--json", "--quiet")


def long_ids(cli: Callable[..., Outcome], script: Callable[..., str]) -> list[str]:
    made = [f"customer-{n}-" + "x" * 90 for n in range(2)]
    for run_id in made:
        assert cli("run", "hi", "--model", script("hello"), "--run-id", run_id).code == 0
    return made


def test_runs_in_a_pipe_prints_whole_rows(tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    made = long_ids(cli, script)
    process = tether_process("runs", home=tmp_path, module=False, extra_env={"HOME": str(tmp_path), "TETHER_HOME": str(home)})
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 2  # one line per run: nothing wrapped or cut at 80 (or 120) columns
    for run_id in made:
        assert any(run_id in row and "finished" in row for row in rows)


def test_runs_fit_a_narrow_terminal_without_cutting_ids(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    made = long_ids(cli, script)
    for columns in ("200", "120"):
        process = tether_process("runs", home=home, module=False, extra_env={"COLUMNS": columns})
        out, _ = process.communicate(timeout=60)
        assert all(len(line) <= int(columns) for line in out.splitlines())
        cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
        ids = "".join(row[0] for row in cells)
        assert all(run_id in ids for run_id in made)  # folded in a narrow terminal, never cut
        assert [row[1] for row in cells if row[1]] == ["finished", "finished"]  # the other columns stay whole
        assert len(cells) == (2 if columns == "200" else 4)
