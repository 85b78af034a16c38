"""What a PostgreSQL failure means for the writer, in one place.

A driver error (``psycopg.Error``) never leaves the store as it is: it becomes a
:class:`~tether.errors.StoreError` (the server refused a statement or could not be reached:
nothing of that statement committed), or, when a write's lease connection broke under it, a
:class:`~tether.errors.LeaseLostError` (the lease's session ended: the writer no longer owns the
run, and whether the write committed is unknown). Every message names the run and the server
(never the password).
"""

from __future__ import annotations

from typing import Any

from ...errors import ConfigurationError, LeaseLostError, StoreError


def import_psycopg() -> Any:
    """The psycopg module (psycopg 3), or a ConfigurationError saying how to install it."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigurationError(
            "PostgresStore needs the 'psycopg' package (psycopg 3), which is not installed; install it with pip install 'tether[postgres]'"
        ) from exc
    return psycopg


def why(exc: BaseException) -> str:
    """A driver error in a message: its class and the server's words."""
    return f"{type(exc).__name__}: {str(exc).strip()}"


def failed(where: str, run_id: str | None, exc: BaseException) -> StoreError:
    """A statement about ``run_id`` (None: listing runs) that ``where`` refused or could not run."""
    what = f"run {run_id!r}" if run_id is not None else "listing runs"
    return StoreError(f"{what}: {where} failed ({why(exc)})")


def lost(where: str, run_id: str, reason: str, *, sent: bool) -> LeaseLostError:
    """The lease session of ``run_id`` ended (``reason``): before its write was sent (nothing
    written) or while it was out (``sent``: stored only if it committed first)."""
    outcome = "its write was not confirmed (it is stored only if it committed before the session ended)" if sent else "nothing was written"
    return LeaseLostError(
        f"run {run_id!r}: this writer's lease session on {where} was terminated ({reason}), so it no longer "
        f"owns the run and {outcome}; stop, and resume the run (the next owner reads what is stored)"
    )


def write_failed(where: str, run_id: str, conn: Any, exc: BaseException) -> StoreError:
    """The error of a write whose statement failed on a lease's connection ``conn``: the lease
    is lost when the connection broke (whether the write committed is unknown), else the server
    refused the statement (StoreError: nothing committed)."""
    if conn.broken or conn.closed:
        return lost(where, run_id, why(exc), sent=True)
    return failed(where, run_id, exc)
