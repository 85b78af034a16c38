"""The ``tether`` argument parser: subcommands, the global ``--store``, one-line usage errors.

``run`` and ``resume`` take the same agent flags (``--model``, ``--tools``, ``--no-demo-tools``,
``--root``, ``--ignore-stored-config``): the agent always comes from the command line and the
environment, never from the run store (see :mod:`tether.cli.config`). ``resume --stalled``
takes them too, once for every stalled run; ``unlock`` fences off a run's owner.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeVar

from ..durable.history import LISTED_STATUSES
from . import compensate, contract, crashtest, retry, serve

_N = TypeVar("_N", int, float)


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
  command refuses and names the flags to pass. --ignore-stored-config uses yours instead.
  Without --root, a run created in a directory inside the current one keeps that directory
  (it grants read_file less than the current one would). The run keeps its conversation,
  state and system prompt.

  e.g. tether run "Check the order" --tools app.tools:ALL --model openai:gpt-4o --run-id r1
       tether resume r1 --tools app.tools:ALL --model openai:gpt-4o
"""


STALLED = """\
stalled runs:
  A run whose process died (kill -9, a crash, a reboot) is `stalled` in `tether runs`: no live
  process owns it and it can be resumed now. `tether resume --stalled FLAGS` resumes every
  stalled run, one after another, with the same agent flags (each run's stored flags are checked
  as above: a run created with other flags is skipped and the command exits 1). A run whose
  owner is alive but stuck is `running`; fence it off first with `tether unlock RUN`.
"""

FENCING = """\
fencing:
  A run is owned by one process at a time: while it runs, the process holds the run's lease (a
  lock the operating system frees when the process dies) and the lease's epoch, a number the
  store bumps at every acquisition. Every write to the run checks that epoch.

  `tether unlock RUN` bumps the epoch and frees the lease. Whatever process owned the run (a
  stopped, hung or unreachable one) is fenced off: it is not killed, but its next write to the
  store fails ("lease lost"), nothing more of it is stored, and it stops there. The run can
  then be resumed at once from its last stored step with `tether resume RUN`. A tool call the
  old owner was running when it was fenced off may still finish its side effect; the resumed
  run treats such a call as in doubt (see `tether show RUN`).

  A run whose owner died needs no unlock (it shows as `stalled`). Unlocking a run that has a
  live owner needs --yes: that owner's work since its last write is lost.
"""

STORE_HELP = (
    "the run store: a SQLite file PATH, sqlite:///relative/path, sqlite:////absolute/path (as in SQLAlchemy) "
    "or a postgresql:// URL (default: $TETHER_HOME/runs.db, else runs.db in your user data directory)"
)

STATUSES = LISTED_STATUSES
"""The statuses ``tether runs --status`` accepts (those ``list_runs()`` reports)."""

STATUS_HELP = """\
statuses:
  running      a live process owns it
  stalled      its process died (kill -9, a crash): `tether resume RUN` or `--stalled`
  stopped      stopped by Ctrl-C (or cancelled): `tether resume RUN`
  paused       stopped at a checkpoint: `tether resume RUN`
  interrupted  waits for answers to its interrupts: `tether resume RUN --answer ID=VALUE`
  finished     its turn is done: `tether run 'Next message' --run-id RUN` adds a turn
  failed       its turn raised an error: `tether resume RUN` tries it again
  compensating unwinding its effects was cut short: `tether compensate RUN` finishes it
  compensated  its performed effects were undone (`tether compensate RUN`); it is over
  compensation_failed  undone, but a compensation raised: `tether show RUN` names it
  corrupt      its stored head cannot be read
  `tether runs` prints the exact command (flags included) for each run that waits for you.
"""

RESULT_FIELDS = ("run_id", "status", "answer", "stop_reason", "usage", "interrupts")
"""The keys of the JSON object ``run --json`` and ``resume --json`` print, in order."""

RUN_FIELDS = (
    "run_id",
    "status",
    "parent_run_id",
    "turns",
    "cycles",
    "steps",
    "total_tokens",
    "stop_reason",
    "created_at",
    "updated_at",
    "created_with",
    "continue_with",
    "problem",
)
"""The keys of each run in the JSON array ``runs --json`` prints, in order."""


def build_parser() -> Parser:
    """The ``tether`` parser with all its subcommands."""
    parser = Parser(prog="tether", description="Run and inspect durable Tether agent runs.")
    parser.add_argument("--version", action="version", version=f"tether {_version()}")
    parser.add_argument("--store", metavar="STORE", help=STORE_HELP)
    common = Parser(add_help=False)
    common.add_argument("--store", metavar="STORE", default=argparse.SUPPRESS, help=STORE_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str, epilog: str | None = None) -> Parser:
        sub: Parser = commands.add_parser(
            name, help=help, description=help, epilog=epilog, parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter
        )
        return sub

    run = command("run", "run a durable agent on a prompt, streaming the answer", epilog=CONTINUING)
    run.add_argument("prompt", help="what to ask; - reads it from standard input")
    run.add_argument("--run-id", help="the run's id (a new run, or a new turn of an existing one)")
    _agent_flags(run)
    _output_flags(run)
    run.add_argument("--system", help="the system prompt of a new run (an existing run keeps its own)")

    resume = command("resume", "finish a stopped, paused, interrupted or stalled run", epilog=CONTINUING + "\n" + STALLED)
    which = resume.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", metavar="RUN", nargs="?", help="the run to resume")
    which.add_argument("--stalled", action="store_true", help="resume every stalled run (no live owner), one after another")
    _agent_flags(resume)
    _output_flags(resume)
    resume.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="ID=JSON",
        help="answer a pending interrupt (the value is JSON, or plain text); repeatable",
    )

    runs = command("runs", "list the runs in the store", epilog=STATUS_HELP)
    runs.add_argument(
        "--json",
        action="store_true",
        help=f"print one JSON array, each run an object with {', '.join(RUN_FIELDS)} (nested runs right after their parent)",
    )
    runs.add_argument(
        "--status",
        action="extend",
        type=_statuses,
        metavar="STATUS",
        help=f"only runs with this status ({', '.join(STATUSES)}); repeatable, or a comma list",
    )
    unlock = command("unlock", "fence off a run's owner and free its lease, so the run can be resumed", epilog=FENCING)
    unlock.add_argument("run_id", metavar="RUN", help="the run whose owner is fenced off")
    unlock.add_argument("--yes", action="store_true", help="unlock even when a live process owns the run (it is fenced off)")
    show = command("show", "a run: its messages, then the timeline of cycles, model and tool calls, tokens")
    show.add_argument("run_id", metavar="RUN")
    show.add_argument("--full", action="store_true", help="print tool inputs and results in full (default: abbreviated)")
    rm = command("rm", "delete runs with the runs nested in them (agent tools, graph nodes, swarm members): every row of them")
    rm.add_argument("run_ids", metavar="RUN", nargs="+", help="the runs to delete")
    rm.add_argument("--force", action="store_true", help="delete a run even while a live process owns it")
    prune = command("prune", "delete the runs not updated for DAYS days, each with its nested runs (runs with a live owner are kept)")
    prune.add_argument("--older-than", required=True, type=_days, metavar="DAYS", help="age in days (a decimal is fine: 0.5)")
    prune.add_argument("--status", action="extend", type=_statuses, metavar="STATUS", help="only runs with this status (repeatable)")
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    fork = command("fork", "start a new run from a step of another one")
    fork.add_argument("run_id", metavar="RUN")
    fork.add_argument("--at", required=True, type=_step_number, metavar="STEP", help="the step number (see tether show)")
    fork.add_argument("--new-id", help="the new run's id (default: RUN.fork-N)")
    fork.add_argument(
        "--session",
        help="a Strands agent's run: the fork's Strands session id, opened by TetherSessionManager(SESSION) (default: SESSION-fork-N)",
    )
    export = command("export", "print the run's current state as snapshot JSON (or as an ATIF trajectory)")
    export.add_argument("run_id", metavar="RUN")
    export.add_argument(
        "--format",
        choices=("tether", "typescript", "atif"),
        default="tether",
        help="tether: snapshot JSON, resumable (default); typescript: the snapshot as Strands' TypeScript SDK loads it; "
        "atif: an Agent Trajectory Interchange Format log",
    )
    view = command("view", "write the run as one self-contained HTML page: timeline, conversation, state at every step")
    view.add_argument("run_id", metavar="RUN")
    view.add_argument("-o", "--output", metavar="FILE", help="the HTML file to write (default: RUN.html here)")
    view.add_argument("--open", action="store_true", help="open the page in the default browser")
    view.add_argument("--serve", action="store_true", help="serve it read-only on 127.0.0.1 instead, refreshing while the run is live")
    view.add_argument("--port", type=int, default=0, help="the --serve port (default: any free port)")
    size = command("size", "what a run takes in the store (by kind of row) and by field; without RUN, the largest runs")
    size.add_argument("run_id", metavar="RUN", nargs="?", help="the run (default: list the store's largest runs)")
    size.add_argument("--top", type=int, default=5, help="how many of the largest messages (or runs) to list")
    crashtest.add_parser(command)
    contract.add_parser(command)
    serve.add_parser(command)
    retry.add_parser(command)
    compensate.add_parser(command)
    return parser


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv`` and check what argparse cannot express; raises :class:`UsageError`.

    ``--answer`` answers an interrupt of one run, so it makes no sense with ``resume --stalled``.
    """
    args = build_parser().parse_args(list(argv))
    if args.command == "run" and not args.prompt.strip():
        raise UsageError("tether run: the prompt is empty; say what to ask, e.g. tether run 'What is 12 * 34?' (see tether run --help)")
    for flag in ("model", "root"):
        value = getattr(args, flag, None)
        if value is not None and not value.strip():
            raise UsageError(f"tether {args.command}: --{flag} is empty; give one or leave --{flag} out (see tether {args.command} --help)")
    if args.command == "resume" and args.stalled and args.answer:
        raise UsageError("tether resume: --answer answers one run's interrupt; it cannot go with --stalled (see tether resume --help)")
    if args.command == "resume" and args.stalled and args.json:
        raise UsageError("tether resume: --json prints one run's result; it cannot go with --stalled (see tether resume --help)")
    return args


def _version() -> str:
    """The installed distribution's version (the package's own when run from a source tree)."""
    from importlib import metadata

    try:
        return metadata.version("tether")
    except metadata.PackageNotFoundError:
        from .._version import __version__

        return __version__


def _output_flags(parser: Parser) -> None:
    """How ``run`` and ``resume`` print: streamed (default), the answer only, or one JSON object."""
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--quiet", "-q", action="store_true", help="print only the final answer (errors still go to stderr)")
    how.add_argument("--json", action="store_true", help=f"print one JSON object with {', '.join(RESULT_FIELDS)} (nothing streamed)")


def _agent_flags(parser: Parser) -> None:
    """The flags that build the agent, the same for a new run and for continuing one."""
    parser.add_argument("--model", help="model spec (default: $TETHER_MODEL, else llamacpp); see tether.cli.models")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE:ATTR", help="load your own tools (repeatable)")
    parser.add_argument("--no-demo-tools", action="store_true", help="leave out the calculator, current_time and read_file")
    parser.add_argument("--root", help="the directory read_file may read (default: the current directory)")
    parser.add_argument(
        "--max-tokens",
        type=_max_tokens,
        metavar="N",
        help="the most tokens one model reply may take (default: the model's own; llamacpp's is 256); "
        "a run cut off there goes on when resumed with a higher N",
    )
    parser.add_argument(
        "--ignore-stored-config",
        action="store_true",
        help="continue an existing run with these flags even if it was created with others",
    )


def _statuses(text: str) -> list[str]:
    """``--status`` values: one status or a comma list, each one of :data:`STATUSES`."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in found if part not in STATUSES]
    if not found or unknown:
        raise argparse.ArgumentTypeError(f"{text!r} is not a status; use {', '.join(STATUSES)} (or a comma list of them)")
    return found


def _number(text: str, kind: Callable[[str], _N], problem: str) -> _N:
    """``text`` read as a ``kind`` (``int``, ``float``); the argparse error ``problem`` when it is not one."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(problem) from None


def _max_tokens(text: str) -> int:
    value = _number(text, int, f"--max-tokens {text!r} is not a whole number of tokens")
    if value < 1:
        raise argparse.ArgumentTypeError(f"--max-tokens {value}: must be 1 or more")
    return value


def _days(text: str) -> float:
    value = _number(text, float, f"--older-than {text!r} is not a number of days")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--older-than {text!r}: days must be a finite number, 0 or more")
    return value


def _step_number(text: str) -> int:
    value = _number(text, int, f"--at {text!r} is not a step number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"--at {value} is not a step number (steps count from 1)")
    return value
