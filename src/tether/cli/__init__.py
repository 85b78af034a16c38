"""The ``tether`` command: run a durable agent, then list, inspect, resume, fork and export runs.

``main(argv)`` returns the exit code: 0 on success, 1 for an error (one line on stderr), 2 for
a bad command line, 130 when Ctrl-C stopped a run (which stays resumable). Rich is imported
only by the commands that print with it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import TetherError
from .app import UsageError, build_parser, default_store_path

EXIT_ERROR = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tether`` command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    store = Path(args.store) if args.store else default_store_path()
    handler = _handlers()[args.command]
    try:
        return handler(args, store)
    except TetherError as exc:
        return _fail(f"tether {args.command}: {exc}", EXIT_ERROR)
    except OSError as exc:
        return _fail(f"tether {args.command}: {exc}", EXIT_ERROR)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "rich":
            raise
        return _fail(
            f"tether {args.command}: the tether command prints with rich, which is not installed; pip install 'tether[cli]'", EXIT_ERROR
        )


def _fail(message: str, code: int) -> int:
    first = " ".join(message.split())  # one line, whatever the message holds
    print(f"error: {first}", file=sys.stderr)
    return code


def _handlers() -> dict[str, Callable[..., int]]:
    from . import run, runs

    return {
        "run": run.cmd_run,
        "resume": run.cmd_resume,
        "runs": runs.cmd_runs,
        "show": runs.cmd_show,
        "fork": runs.cmd_fork,
        "export": runs.cmd_export,
        "size": runs.cmd_size,
    }


__all__ = ["main"]
