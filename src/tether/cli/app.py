"""The ``tether`` argument parser: subcommands, the global ``--store``, one-line usage errors."""

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


def default_store_path() -> Path:
    """``$TETHER_HOME/runs.db`` (``./.tether/runs.db`` when TETHER_HOME is unset), like the SDK."""
    return Path(os.environ.get("TETHER_HOME") or ".tether") / "runs.db"


def build_parser() -> Parser:
    parser = Parser(prog="tether", description="Run and inspect durable Tether agent runs.")
    parser.add_argument("--store", metavar="PATH", help="the SQLite run store (default: $TETHER_HOME/runs.db)")
    common = Parser(add_help=False)
    common.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str) -> Parser:
        sub: Parser = commands.add_parser(name, help=help, description=help, parents=[common])
        return sub

    run = command("run", "run a durable agent on a prompt, streaming the answer")
    run.add_argument("prompt", help="what to ask")
    run.add_argument("--run-id", help="the run's id (a new run, or a new turn of an existing one)")
    run.add_argument("--model", help="model spec (default: $TETHER_MODEL, else llamacpp); see tether.cli.models")
    run.add_argument("--tools", action="append", default=[], metavar="MODULE:ATTR", help="load your own tools (repeatable)")
    run.add_argument("--no-demo-tools", action="store_true", help="leave out the calculator, current_time and read_file")
    run.add_argument("--root", help="the directory read_file may read (default: the current directory)")
    run.add_argument("--system", help="the system prompt")

    resume = command("resume", "finish an interrupted or paused run")
    resume.add_argument("run_id", metavar="RUN")
    resume.add_argument("--model", help="override the run's stored model spec")
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


def _step_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--at {text!r} is not a step number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--at {value} is not a step number (steps count from 1)")
    return value
