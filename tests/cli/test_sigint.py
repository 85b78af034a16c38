"""Ctrl-C on the real ``tether`` console script: it stops at once, says so in one line, leaves the run
resumable, and no number of Ctrl-Cs prints a traceback.

The run is stopped while a tool runs in a thread and blocks until a gate file exists. The gate is
opened only after the process has exited, so the process can only exit if Ctrl-C does not wait
for that thread (``asyncio.run`` did: Ctrl-C took as long as the model call or tool it waited for).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Outcome, store_of, tether_process

BLOCKER = '''
import pathlib, time
from tether import tool

HERE = pathlib.Path(__file__).parent


@tool
def slow_job(job: str) -> str:
    """Do a slow job.

    Args:
        job: What to do.
    """
    (HERE / "started").touch()
    while not (HERE / "gate").exists():
        time.sleep(0.01)
    return "done: " + job


TOOLS = [slow_job]
'''


def start_blocked(tmp_path: Path, home: Path, run_id: str) -> subprocess.Popen[str]:
    """``tether run`` whose tool call blocks in a thread; returns once the tool has started."""
    (tmp_path / "blocker.py").write_text(BLOCKER, encoding="utf-8")
    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "slow_job", "input": {"job": "report"}}}]}
    (tmp_path / "script.json").write_text(json.dumps([call, "The report is done."]), encoding="utf-8")
    args = ["run", "make the report", "--model", f"scripted:{tmp_path / 'script.json'}", "--tools", "blocker:TOOLS", "--no-demo-tools"]
    process = tether_process(*args, "--run-id", run_id, home=home, module=False, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not (tmp_path / "started").exists():  # a bound on a wait, not a synchronisation by sleeping
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.01)
    return process


@pytest.mark.parametrize("presses", [1, 25])
def test_ctrl_c_stops_at_once_and_leaves_the_run_resumable(tmp_path: Path, home: Path, presses: int) -> None:
    process = start_blocked(tmp_path, home, "r")
    try:
        for _ in range(presses):
            process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)  # the tool still blocks: exiting proves nothing waits for it
    finally:
        if process.poll() is None:  # failed: leave no process behind
            process.kill()
            process.communicate()
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    (line,) = err.splitlines()
    resume = "tether resume r --tools blocker:TOOLS --no-demo-tools"
    assert line.startswith("stopped: run r is saved; continue it with `") and "--tools" in line
    assert "tether resume r --model scripted:" in line  # `tether`, or how this process was started (see test_program)
    (summary,) = store_of(home).list_runs()
    assert summary.status == "stopped"
    (tmp_path / "gate").touch()
    spec = f"scripted:{tmp_path / 'script.json'}"
    resumed = tether_process(*resume.split()[1:], "--model", spec, home=home, module=False, cwd=tmp_path)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert "The report is done." in out
    (summary,) = store_of(home).list_runs()
    assert summary.status == "finished"


def test_main_called_from_python_leaves_the_callers_ctrl_c_handler(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGINT, mine)
    try:
        assert cli("run", "hi", "--model", script("hello")).code == 0
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_tool_is_shown_as_started_while_its_body_runs(tmp_path: Path, home: Path) -> None:
    # The events come in their true order: the console script prints "-> slow_job" while the
    # tool body is still blocked (before, tool_start arrived only after the tool had finished).
    import queue
    import threading

    process = start_blocked(tmp_path, home, "order")
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in iter(process.stdout.readline, "")], daemon=True)
    reader.start()
    try:
        seen = []
        while not any("-> slow_job" in line for line in seen):
            seen.append(lines.get(timeout=60))  # a bound on the wait: the line is printed before the body runs
        assert not (tmp_path / "gate").exists() and process.poll() is None  # the body is still blocked
    finally:
        (tmp_path / "gate").touch()
        process.wait(timeout=60)
    reader.join(timeout=60)
    assert process.returncode == 0


REENTERED = """
import asyncio, signal, sys
from tether.cli.sigint import run_cancellable


async def forever():
    handler = signal.getsignal(signal.SIGINT)
    state = {"busy": False, "nested": 0}

    def another_ctrl_c(frame, event, arg):  # a second Ctrl-C after each C call of the first (a lock taken...)
        if event == "c_return" and not state["busy"]:
            state["busy"] = True
            state["nested"] += 1
            handler(signal.SIGINT, None)
            state["busy"] = False

    sys.setprofile(another_ctrl_c)
    handler(signal.SIGINT, None)  # the first Ctrl-C
    sys.setprofile(None)
    print("nested", state["nested"] > 0, flush=True)
    await asyncio.Event().wait()


print("result", run_cancellable(forever()), flush=True)
"""


def test_a_ctrl_c_arriving_inside_the_ctrl_c_handler_does_not_deadlock(tmp_path: Path) -> None:
    """Python runs a signal handler between bytecodes, so a second Ctrl-C can run the handler
    again in the middle of the first (25 presses did, now and then): the handler must take no
    lock (a ``threading.Event`` deadlocked on its own condition). Here the handler runs again
    after every C call of its first run, such as taking a lock."""
    script = tmp_path / "reentered.py"
    script.write_text(REENTERED, encoding="utf-8")
    import sys

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["nested", "True", "result", "None"]
