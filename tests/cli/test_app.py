"""The command line itself: usage errors, --store, unknown runs (one line on stderr, non-zero)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Outcome, calc_call, one_line_error, store_of


def test_no_command_is_a_usage_error(home: Path, cli: Callable[..., Outcome]) -> None:
    outcome = cli()
    assert outcome.code == 2
    one_line_error(outcome, "COMMAND")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["launch"], "invalid choice"),
        (["fork", "r"], "--at"),
        (["fork", "r", "--at", "x"], "'x' is not a step number"),
        (["fork", "r", "--at", "0"], "steps count from 1"),
        (["show"], "RUN"),
        (["run"], "prompt"),
        (["runs", "--bogus"], "--bogus"),
        (["run", ""], "the prompt is empty"),
        (["run", " \n "], "the prompt is empty"),
        (["run", "hi", "--model", ""], "--model is empty"),
        (["resume", "r", "--model", " "], "--model is empty"),
        (["run", "hi", "--root", ""], "--root is empty"),
    ],
)
def test_bad_arguments_give_one_line(home: Path, cli: Callable[..., Outcome], args: list[str], needle: str) -> None:
    outcome = cli(*args)
    assert outcome.code == 2
    one_line_error(outcome, needle)
    assert not home.exists()  # refused before any store was opened: no run on an empty prompt, no fallback model


@pytest.mark.parametrize("command", ["show", "export", "size", "resume"])
def test_unknown_run_is_one_line(home: Path, cli: Callable[..., Outcome], script: Callable[..., str], command: str) -> None:
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "known").code == 0
    outcome = cli(command, "ghost")
    assert outcome.code == 1
    one_line_error(outcome, "'ghost'")


def test_fork_errors_are_one_line(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "r").code == 0
    one_line_error(cli("fork", "ghost", "--at", "1"), "'ghost'")
    one_line_error(cli("fork", "r", "--at", "99"), "no step 99", "steps 1..3")
    one_line_error(cli("fork", "r", "--at", "1", "--new-id", "r"), "'r' already exists")
    one_line_error(cli("fork", "r", "--at", "1", "--new-id", "bad/id"), "run_id")


def test_reading_commands_need_an_existing_store(home: Path, cli: Callable[..., Outcome]) -> None:
    one_line_error(cli("show", "r"), "no run store", "runs.db")
    assert not (home / "runs.db").exists()  # nothing was created by looking
    outcome = cli("runs")
    assert outcome.code == 0 and "no runs yet" in outcome.out


def test_store_option_before_or_after_the_command(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    db = tmp_path / "elsewhere.db"
    assert cli("--store", str(db), "run", "hi", "--model", script("hello"), "--run-id", "a").code == 0
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "b", "--store", str(db)).code == 0
    listed = cli("runs", "--store", str(db)).out
    assert " a " in listed and " b " in listed
    assert not (home / "runs.db").exists()
    assert " a " in cli("--store", str(db), "runs").out


def test_bad_model_spec_and_tools_are_one_line(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    one_line_error(cli("run", "hi", "--model", "nosuch:thing"), "--model 'nosuch:thing'", "unknown provider")
    one_line_error(cli("run", "hi", "--model", "openai:"), "names no MODEL")
    one_line_error(cli("run", "hi", "--model", script(calc_call()), "--tools", "no_such_module_xyz:TOOLS"), "no_such_module_xyz")
    one_line_error(cli("run", "hi", "--model", script(calc_call()), "--tools", "json"), "module:attr")
    one_line_error(cli("run", "hi", "--model", script(calc_call()), "--tools", "json:nothing_here"), "no attribute 'nothing_here'")
    one_line_error(cli("run", "hi", "--model", script(calc_call()), "--tools", "json:__version__"), "is not a tool")
    one_line_error(cli("resume", "r", "--answer", "oops"), "no run")


def test_a_failing_model_is_one_line_and_the_run_is_marked_failed(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    outcome = cli("run", "hi", "--model", script(calc_call()), "--run-id", "f")  # the second call fails: the script ends
    one_line_error(outcome, "ScriptedModel ran out of responses")
    assert " failed " in cli("runs").out and "was not kept" not in outcome.err  # it holds a model reply and a tool result


def test_a_run_whose_first_model_call_fails_is_not_kept(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    assert cli("run", "hi", "--model", script("hello"), "--run-id", "other").code == 0
    outcome = cli("run", "hi", "--model", script(), "--run-id", "f")  # an empty script: the very first call fails
    one_line_error(outcome, "ScriptedModel ran out of responses", "(run f was not kept: it had recorded nothing but the prompt)")
    assert [run.run_id for run in store_of(home).list_runs()] == ["other"]
    again = cli("run", "hi", "--model", script("fine now"), "--run-id", "f")  # the same command, once fixed, starts afresh
    assert again.code == 0 and "fine now" in again.out
    assert store_of(home).load("f").messages[0] == {"role": "user", "content": [{"text": "hi"}]}  # type: ignore[union-attr]
    failing_turn = cli("run", "more", "--model", script(), "--run-id", "f", "--ignore-stored-config")  # an existing run: kept
    one_line_error(failing_turn, "ran out of responses")
    assert "not kept" not in failing_turn.err and {run.run_id: run.status for run in store_of(home).list_runs()}["f"] == "failed"


def test_missing_rich_is_one_line(home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    for name in [n for n in sys.modules if n == "rich" or n.startswith("rich.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "rich", None)  # makes `import rich...` fail as if not installed
    one_line_error(cli("runs"), "pip install 'tether[cli]'")
