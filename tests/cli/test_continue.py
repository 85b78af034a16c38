"""Continuing runs from the command line: ``resume`` refuses a run whose tools are missing, and the
command ``fork`` prints works as printed."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tether import Agent
from tether.durable import SQLiteStore
from tether.models.scripted import tool_call

from .conftest import Outcome, calc_call, one_line_error, store_of, tether_process

APPROVE = '''
    from tether import tool
    from tether.tools.context import ToolContext

    @tool
    def approve(item: str, ctx: ToolContext) -> str:
        """Ask a human to approve.

        Args:
            item: What to buy.
        """
        return f"{item}: {ctx.interrupt('approve', {'item': item})}"
'''


def test_resume_refuses_a_run_whose_tools_are_missing_and_changes_nothing(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "py_tools.py").write_text(textwrap.dedent(APPROVE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from py_tools import approve  # type: ignore[import-not-found]

    from tether import ScriptedModel

    store = store_of(home)
    made = Agent(model=ScriptedModel([tool_call("approve", {"item": "tea"})]), tools=[approve], store=store)("buy tea", run_id="py")
    assert made.stop_reason == "interrupt"  # a run created from Python, waiting for an answer
    before = (store.head("py"), len(store.history("py")))
    (interrupt,) = made.interrupts
    answer = f"{interrupt.id}=yes"

    refused = cli("resume", "py", "--answer", answer, "--model", script("bought"))
    one_line_error(refused, "tether resume", "run 'py'", "'approve'", "--tools MODULE:ATTR", "not changed")
    assert refused.code == 1 and refused.out == ""
    assert (store.head("py"), len(store.history("py"))) == before  # nothing written: not failed, not touched

    done = cli("resume", "py", "--answer", answer, "--model", script("bought"), "--tools", "py_tools:approve")
    assert done.code == 0, done.err
    assert "<- tea: yes" in done.out and "bought" in done.out


def console(home: Path, command: list[str], cwd: Path) -> Outcome:
    """Run a ``tether ...`` command line with the console script; a printed one exactly as printed
    (``tether``, or the script's path when PATH does not find it: see test_program)."""
    if command[0] == "tether" and shutil.which("tether") is None:  # a command the test wrote, not one printed
        process = tether_process(*command[1:], home=home, module=False, cwd=cwd)
    else:
        env = {**os.environ, "TETHER_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        env.pop("TETHER_MODEL", None)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    out, err = process.communicate(timeout=60)
    return Outcome(process.returncode, out, err)


def printed_command(out: str) -> list[str]:
    (line,) = [line for line in out.splitlines() if line.startswith("continue it with: ")]
    return shlex.split(line.removeprefix("continue it with: "))


def test_fork_prints_a_command_that_works(tmp_path: Path, script: Callable[..., str]) -> None:
    """With a store of its own (--store) and run from another directory, as a user would paste it."""
    db = tmp_path / "elsewhere" / "runs.db"
    home = tmp_path / "home"  # the default store: must not be what the printed commands use
    spec = script(calc_call(), "It is 413.", "It is still 413.")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    made = console(home, ["tether", "run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "calc", "--store", str(db)], tmp_path)
    assert made.code == 0, made.err

    forked = console(home, ["tether", "--store", str(db), "fork", "calc", "--at", "3"], tmp_path)
    assert forked.code == 0, forked.err
    command = printed_command(forked.out)
    assert Path(command[0]).name == "tether" and command[1:3] == ["resume", "calc.fork-1"] and "--store" in command
    resumed = console(home, command, elsewhere)
    assert resumed.code == 0, resumed.err
    assert "It is 413." in resumed.out
    assert SQLiteStore(db).list_runs()[-1].status == "finished" and not (home / "runs.db").exists()

    ended = console(home, ["tether", "fork", "calc", "--at", "5", "--store", str(db)], tmp_path)  # the finished turn
    command = printed_command(ended.out)
    assert Path(command[0]).name == "tether" and command[1:5] == ["run", "Your next message", "--run-id", "calc.fork-2"]
    again = console(home, command, elsewhere)
    assert again.code == 0, again.err
    runs = {run.run_id: run for run in SQLiteStore(db).list_runs()}
    assert runs["calc.fork-2"].status == "finished" and runs["calc.fork-2"].turns == 2


def test_resume_from_a_directory_above_the_run_keeps_its_root_and_elsewhere_names_it(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = (tmp_path / "proj").resolve()
    project.mkdir()
    (project / "notes.txt").write_text("NOTES FROM THE PROJECT")
    read = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "notes.txt"}}}]}
    path = tmp_path / "script.json"
    path.write_text(json.dumps([calc_call()]))  # the second model call fails: the run stops after the calculator
    spec = f"scripted:{path}"
    monkeypatch.chdir(project)
    one_line_error(cli("run", "read my notes", "--model", spec, "--run-id", "r"), "ran out of responses")
    path.write_text(json.dumps([calc_call(), read, "done"]))  # the same spec, now with the replies the resume needs

    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)  # a sibling: its files are not the run's, and the row cannot choose them
    one_line_error(
        cli("resume", "r", "--model", spec),
        f"created with --model {spec} --root {project}; pass the same to resume",
        f"(yours: --root {other.resolve()} (the current directory))",
    )
    monkeypatch.chdir(tmp_path)  # above the project: the run keeps its root
    resumed = cli("resume", "r", "--model", spec)
    assert resumed.code == 0, resumed.err
    assert "NOTES FROM THE PROJECT" in resumed.out and "done" in resumed.out
