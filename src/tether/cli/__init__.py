"""The ``tether`` command: run a durable agent, then list, inspect, resume, fork, export, unlock and delete runs.

``main(argv)`` returns the exit code: 0 on success, 1 for an error, 2 for a bad command line,
130 when Ctrl-C stopped a run (which stays resumable). Rich is imported only by the commands
that print with it.

No command prints a traceback: an error is one line on stderr, ``error: tether COMMAND: ...``,
naming the run or the file. Tether's own errors already say what and where; an ``OSError``, a
``sqlite3`` error or any other exception (a damaged row can make a store raise one) is reported
with its type, the run and the store path. ``TETHER_DEBUG=1`` re-raises the unexpected ones
so their traceback can go into a bug report.

The agent of ``run`` and ``resume`` comes from the command line and the environment only, never
from the run store (see :mod:`tether.cli.config`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence

from ..errors import TetherError
from .app import UsageError, parse_command_line
from .exits import DEBUG_VAR, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE
from .sigint import hard_exit
from .stores import StoreSpec, parse_store


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tether`` command line ``argv``; returns the exit code.

    Args:
        argv: The arguments after ``tether``. None means this process's own command line
            (``sys.argv[1:]``: the console script, ``python -m tether``): the command then owns
            the process, and after Ctrl-C it ends it at once (:func:`~tether.cli.sigint.hard_exit`)
            rather than wait for a model call still running in a thread, and no later Ctrl-C
            can print a traceback.
    """
    if argv is not None:  # called from Python: leave the caller's Ctrl-C handling as it was
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGINT) if in_main else None
        try:
            return _main(argv)
        finally:
            if in_main and previous is not None:
                signal.signal(signal.SIGINT, previous)
    try:
        code = _main(sys.argv[1:])
    except KeyboardInterrupt:  # a Ctrl-C between two of _main's own handlers
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = _fail("tether: interrupted", EXIT_INTERRUPTED)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command is done: from here on the process only exits
    if code == EXIT_INTERRUPTED:
        hard_exit(code)
    return code


def _main(argv: Sequence[str]) -> int:
    try:
        args = parse_command_line(argv)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    handler = _handlers()[args.command]
    prefix = f"tether {args.command}"
    store: StoreSpec | str = args.store or "the default store"
    try:
        store = parse_store(args.store)
        return handler(args, store)
    except (TetherError, OSError) as exc:  # their messages name the run or the file
        return _fail(f"{prefix}: {_message(exc)}", EXIT_ERROR)
    except KeyboardInterrupt:  # Ctrl-C outside a run (loading the model, reading the store): nothing was changed by it
        return _fail(f"{prefix}: interrupted", EXIT_INTERRUPTED)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "rich":
            return _unexpected(exc, prefix, args, store)
        return _fail(f"{prefix}: the tether command prints with rich, which is not installed; pip install 'tether[cli]'", EXIT_ERROR)
    except sqlite3.Error as exc:
        return _fail(f"{prefix}: {_where(args, store)}: SQLite failed ({type(exc).__name__}: {exc})", EXIT_ERROR)
    except Exception as exc:
        return _unexpected(exc, prefix, args, store)


def _unexpected(exc: Exception, prefix: str, args: argparse.Namespace, store: StoreSpec | str) -> int:
    """One line for an exception Tether did not raise on purpose (``TETHER_DEBUG=1``: re-raise it)."""
    if os.environ.get(DEBUG_VAR):
        raise exc
    where = _where(args, store)
    return _fail(f"{prefix}: {where}: {type(exc).__name__}: {_message(exc)} (set {DEBUG_VAR}=1 for the traceback)", EXIT_ERROR)


def _message(exc: BaseException) -> str:
    """``exc``'s message and its notes (a command adds one to say what it did about the error)."""
    return " ".join([str(exc), *(str(note) for note in getattr(exc, "__notes__", ()))])


def _where(args: argparse.Namespace, store: StoreSpec | str) -> str:
    run_id = getattr(args, "run_id", None)
    return f"store {str(store)!r}" if run_id is None else f"run {run_id!r} in {str(store)!r}"


def _fail(message: str, code: int) -> int:
    first = " ".join(message.split())  # one line, whatever the message holds
    safe = "".join(char if char.isprintable() else repr(char)[1:-1] for char in first)  # no terminal escapes from a row
    print(f"error: {safe}", file=sys.stderr)
    return code


def _handlers() -> dict[str, Callable[..., int]]:
    from . import compensate, contract, crashtest, delete, retry, run, runs, serve, unlock, view

    return {
        "run": run.cmd_run,
        "resume": run.cmd_resume,
        "runs": runs.cmd_runs,
        "show": runs.cmd_show,
        "fork": runs.cmd_fork,
        "export": runs.cmd_export,
        "size": runs.cmd_size,
        "unlock": unlock.cmd_unlock,
        "rm": delete.cmd_rm,
        "prune": delete.cmd_prune,
        "view": view.cmd_view,
        "crashtest": crashtest.cmd_crashtest,
        "contract": contract.cmd_contract,
        "serve": serve.cmd_serve,
        "retry": retry.cmd_retry,
        "compensate": compensate.cmd_compensate,
    }


__all__ = ["main"]
