"""A run store is data: a tampered row never chooses code, endpoints or file roots for the CLI.

Each test edits a run's stored hint (``state["tether.cli"]``) directly in SQLite, as anyone who
can write the store could, then continues the run the way a user would. The CLI must refuse
with a one-line hint naming the stored flags, and with ``--ignore-stored-config`` must use only
the user's flags: no planted module imported, no request to the row's endpoint, no wider root.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Outcome, calc_call, one_line_error, store_of


def tamper(home: Path, run_id: str, **hint: Any) -> None:
    """Overwrite fields of the run's stored hint in its head row, behind Tether's back."""
    with contextlib.closing(sqlite3.connect(home / "runs.db")) as db, db:
        (text,) = db.execute("SELECT head FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        head = json.loads(text)
        head["state"]["tether.cli"].update(hint)
        db.execute("UPDATE runs SET head = ? WHERE run_id = ?", (json.dumps(head), run_id))


@pytest.fixture
def work(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's working directory (the default root of read_file); sys.path is restored after."""
    path = tmp_path / "work"
    path.mkdir()
    monkeypatch.chdir(path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_tools puts the cwd on sys.path
    return path.resolve()


@pytest.fixture
def failed(cli: Callable[..., Outcome], script: Callable[..., str]) -> Callable[[str], str]:
    """Make a run whose first model call failed: resuming it calls the model. Returns its spec."""

    def make(run_id: str) -> str:
        spec = script(calc_call())  # the second call fails (the script ends): the run is kept, marked failed
        one_line_error(cli("run", "hi", "--model", spec, "--run-id", run_id), "ran out of responses")
        return spec

    return make


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP socket listening on 127.0.0.1; returns its port and what each connection sent."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    received.append(conn.recv(65536))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join(timeout=5)
    server.close()


def test_a_row_naming_a_planted_module_imports_nothing(
    work: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    marker = work.parent / "planted-module-was-imported"
    (work / "planted_tools.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\nTOOLS = []\n")
    spec = script("hello", "again")
    assert cli("run", "hi", "--model", spec, "--run-id", "r1").code == 0
    tamper(home, "r1", tools=["planted_tools:TOOLS"])

    refused = cli("resume", "r1", "--model", spec)
    assert not marker.exists(), "the module named by the row was imported"
    assert refused.code == 1
    one_line_error(
        refused,
        f"run 'r1' was created with --model {spec} --tools planted_tools:TOOLS --root {work}; pass the same to resume",
        "(yours: no --tools), or --ignore-stored-config to use yours",
    )
    one_line_error(cli("run", "more", "--run-id", "r1", "--model", spec), "--tools planted_tools:TOOLS", "pass the same to run")
    assert "--tools planted_tools:TOOLS" in cli("show", "r1").out  # shown, so the user knows what it claims

    ignored = cli("resume", "r1", "--model", spec, "--ignore-stored-config")  # only the user's flags
    assert ignored.code == 0, ignored.err
    assert not marker.exists() and "planted_tools" not in sys.modules


def test_a_row_naming_an_endpoint_gets_no_request(
    work: Path,
    home: Path,
    cli: Callable[..., Outcome],
    script: Callable[..., str],
    failed: Callable[[str], str],
    listener: tuple[int, list[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port, received = listener
    failed("f")
    endpoint = f"openai-compatible:http://127.0.0.1:{port}/v1:x"
    tamper(home, "f", model=endpoint)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-tether-test-do-not-leak")
    mine = script("(not replayed: the run's model_state is at reply 2)", "recovered")
    monkeypatch.setenv("TETHER_MODEL", mine)

    refused = cli("resume", "f")
    assert received == [], "the endpoint named by the row was called"
    one_line_error(refused, f"created with --model {endpoint} --root", f"(yours: --model {mine} (from $TETHER_MODEL))")
    one_line_error(cli("run", "next", "--run-id", "f"), f"created with --model {endpoint}", "pass the same to run")
    resumed = cli("resume", "f", "--ignore-stored-config")
    assert resumed.code == 0, resumed.err
    assert "recovered" in resumed.out and "scripted" in resumed.out.splitlines()[0]
    assert received == []  # nothing connected, so no Authorization header went anywhere


def test_the_users_model_is_used_never_the_rows(
    work: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = script("from the row", "from the row again")
    assert cli("run", "one", "--model", stored, "--run-id", "m").code == 0
    mine = script("(not replayed: the run's model_state is at reply 2)", "from TETHER_MODEL")
    monkeypatch.setenv("TETHER_MODEL", mine)

    refused = cli("run", "two", "--run-id", "m")
    assert "from the row" not in refused.out, "the row's model was used"
    one_line_error(refused, f"created with --model {stored} ", f"(yours: --model {mine} (from $TETHER_MODEL))")
    one_line_error(cli("resume", "m"), f"created with --model {stored} ", "pass the same to resume")
    outcome = cli("run", "two", "--run-id", "m", "--ignore-stored-config")
    assert outcome.code == 0, outcome.err
    assert "from TETHER_MODEL" in outcome.out and "from the row" not in outcome.out


def test_resume_of_a_failed_run_with_another_env_model_is_refused(
    work: Path,
    home: Path,
    cli: Callable[..., Outcome],
    script: Callable[..., str],
    failed: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = failed("g")
    monkeypatch.setenv("TETHER_MODEL", script("(not replayed: the run's model_state is at reply 2)", "from TETHER_MODEL"))
    one_line_error(cli("resume", "g"), f"run 'g' was created with --model {stored} ")
    (summary,) = store_of(home).list_runs()
    assert summary.status == "failed"  # refused before anything ran
    outcome = cli("resume", "g", "--ignore-stored-config")
    assert outcome.code == 0 and "from TETHER_MODEL" in outcome.out


def test_a_row_with_root_slash_does_not_widen_the_file_reader(
    work: Path, home: Path, tmp_path: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    read = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": str(secret)}}}]}
    spec = script("hello", read, "done")  # the first turn says hello, the second reads the secret
    assert cli("run", "hi", "--model", spec, "--run-id", "r").code == 0
    tamper(home, "r", root="/")

    refused = cli("run", "read it", "--run-id", "r", "--model", spec)
    assert "TOP-SECRET" not in refused.out, "read_file used the row's root"
    one_line_error(refused, "--root /;", f"(yours: --root {work} (the current directory))")
    one_line_error(cli("resume", "r", "--model", spec), "--root /;", "pass the same to resume")
    outcome = cli("run", "read it", "--run-id", "r", "--model", spec, "--ignore-stored-config")
    assert outcome.code == 0, outcome.err
    stored = store_of(home).load("r")
    assert stored is not None
    (result,) = [block["toolResult"] for message in stored.messages for block in message["content"] if "toolResult" in block]
    assert result["status"] == "error" and f"is outside the allowed directory '{work}'" in result["content"][0]["text"]
    assert "TOP-SECRET" not in outcome.out and "TOP-SECRET" not in json.dumps(stored.messages)


def test_run_then_resume_with_the_same_flags(work: Path, home: Path, tmp_path: Path, cli: Callable[..., Outcome]) -> None:
    tools = '''
        from tether import tool

        @tool
        def shout(text: str) -> str:
            """Upper-case the text."""
            return text.upper()
    '''
    (work / "happy_tools.py").write_text(textwrap.dedent(tools))
    (work / "sub").mkdir()
    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "shout", "input": {"text": "hi"}}}]}
    path = tmp_path / "happy.json"
    path.write_text(json.dumps([call]))  # the second model call fails: the run stops after the tool
    flags = ["--model", f"scripted:{path}", "--tools", "happy_tools:shout"]
    one_line_error(cli("run", "shout hi", *flags, "--root", "sub", "--run-id", "h"), "ran out of responses")
    shown = cli("show", "h").out
    assert f"created with: --model scripted:{path} --tools happy_tools:shout --root {work / 'sub'}" in shown

    path.write_text(json.dumps([call, "SHOUTED: HI"]))  # same spec, now with the reply the resume needs
    resumed = cli("resume", "h", *flags, "--root", str(work / "sub" / ".." / "sub"))
    assert resumed.code == 0, resumed.err
    assert "SHOUTED: HI" in resumed.out and "-> shout" not in resumed.out  # the finished tool call is not redone
    (summary,) = store_of(home).list_runs()
    assert (summary.status, summary.turns) == ("finished", 1)
