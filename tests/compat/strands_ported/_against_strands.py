"""Run the ported tests against the real ``strands`` package (validation of the port itself).

The files in this package import ``tether.strands``. This script copies them into a temporary
directory with every ``tether.strands`` import rewritten to ``strands`` (exactly what a Strands
user undoes when switching) and runs pytest there, so the same assertions are checked against
strands-agents 1.62.0. Every ported test must pass there; a failure means the port, not Tether,
is wrong.

Usage, from the repository root::

    /work/main/.venv/bin/python -m tests.compat.strands_ported._against_strands [pytest args]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
IMPORT = re.compile(r"\btether\.strands\b")


def rewrite(source: str) -> str:
    """``source`` with its ``tether.strands`` imports pointing at the real ``strands``."""
    return IMPORT.sub("strands", source)


def main(argv: list[str]) -> int:
    """Copy, rewrite and run; the exit status is pytest's."""
    with tempfile.TemporaryDirectory(prefix="strands-ported-") as tmp:
        target = Path(tmp) / "ported_on_strands"
        target.mkdir()
        for path in sorted(HERE.glob("*.py")):
            if path.name != Path(__file__).name:
                (target / path.name).write_text(rewrite(path.read_text()))
        (Path(tmp) / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
        command = [sys.executable, "-m", "pytest", str(target), "-q", "-p", "no:cacheprovider", "--rootdir", tmp, *argv]
        return subprocess.call(command, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
