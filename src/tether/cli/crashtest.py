"""``tether crashtest MODULE:FACTORY "prompt"``: crash an agent at its save points, resume, compare.

A progress bar over the crash points (plain lines when stdout is not a terminal), then a summary
table and the failures; ``--json`` prints the :class:`~tether.testing.CrashReport` as JSON
instead. Exit 0 when every point passed, 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .runs import console, print_table
from .stores import StoreSpec

EXIT_FAILURES = 1


def add_parser(command: Any) -> None:
    """Add the ``crashtest`` subcommand through the app's ``command(name, help)`` helper."""
    sub = command("crashtest", "crash an agent at every save point (SIGKILL), resume it, and compare with a clean run")
    sub.add_argument("factory", metavar="MODULE:FACTORY", help="a zero-argument callable that builds the agent (importable from here)")
    sub.add_argument("prompt", help="the prompt of the run")
    sub.add_argument("--points", type=int, default=None, metavar="N", help="test N crash points spread over the run (default: all)")
    sub.add_argument("--races", type=int, default=2, metavar="N", help="crash points repeated with two racing resumers (default 2)")
    sub.add_argument(
        "--workdir", metavar="DIR", help="where stores, logs and run exports go (default: a temp dir, removed when every point passed)"
    )
    sub.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds each child process may take (default 60)")
    sub.add_argument("--json", action="store_true", help="print the report as JSON")


def cmd_crashtest(args: argparse.Namespace, path: StoreSpec) -> int:
    """Run the crashtest; ``--store`` is ``sqlite`` (the default: a database per point) or a PostgreSQL URL."""
    from ..testing import crashtest

    store = args.store if getattr(args, "store", None) else "sqlite"
    options: dict[str, Any] = {"store": store, "points": args.points or "all", "races": args.races, "timeout": args.timeout}
    if args.workdir:
        options["workdir"] = args.workdir
    if args.json:
        report = crashtest(args.factory, args.prompt, **options)
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
        return 0 if report.ok else EXIT_FAILURES
    out = console()
    if out.is_terminal:
        from rich.progress import Progress

        with Progress(console=out, transient=True) as bar:
            task = bar.add_task("crash points", total=None)

            def tick(done: int, total: int, label: str) -> None:
                bar.update(task, completed=done, total=total, description=f"crash points ({label})")

            report = crashtest(args.factory, args.prompt, progress=tick, **options)
    else:

        def line(done: int, total: int, label: str) -> None:
            print(f"[{done}/{total}] {label}", flush=True)

        report = crashtest(args.factory, args.prompt, progress=line, **options)
    _summary(out, report)
    return 0 if report.ok else EXIT_FAILURES


def _summary(out: Any, report: Any) -> None:
    from rich.table import Table

    table = Table(title=f"crashtest {report.factory}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in (
        ("store", report.store),
        ("save points (writes)", report.writes),
        ("crash points tested", report.points),
        ("racing resumes", report.races),
        ("failures", len(report.failures)),
        ("in-doubt re-runs", report.in_doubt_reruns),
        ("in-doubt interrupts", report.in_doubt_interrupts),
        ("reconciled", report.reconciled),
        ("seconds", f"{report.timings.get('total', 0.0):.1f}"),
    ):
        table.add_row(name, str(value))
    print_table(out, table)
    for failure in report.failures:
        out.print(
            f"FAIL {failure.point}: {failure.reason}\n  exports: {failure.exports[0]} {failure.exports[1]}", markup=False, soft_wrap=True
        )
    out.print(
        "ok: every crash point resumed to the reference outcome"
        if report.ok
        else f"{len(report.failures)} crash points failed; files kept in {report.workdir}",
        markup=False,
        soft_wrap=True,
    )
