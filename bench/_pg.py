"""The benchmarks' throwaway PostgreSQL server: the test suite's ``PgServer`` (tests/durable/pg.py:
initdb + pg_ctl in a temp dir, a unix socket, no TCP port), loaded by path so a benchmark needs no
test package on its path."""

from __future__ import annotations

import importlib.util
from contextlib import ExitStack
from pathlib import Path
from typing import Any

PG_HELPER = Path(__file__).resolve().parents[1] / "tests" / "durable" / "pg.py"


def throwaway_server(stack: ExitStack, **options: Any) -> Any:
    """A started ``PgServer(**options)`` (``durable=True``: PostgreSQL's default durability),
    stopped and deleted by ``stack``; raises ``PgUnavailable`` when no server can start here."""
    spec = importlib.util.spec_from_file_location("tether_bench_pg", PG_HELPER)
    assert spec is not None and spec.loader is not None
    pg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pg)
    server = pg.PgServer(**options)
    stack.callback(server.stop)
    server.start()
    return server
