"""Run leases tied to the owner's life: an OS file lock per run, keyed on the database file's identity.

``fcntl.flock`` is released by the kernel when the owning process dies, so a killed worker
frees its runs at once and no lease expiry or heartbeat is needed. The lock file of a run is
named after the database file's *identity* (device and inode) and lives next to its real path,
so opening the same database through a symlink or another path still contends for the same
lock. A lock is only half of ownership: every acquisition also bumps the run's epoch inside
the database (see :class:`~tether.durable.store.Lease`), so an owner whose lock file was
removed (a stale-lock cleanup, ``tether unlock``) is fenced off at its next write.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunLockedError, StoreError

_log = logging.getLogger(__name__)

_ATTEMPTS = 8
"""Times a lock is retried when its file is replaced between open and flock (an unlock race)."""


def lock_dir_of(database: Path) -> Path:
    """The lock directory of a database file: next to its real path (symlinks resolved)."""
    return Path(f"{os.path.realpath(database)}.locks")


def lock_path(directory: Path, identity: str, run_id: str) -> Path:
    """The lock file of ``run_id`` (a hash of the database identity and the run id, so ids never form paths)."""
    digest = hashlib.sha256(f"{identity}\0{run_id}".encode()).hexdigest()[:32]
    return directory / f"{digest}.lock"


def file_identity(path: Path) -> str:
    """``device:inode`` of ``path`` (the same file however it is reached)."""
    info = os.stat(path)
    return f"{info.st_dev}:{info.st_ino}"


@contextmanager
def file_lease(path: Path, run_id: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on the lock file ``path`` of ``run_id``.

    A lock file unlinked or replaced by :func:`break_file_lease` while we opened it is not a
    lease: the lock is retried on the file now at ``path``.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for _ in range(_ATTEMPTS):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if not _flock_briefly_retried(fd):
                raise RunLockedError(
                    f"run {run_id!r} is owned by another live process or invocation; wait for it to finish, then resume the run "
                    f"(a stopped owner can be fenced off with `tether unlock {run_id}`)"
                )
            if not _same_file(fd, path):
                continue  # unlocked (unlinked) between our open and our flock: take the new file
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            return
        finally:
            os.close(fd)
    raise StoreError(f"run {run_id!r}: its lock file {path} keeps being replaced; is `tether unlock` running in a loop?")


_PROBE_RETRIES = (0.001, 0.005, 0.02)
"""Pauses before retrying a lock found taken: :func:`is_held` takes a lock for microseconds to
see whether an owner is alive, and such a probe must not make a real acquisition fail."""


def _flock_briefly_retried(fd: int) -> bool:
    """Take the exclusive lock without waiting for an owner; False when someone holds it."""
    for pause in (*_PROBE_RETRIES, None):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if pause is None:
                return False
            _log.info("a run lock is held (by another owner, or a liveness probe); trying again in %.3f s", pause)
            time.sleep(pause)
    return False


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def is_held(path: Path) -> bool:
    """True when a live process holds the lock file at ``path`` (probed without blocking)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return True
            raise
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def break_file_lease(path: Path) -> None:
    """Remove the lock file so a new owner can lock a fresh one (the old owner keeps a lock on
    an unlinked file; the epoch bump that goes with this fences its writes)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
