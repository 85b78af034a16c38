"""Run leases tied to the owner's life: an OS file lock per run.

``fcntl.flock`` is released by the kernel when the owning process dies, so a killed worker
frees its runs at once and no lease expiry or heartbeat is needed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunLockedError


def lock_path(directory: Path, run_id: str) -> Path:
    """The lock file of ``run_id`` inside ``directory`` (a hash, so ids never form paths)."""
    return directory / f"{hashlib.sha256(run_id.encode()).hexdigest()[:32]}.lock"


@contextmanager
def file_lease(directory: Path, run_id: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on the run's lock file."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path(directory, run_id), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(
                f"run {run_id!r} is owned by another live process or invocation; wait for it to finish, then resume the run"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
