"""``tether contract MODULE:FACTORY "prompt"``: check the resume contract's six properties on an agent.

Prints one line per property (holds, violated with the smallest counterexample, or not
applicable with why); ``--json`` prints the :class:`~tether.testing.ContractReport` instead.
Exit 0 when no property is violated, 1 when one is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import TetherError
from .stores import StoreSpec

EXIT_VIOLATED = 1


def add_parser(command: Any) -> None:
    """Add the ``contract`` subcommand through the app's ``command(name, help)`` helper."""
    sub = command("contract", "check the resume contract (six properties, each with its fault) on an agent")
    sub.add_argument("factory", metavar="MODULE:FACTORY", help="a zero-argument callable that builds the agent (importable from here)")
    sub.add_argument("prompt", help="the prompt of the run")
    sub.add_argument("--answers", metavar="JSON", help='responses to the run\'s interrupts by name, e.g. \'{"approve": "yes"}\'')
    sub.add_argument("--properties", metavar="LIST", help="comma-separated properties to check (default: all six)")
    sub.add_argument("-k", type=int, default=8, metavar="N", help="processes answering one interrupt at once (default 8)")
    sub.add_argument("--points", type=int, default=None, metavar="N", help="crash points spread over the run (default: all)")
    sub.add_argument("--forks", type=int, default=None, metavar="N", help="steps forked twice (default: all)")
    sub.add_argument("--recoveries", type=int, default=3, metavar="N", help="crashed stores recovered from two copies (default 3)")
    sub.add_argument("--workdir", metavar="DIR", help="where stores, logs and exports go (default: a temp dir, removed when all hold)")
    sub.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds each child process may take (default 60)")
    sub.add_argument(
        "--runtime",
        choices=("local", "serve", "temporal"),
        default="local",
        help="where the runs run: local child processes (default), two `tether serve` processes driven over HTTP, or Temporal",
    )
    sub.add_argument("--temporal", metavar="HOST:PORT", help="the Temporal server (with --runtime temporal)")
    sub.add_argument("--json", action="store_true", help="print the report as JSON")


def cmd_contract(args: argparse.Namespace, path: StoreSpec) -> int:
    """Run the contract; ``--store`` is ``sqlite`` (the default: files in the workdir) or a PostgreSQL URL."""
    from ..testing import resume_contract

    options: dict[str, Any] = {
        "store": args.store if getattr(args, "store", None) else "sqlite",
        "k": args.k,
        "points": args.points or "all",
        "forks": args.forks or "all",
        "recoveries": args.recoveries,
        "timeout": args.timeout,
        "runtime": args.runtime,
        "temporal": args.temporal,
    }
    if args.answers:
        try:
            answers = json.loads(args.answers)
        except ValueError as exc:
            raise TetherError(f"--answers is not JSON: {exc}") from None
        if not isinstance(answers, dict):
            raise TetherError("--answers must be a JSON object: interrupt name -> response")
        options["answers"] = answers
    if args.properties:
        options["properties"] = [name.strip() for name in args.properties.split(",") if name.strip()]
    if args.workdir:
        options["workdir"] = args.workdir
    report = resume_contract(args.factory, args.prompt, **options)
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
    else:
        print(report.summary())
        for result in report.results:
            if result.files and result.verdict == "violated":
                print(f"{result.name}: see {', '.join(result.files)}")
    return 0 if report.ok else EXIT_VIOLATED
