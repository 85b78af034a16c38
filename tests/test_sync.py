"""Ctrl-C in a plain SDK script: ``agent("...")`` with a tool sleeping in its thread stops at once,
with one line on stderr, and a durable run is left ``stopped`` (resumable)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tether._sync import INTERRUPTED
from tether.durable import SQLiteStore

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tether import Agent, ScriptedModel, tool
    from tether.durable import SQLiteStore
    from tether.models import tool_call

    @tool
    def slow() -> str:
        \"\"\"Sleep for minutes (the test interrupts it).\"\"\"
        Path(sys.argv[1]).write_text("entered")
        time.sleep(600)
        return "done"

    store = SQLiteStore(sys.argv[3]) if len(sys.argv) > 3 else None
    agent = Agent(model=ScriptedModel([tool_call("slow", {}), "ok"]), tools=[slow], store=store)
    options = {"run_id": "r1"} if store is not None else {}
    if sys.argv[2] == "catch":
        try:
            agent("go", **options)
        except KeyboardInterrupt:
            print("caught", flush=True)
    else:
        agent("go", **options)
    print("after", flush=True)
    """
)


def interrupt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the script, send SIGINT once its tool is sleeping, and wait (at most 20 s) for it to exit."""
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    entered = tmp_path / "entered"
    process = subprocess.Popen(
        [sys.executable, str(script), str(entered), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not entered.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)  # the tool sleeps 600 s: waiting for it would time out
    finally:
        process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ctrl_c_stops_a_plain_script_at_once_with_one_line(tmp_path: Path) -> None:
    done = interrupt(tmp_path, "plain")
    assert done.stderr.splitlines() == [f"tether: {INTERRUPTED}"]
    assert done.returncode == -signal.SIGINT  # Python's own exit on an uncaught Ctrl-C
    assert done.stdout == ""  # nothing after the call ran


def test_the_interrupt_is_a_keyboard_interrupt_and_a_durable_run_stays_resumable(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = interrupt(tmp_path, "catch", str(db))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["caught", "after"]
    assert done.stderr == ""
    (run,) = SQLiteStore(db).list_runs()
    assert run.run_id == "r1" and run.status == "stopped"
