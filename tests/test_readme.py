"""The README's Quickstart commands are the real ones: the main job runs, CI runs the test command."""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quickstart_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_quickstart_has_two_commands_and_ci_runs_the_test_one() -> None:
    commands = quickstart_commands()
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci, "the README's test command must be what .ci/run executes"


def test_the_readme_main_job_command_runs_and_stores_a_finished_run(tmp_path: Path) -> None:
    main_job = quickstart_commands()[0]
    env = {**os.environ, "TETHER_HOME": str(tmp_path)}
    proc = subprocess.run(shlex.split(main_job), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "run run-" in proc.stdout
    with sqlite3.connect(tmp_path / "runs.db") as db:
        heads = [row[0] for row in db.execute("SELECT head FROM runs")]
    assert len(heads) == 1
    assert '"status":"finished"' in heads[0].replace(" ", "")


def readme_section(title: str) -> str:
    return (ROOT / "README.md").read_text().split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_layout_names_every_package() -> None:
    """Each package under src/tether appears in the Layout section as ``name/``."""
    layout = readme_section("Layout")
    packages = sorted(path.parent.name for path in (ROOT / "src" / "tether").glob("*/__init__.py"))
    assert packages
    missing = [name for name in packages if f"{name}/" not in layout]
    assert missing == []


def test_the_extras_line_names_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    text = " ".join((ROOT / "README.md").read_text().split())
    line = text.split("Extras: ", 1)[1].split(". ", 1)[0]
    assert [name for name in extras if f"`{name}`" not in line] == []
