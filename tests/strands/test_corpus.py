"""The project's corpus of Strands programs runs on real strands-agents with the provider and prints
what it prints without it: the provider changes no behaviour.

Each program of ``tests/compat/strands_programs`` (plain ``strands`` imports, a scripted model) is
copied with one change, ``session_manager=provider()`` added to every ``Agent(...)`` (see
``programs/provider.py``), or for a graph, a swarm and agents as tools the one line where Strands'
docs put it (``ONE_LINE``), and run twice in fresh interpreters: without the provider
(``$CORPUS_PLAIN``) and with it, each agent a Tether run in a SQLite store. The outputs must be equal.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.durable import SQLiteStore

from .conftest import PROGRAMS, program_env

CORPUS = Path(__file__).resolve().parents[1] / "compat" / "strands_programs"
EXCLUDED = {
    "p16_file_session": "uses Strands' FileSessionManager (an agent has one session manager)",
    "p17_snapshot_session": "uses Strands' SnapshotSessionManager (an agent has one session manager)",
}
ONE_LINE = {
    "p18_graph": ("graph = builder.build()", "graph = builder.set_session_manager(provider()).build()"),
    "p19_swarm": ("max_handoffs=5)", "max_handoffs=5, session_manager=provider())"),
    "p20_agents_as_tools": ("orchestrator = Agent(", "orchestrator = Agent(session_manager=provider(), "),
}
"""Where the line goes when it is not every ``Agent(...)``, as Strands' docs place it: on the graph or
swarm (Strands refuses a node agent with a session manager: the graph's or swarm's manager stores
it), and on the orchestrator of agents as tools (an ``as_tool()`` sub-agent with the default
``preserve_context=False`` is reset before each call and refuses a session manager of its own; the
orchestrator's records each sub-agent call as one tool call)."""
NAMES = sorted(p.stem for p in CORPUS.glob("p[0-9][0-9]_*.py") if p.stem not in EXCLUDED)
_AGENT = re.compile(r"(?<![\w.])Agent\(")


def with_provider(source: str, name: str = "") -> str:
    """``source`` with ``session_manager=provider()`` as the first argument of every ``Agent(...)``
    (or where ``ONE_LINE`` puts it for program ``name``)."""
    if name in ONE_LINE:
        old, new = ONE_LINE[name]
        assert source.count(old) == 1, (name, old)
        return "from provider import provider\n" + source.replace(old, new)
    lines = source.splitlines(keepends=True)
    body = "".join(
        _AGENT.sub("Agent(session_manager=provider(), ", line) if '"""' not in line and not line.lstrip().startswith("#") else line
        for line in lines
    )
    return "from provider import provider\n" + body


def started_from(where: Path) -> list[str]:
    """The processes still running whose command line names a file of ``where`` (the MCP server of
    ``p21_mcp_stdio``: a program's stdio server ends when the program closes its stdin, or dies), after
    waiting for them to end (at most 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode() if proc.name.isdigit() else ""
            except OSError:  # ended meanwhile
                continue
            if f"{where}{os.sep}" in command:
                found.append(f"{proc.name}: {command}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


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
        (where / f"{name}.py").write_text(with_provider(source, name))
    assert re.search(r"session_manager[=(]provider\(\)", (durable_dir / f"{name}.py").read_text())
    store = tmp_path / "runs.db"
    expected = run(plain_dir / f"{name}.py", plain_dir, CORPUS_PLAIN="1")
    assert run(durable_dir / f"{name}.py", durable_dir, CORPUS_STORE=str(store)) == expected
    runs = SQLiteStore(store).list_runs()
    assert runs and all(run.run_id.startswith("strands.corpus-") for run in runs)
    assert not started_from(tmp_path), "a process the program started outlived it"
