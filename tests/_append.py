"""The side-effect log of the crash tests' worker processes.

A worker killed with SIGKILL must leave every line it wrote whole, and lines written by several
processes (a killed worker, the one that resumed its run) must not interleave: one ``write(2)``
of the whole line to a file opened with ``O_APPEND`` gives both.
"""

from __future__ import annotations

import os
from pathlib import Path


def append(path: str | Path, line: str) -> None:
    """Append ``line`` (and a newline) to ``path`` in one write."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
