"""The ``tether`` command's exit codes and the variable that turns on tracebacks (one place,
read by the command's entry point and by the commands that return them)."""

EXIT_ERROR = 1
"""An error (one line on stderr)."""
EXIT_USAGE = 2
"""A bad command line."""
EXIT_INTERRUPTED = 130
"""Ctrl-C stopped a run (it stays resumable)."""
DEBUG_VAR = "TETHER_DEBUG"
"""Set to re-raise unexpected errors with their traceback."""
