"""Run leases tied to the owner's life: an OS file lock per run, keyed on the database file's identity.

The lock is an open-file-description lock (``F_OFD_SETLK``) on Linux, ``fcntl.flock`` on other
POSIX systems (macOS) and ``msvcrt.locking`` on Windows; all are held per open file and released
by the operating system when the owning process dies, so a killed worker frees its runs at once
and no lease expiry or heartbeat is needed. On Linux a liveness probe (:func:`is_held`, what
``tether runs`` asks of every running run) *queries* the lock (``F_OFD_GETLK``) without taking
it, so a probe can never make a real acquisition fail; elsewhere a probe takes the lock for
microseconds and an acquisition that finds it taken retries briefly. (A library such
as ``filelock`` owns its descriptor and the lock file's life, so it cannot re-check, after
locking, that the file is still the one at the path; that check is what makes
:func:`break_file_lease` safe.) The lock file of a run is
named after the database file's *identity* (device and inode) and lives next to its real path,
so opening the same database through a symlink or another path still contends for the same
lock. A lock is only half of ownership: every acquisition also bumps the run's epoch inside
the database (see :class:`~tether.durable.store.Lease`), so an owner whose lock file was
removed (a stale-lock cleanup, ``tether unlock``) is fenced off at its next write.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunLockedError, StoreError

_log = logging.getLogger(__name__)

if sys.platform == "win32":
    import msvcrt

    _BUSY = (errno.EACCES, errno.EDEADLOCK, errno.EAGAIN)

    def _lock_nowait(fd: int) -> None:
        """Lock the first byte of the file without waiting (an OSError in ``_BUSY``: another handle holds it)."""
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    def _query_held(fd: int) -> bool | None:
        """Windows cannot ask whether a byte is locked without locking it."""
        return None

else:
    import fcntl
    import struct

    _OFD = hasattr(fcntl, "F_OFD_SETLK")
    """Open-file-description locks (Linux 3.15+): per open file like flock, and queryable."""

    def _lock_request(kind: int) -> bytes:
        """A ``struct flock`` for the file's first byte (``l_pid`` must be 0 for OFD locks)."""
        return struct.pack("hhqqi", kind, os.SEEK_SET, 0, 1, 0)

    _BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)

    def _lock_nowait(fd: int) -> None:
        """Take the exclusive lock without waiting (an OSError in ``_BUSY``: another open file holds it)."""
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _lock_request(fcntl.F_WRLCK))
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _lock_request(fcntl.F_UNLCK))
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _query_held(fd: int) -> bool | None:
        """Whether another open file holds the lock, asked without taking it (None: cannot ask)."""
        if not _OFD:
            return None
        answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _lock_request(fcntl.F_WRLCK))
        kind: int = struct.unpack("hhqqi", answer)[0]
        return kind != fcntl.F_UNLCK


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock without waiting; False when another open file (handle) holds it."""
    try:
        _lock_nowait(fd)
    except OSError as exc:
        if exc.errno in _BUSY:
            return False
        raise
    return True


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
                _unlock(fd)
            return
        finally:
            os.close(fd)
    raise StoreError(f"run {run_id!r}: its lock file {path} keeps being replaced; is `tether unlock` running in a loop?")


_PROBE_RETRIES = (0.001, 0.005, 0.02)
"""Pauses before retrying a lock found taken, where :func:`is_held` must take the lock for
microseconds to see whether an owner is alive (not Linux, where it only asks): such a probe
should not make a real acquisition fail."""


def _flock_briefly_retried(fd: int) -> bool:
    """Take the exclusive lock without waiting for an owner; False when someone holds it."""
    for pause in (*_PROBE_RETRIES, None):
        if _try_lock(fd):
            return True
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
        held = _query_held(fd)
        if held is not None:
            return held
        if not _try_lock(fd):
            return True
        _unlock(fd)
        return False
    finally:
        os.close(fd)


def break_file_lease(path: Path) -> None:
    """Remove the lock file so a new owner can lock a fresh one (the old owner keeps a lock on
    an unlinked file; the epoch bump that goes with this fences its writes).

    Windows does not unlink a file another process holds open: there the old owner keeps the
    lock until it exits, fenced off all the same by the epoch bump (its next write fails).
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except PermissionError:
        if sys.platform != "win32":
            raise
