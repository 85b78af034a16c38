"""How the user runs ``tether``, so that the commands the CLI prints can be pasted as they are.

The CLI prints follow-up commands (``tether resume RUN ...``, ``tether show RUN``). They are
only useful if the shell finds them: a command installed in a virtual environment that is not
on ``PATH`` (``.venv/bin/tether``) or started as ``python -m tether`` must be printed that way.
:func:`program` gives the words that start this very command again:

- ``tether`` when ``PATH`` finds this same console script (or, under ``python -m tether``, the
  console script of this same environment);
- else the console script's absolute path (``/home/me/proj/.venv/bin/tether``);
- else, under ``python -m tether``, ``PYTHON -m tether`` with this interpreter's path;
- ``tether`` when the command was not started as a program at all (``tether.cli.main`` called
  from Python), since there is nothing better to name.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

NAME = "tether"


def program() -> list[str]:
    """The words that run this ``tether`` command again, as the user's shell can run them."""
    argv0 = sys.argv[0] if sys.argv else ""
    return how_to_run(argv0, sys.executable, os.environ.get("PATH"))


def how_to_run(argv0: str, executable: str, path: str | None) -> list[str]:
    """:func:`program` for a process started as ``argv0`` by ``executable`` with ``PATH=path``."""
    found = shutil.which(NAME, path=path)
    script = Path(argv0)
    if script.name == NAME and script.is_file():  # the console script
        return [NAME] if found is not None and _same_file(found, script) else [os.path.abspath(script)]
    if argv0 and _same_file(argv0, Path(__file__).resolve().parent.parent / "__main__.py"):  # python -m tether
        ours = Path(executable).with_name(NAME)
        if found is not None and _same_file(found, ours):
            return [NAME]
        return [os.path.abspath(executable), "-m", NAME]
    return [NAME]


def _same_file(one: str | Path, other: str | Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


__all__ = ["how_to_run", "program"]
