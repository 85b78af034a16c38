"""The ``tether`` argument parser: subcommands, the global ``--store``, one-line usage errors.

``run`` and ``resume`` take the same agent flags (``--model``, ``--tools``, ``--no-demo-tools``,
``--root``, ``--ignore-stored-config``): the agent always comes from the command line and the
environment, never from the run store (see :mod:`tether.cli.config`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import NoReturn


class UsageError(Exception):
    """A bad command line (argparse's complaint, made one line)."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


CONTINUING = """\
continuing a run:
  The agent is built only from your flags and $TETHER_MODEL, never from the run store: a
  stored run cannot choose which modules are imported, which endpoint receives your API key,
  or which directory read_file may read. The run remembers how it was created (see `tether
  show RUN`); when your --model, --tools, --no-demo-tools or --root differ from that, the
  command refuses and names the flags to pass. --ignore-stored-config uses yours instead. The
  run keeps its conversation, state and system prompt.

  e.g. tether run "Check the order" --tools app.tools:ALL --model openai:gpt-4o --run-id r1
       tether resume r1 --tools app.tools:ALL --model openai:gpt-4o
"""


def default_store_path() -> Path:
    """``$TETHER_HOME/runs.db`` (``./.tether/runs.db`` when TETHER_HOME is unset), like the SDK."""
    return Path(os.environ.get("TETHER_HOME") or ".tether") / "runs.db"


def build_parser() -> Parser:
    """The ``tether`` parser with all its subcommands."""
    parser = Parser(prog="tether", description="Run and inspect durable Tether agent runs.")
    parser.add_argument("--store", metavar="PATH", help="the SQLite run store (default: $TETHER_HOME/runs.db)")
    common = Parser(add_help=False)
    common.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str, epilog: str | None = None) -> Parser:
        sub: Parser = commands.add_parser(
            name, help=help, description=help, epilog=epilog, parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter
        )
        return sub

    run = command("run", "run a durable agent on a prompt, streaming the answer", epilog=CONTINUING)
    run.add_argument("prompt", help="what to ask")
    run.add_argument("--run-id", help="the run's id (a new run, or a new turn of an existing one)")
    _agent_flags(run)
    run.add_argument("--system", help="the system prompt of a new run (an existing run keeps its own)")

    resume = command("resume", "finish an interrupted or paused run", epilog=CONTINUING)
    resume.add_argument("run_id", metavar="RUN")
    _agent_flags(resume)
    resume.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="ID=JSON",
        help="answer a pending interrupt (the value is JSON, or plain text); repeatable",
    )

    command("runs", "list the runs in the store")
    show = command("show", "the timeline of a run: cycles, model and tool calls, tokens")
    show.add_argument("run_id", metavar="RUN")
    fork = command("fork", "start a new run from a step of another one")
    fork.add_argument("run_id", metavar="RUN")
    fork.add_argument("--at", required=True, type=_step_number, metavar="STEP", help="the step number (see tether show)")
    fork.add_argument("--new-id", help="the new run's id (default: RUN.fork-N)")
    export = command("export", "print the run's current state as snapshot JSON")
    export.add_argument("run_id", metavar="RUN")
    size = command("size", "bytes of the run's state by field, and its largest messages")
    size.add_argument("run_id", metavar="RUN")
    size.add_argument("--top", type=int, default=5, help="how many of the largest messages to list")
    return parser


def _agent_flags(parser: Parser) -> None:
    """The flags that build the agent, the same for a new run and for continuing one."""
    parser.add_argument("--model", help="model spec (default: $TETHER_MODEL, else llamacpp); see tether.cli.models")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE:ATTR", help="load your own tools (repeatable)")
    parser.add_argument("--no-demo-tools", action="store_true", help="leave out the calculator, current_time and read_file")
    parser.add_argument("--root", help="the directory read_file may read (default: the current directory)")
    parser.add_argument(
        "--ignore-stored-config",
        action="store_true",
        help="continue an existing run with these flags even if it was created with others",
    )


def _step_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--at {text!r} is not a step number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--at {value} is not a step number (steps count from 1)")
    return value
