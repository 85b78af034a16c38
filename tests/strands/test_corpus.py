"""The project's corpus of Strands programs runs on real strands-agents with the provider and prints
what it prints without it: the provider changes no behaviour.

Each program of ``tests/compat/strands_programs`` (plain ``strands`` imports, a scripted model) is
copied with one change, ``session_manager=provider()`` added to every ``Agent(...)`` (see
``programs/provider.py``), and run twice in fresh interpreters: without the provider
(``$CORPUS_PLAIN``) and with it, each agent a Tether run in a SQLite store. The outputs must be equal.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tether.durable import SQLiteStore

from .conftest import PROGRAMS, program_env

CORPUS = Path(__file__).resolve().parents[1] / "compat" / "strands_programs"
EXCLUDED = {
    "p16_file_session": "uses Strands' FileSessionManager (an agent has one session manager)",
    "p17_snapshot_session": "uses Strands' SnapshotSessionManager (an agent has one session manager)",
    "p18_graph": "multi-agent: a graph's nodes share one agent id per session (Graph/Swarm persistence is not done)",
    "p19_swarm": "multi-agent: Graph/Swarm persistence is not done",
    "p20_agents_as_tools": "Strands itself refuses an agent tool with preserve_context=False and a session manager",
    "p21_mcp_stdio": "starts an MCP server process (covered by the compat corpus)",
}
NAMES = sorted(p.stem for p in CORPUS.glob("p[0-9][0-9]_*.py") if p.stem not in EXCLUDED)
_AGENT = re.compile(r"(?<![\w.])Agent\(")


def with_provider(source: str) -> str:
    """``source`` with ``session_manager=provider()`` as the first argument of every ``Agent(...)``."""
    lines = source.splitlines(keepends=True)
    body = "".join(
        _AGENT.sub("Agent(session_manager=provider(), ", line) if '"""' not in line and not line.lstrip().startswith("#") else line
        for line in lines
    )
    return "from provider import provider\n" + body


def run(program: Path, cwd: Path, **extra: str) -> str:
    env = program_env(STRANDS_CORPUS_TMP=str(cwd), **extra)
    env["PYTHONPATH"] = f"{cwd}:{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, str(program)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{program.name} failed:\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.parametrize("name", NAMES)
def test_the_provider_changes_no_behaviour(name: str, tmp_path: Path) -> None:
    plain_dir, durable_dir = tmp_path / "plain", tmp_path / "durable"
    for where in (plain_dir, durable_dir):
        shutil.copytree(CORPUS, where)
        shutil.copy(PROGRAMS / "provider.py", where / "provider.py")
        source = (CORPUS / f"{name}.py").read_text()
        (where / f"{name}.py").write_text(with_provider(source))
    assert "session_manager=provider()" in (durable_dir / f"{name}.py").read_text()
    store = tmp_path / "runs.db"
    expected = run(plain_dir / f"{name}.py", plain_dir, CORPUS_PLAIN="1")
    assert run(durable_dir / f"{name}.py", durable_dir, CORPUS_STORE=str(store)) == expected
    runs = SQLiteStore(store).list_runs()
    assert runs and all(run.run_id.startswith("strands.corpus-") for run in runs)
