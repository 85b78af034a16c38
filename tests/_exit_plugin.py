"""Make the test command's exit status reliable when Temporal clients were used.

The Temporal Python SDK's native runtime can crash the interpreter at exit (after pytest has
finished and reported), which would turn a green run into a failure exit code. This plugin
remembers pytest's exit status and, as the very last step of the session, flushes the output
and leaves with that status through ``os._exit``, skipping the crash-prone interpreter
teardown. It does so only when ``temporalio`` was imported, so other runs exit normally.

Register it from the top-level ``tests/conftest.py`` with ``pytest_plugins = ["tests._exit_plugin"]``
(or ``-p tests._exit_plugin`` on the command line).
"""

from __future__ import annotations

import os
import sys

import pytest

_status: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    _status[:] = [int(exitstatus)]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if "temporalio" not in sys.modules or not _status:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_status[0])
