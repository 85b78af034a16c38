"""Crash torture: SIGKILL a durable run at random moments, resume, and check nothing is lost
or repeated.

At least 50 kills by default; ``--kills N`` (from ``pytest tests/durable``) or ``TETHER_KILLS=N``
for long local runs.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tether.durable import MemoryStore, SQLiteStore

from .worker import build_agent, tool_ids

ROOT = Path(__file__).resolve().parents[2]


def kill_target(config: pytest.Config) -> int:
    try:
        option = config.getoption("--kills")
    except ValueError:
        option = None
    if option is not None:
        return int(option)
    return int(os.environ.get("TETHER_KILLS", "50"))


def spawn(db: Path, run_id: str, log: Path, action: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.worker", str(db), run_id, str(log), action],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def reference(tmp_path: Path) -> list[object]:
    agent = build_agent(MemoryStore(), str(tmp_path / "ref.log"))
    assert asyncio.run(agent.invoke_async("run the 20 steps", run_id="ref")).stop_reason == "end_turn"
    return agent.messages


def check_run(db: Path, run_id: str, log: Path, expected: list[object]) -> tuple[int, int]:
    """Check one finished run; returns (in-doubt calls, repeated effects)."""
    loaded = SQLiteStore(db).load(run_id)
    assert loaded is not None and loaded.head["cursor"]["phase"] == "idle"
    assert loaded.messages == expected  # equal to an uninterrupted run
    effects: Counter[str] = Counter()
    doubts: Counter[str] = Counter()
    prefix = f"{run_id}/"
    for line in log.read_text().splitlines():
        kind, key = line.split(" ", 1)
        if key.startswith(prefix):
            (effects if kind == "effect" else doubts)[key] += 1
    keys = {prefix + tid for tid in tool_ids()}
    assert set(effects) == keys  # every completed call had its effect, and no other key appears
    for key, count in effects.items():
        # a repeat only happens for a call that was in doubt, once per time it was in doubt
        assert count - 1 <= doubts[key], (key, count, doubts[key])
    return sum(doubts.values()), sum(effects.values()) - len(effects)


def test_crash_torture(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    target = kill_target(request.config)
    rng = random.Random(int(os.environ.get("TETHER_TORTURE_SEED", "0")) or None)
    db, log = tmp_path / "runs.db", tmp_path / "effects.log"
    expected = reference(tmp_path)
    kills = runs = resumes = doubts = repeats = 0
    while kills < target:
        run_id = f"torture-{runs}"
        action = "start"
        while True:
            proc = spawn(db, run_id, log, action)
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
            try:
                proc.wait(timeout=rng.uniform(0.0, 0.3))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
            _, err = proc.communicate()
            if proc.returncode == -signal.SIGKILL:
                kills += 1
                if SQLiteStore(db).head(run_id) is not None:  # killed before the prompt was stored: start again
                    action, resumes = "resume", resumes + 1
                if kills >= target:
                    final = spawn(db, run_id, log, action)
                    _, err = final.communicate(timeout=60)
                    assert final.returncode == 0, err
                    break
                continue
            assert proc.returncode == 0, err
            break
        in_doubt, repeated = check_run(db, run_id, log, expected)
        doubts, repeats = doubts + in_doubt, repeats + repeated
        runs += 1
    print(f"crash torture: {kills} SIGKILLs over {runs} runs, {resumes} resumes, {doubts} in-doubt calls, {repeats} re-run effects")
    assert kills >= target and runs >= 1
