"""The real command in a subprocess: ``python -m tether`` and the README's main job with SmolLM2."""

from __future__ import annotations

from pathlib import Path

from tether.durable import SQLiteStore

from ..models.conftest import require, smollm2_path
from .conftest import tether_process

MAIN_JOB = ["run", "What is 12 * 34 + 5?"]


def test_python_dash_m_tether_help(tmp_path: Path) -> None:
    process = tether_process("--help", home=tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    for command in ("run", "resume", "runs", "show", "fork", "export", "size", "unlock"):
        assert command in out


def test_console_script_reports_errors_in_one_line(tmp_path: Path) -> None:
    process = tether_process("show", "ghost", home=tmp_path, module=False)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: tether show: no run store")


def test_the_main_job_with_the_default_local_model(tmp_path: Path) -> None:
    """`tether run "What is 12 * 34 + 5?"` with TETHER_HOME set and no model flag: SmolLM2, offline."""
    require("llama_cpp", "pip install llama-cpp-python")
    smollm2_path()
    home = tmp_path / "home"
    process = tether_process(*MAIN_JOB, home=home, module=False, cwd=tmp_path)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out, err)
    (run,) = SQLiteStore(home / "runs.db").list_runs()
    assert run.status == "finished" and run.turns == 1 and run.cycles >= 1 and run.total_tokens > 0
    lines = out.splitlines()
    assert lines[0] == f"run {run.run_id}  model llamacpp:SmolLM2-135M-Instruct.Q4_1"
    assert lines[-1].startswith("end_turn, ") and lines[-1].endswith(f"run {run.run_id}")
    steps = SQLiteStore(home / "runs.db").history(run.run_id)
    assert steps[0].position == "turn_start" and steps[-1].position == "turn_end"
    assert all(s.model and s.model["total_tokens"] > 0 for s in steps if s.position == "after_model")
