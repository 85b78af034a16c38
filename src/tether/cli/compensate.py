"""``tether compensate RUN``: undo a durable run's performed effects (see :mod:`tether.durable.compensation`).

The agent is built from the same flags as ``tether resume`` (``--tools MODULE:ATTR``): the
compensations are the tools' own (``@tool(compensate=...)``), found by the names the run's calls
use. Each performed call is undone once, newest first; a compensation cut short (a crash, a
Ctrl-C) goes on where it stopped when the command runs again, and a compensated run prints its
stored report. Exits 0 when every undo succeeded, 1 when a compensation raised.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import RunNotFoundError
from .config import build_agent, user_config
from .exits import EXIT_ERROR
from .run import check_tools
from .runs import console, open_store, printable
from .stores import StoreSpec


def add_parser(command: Any) -> None:
    """Add the ``compensate`` subcommand through the app's ``command(name, help)`` helper."""
    sub = command("compensate", "undo a run's performed effects with its tools' compensations, newest first, each once")
    sub.add_argument("run_id", metavar="RUN", help="the run to compensate")
    sub.add_argument("--tools", action="append", default=[], metavar="MODULE:ATTR", help="the tools the run used (repeatable)")
    sub.add_argument("--no-demo-tools", action="store_true", help="leave out the calculator, current_time and read_file")
    sub.add_argument("--root", help="the directory read_file may read (default: the current directory)")
    sub.add_argument("--json", action="store_true", help="print the report as one JSON object")


def cmd_compensate(args: argparse.Namespace, path: StoreSpec) -> int:
    """Compensate the run with the agent the flags describe; print what was undone."""
    store = open_store(path)
    if store.head(args.run_id) is None:
        raise RunNotFoundError(f"no run {args.run_id!r} in {path}; see `tether runs`")
    config = user_config(None, args.tools, args.no_demo_tools, args.root)
    agent = build_agent(config, store, model=None, run_id=args.run_id)
    check_tools(store, args.run_id, agent)
    report = agent.compensate(args.run_id)
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        out = console()
        out.print(f"run {printable(report.run_id)}: {report.status} ({report.trigger})", markup=False)
        for undo in report.undos:
            error = f": {undo.error}" if undo.error else ""
            out.print(f"  {undo.outcome:<7} {printable(undo.tool)} ({printable(undo.tool_use_id)}){printable(error)}", markup=False)
    return EXIT_ERROR if report.failed else 0


__all__ = ["add_parser", "cmd_compensate"]
