"""Inspection commands: ``runs``, ``show``, ``fork``, ``export`` and ``size``.

They read rows and print them; nothing read from a row is run, imported or used as a path.
``runs`` shows each run's liveness (``running`` has a live owner, ``stalled`` has none and can be
resumed now) and the command that continues each run that waits for the user: ``stalled``,
``stopped`` (Ctrl-C) and ``paused`` runs with ``tether resume RUN``, ``interrupted`` runs (waiting
for answers to their interrupts) with ``tether resume RUN --answer ID=VALUE``. ``runs --json``
prints the same as one JSON array (see :data:`tether.cli.app.RUN_FIELDS`).
``show`` displays the hint a run keeps of the flags it was created with (what ``tether resume``
needs), escaped for the terminal since a row may hold anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from ..durable.fork import fork_run
from ..durable.history import RunSummary, Step, summary_of
from ..durable.store import STORED_TABLES, RunStore, with_liveness
from ..errors import ConfigurationError, RunNotFoundError, TetherError
from ..interrupts import pending_interrupts
from ..multiagent.executions import record_of
from ..snapshot import Snapshot
from ..types import InterruptState
from .config import CONFIG_KEY, IGNORE_FLAG, RunConfig, shown
from .program import program
from .stores import StoreSpec
from .strands_runs import continue_strands, fork_strands_session, strands_session
from .transcript import message_lines

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr); plain text when it is not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if os.environ.get("COLUMNS") or stream.isatty() else 120  # pipes: see print_table for tables
    return Console(stderr=stderr, highlight=False, width=width)


def print_table(out: Console, table: Table) -> None:
    """Print ``table`` to fit: a terminal's width (or ``$COLUMNS``), else as wide as the table needs.

    On a terminal rich shrinks the wrappable columns to the width; in a pipe or a file there is
    no width to fit, so nothing is cut or wrapped at all (``tether runs | grep`` sees whole rows).
    """
    if out.is_terminal or os.environ.get("COLUMNS"):
        out.print(table)
        return
    from rich.measure import Measurement

    needed = Measurement.get(out, out.options.update(width=100_000), table).maximum
    width = out.width
    out.width = max(width, needed)
    try:
        out.print(table)
    finally:
        out.width = width


def open_store(path: StoreSpec, *, create: bool = False) -> RunStore:
    """The store ``path`` names; read-only commands refuse a SQLite file that does not exist."""
    return path.open(create=create)


def snapshot_of(store: RunStore, run_id: str, where: StoreSpec | str = "the store") -> Snapshot:
    """The run's current state as a snapshot (loadable with ``Snapshot.from_dict``)."""
    stored = store.load(run_id)
    if stored is None:
        raise RunNotFoundError(f"no run {run_id!r} in {where}; see `tether runs`")
    head = stored.head
    data = {
        "messages": stored.messages,
        "state": head.get("state") or {},
        "conversation_manager_state": head.get("conversation_manager_state") or {},
        "interrupt_state": head.get("interrupt_state") or {},
        "system_prompt": head.get("system_prompt"),
        "model_state": head.get("model_state") or {},
    }
    return Snapshot(data, app_data={"run_id": run_id, "status": summary_of(run_id, head).status})


def cmd_runs(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether runs [--status S] [--json]``: the runs, newest first, each status in its own style.

    A footer names what an operator can do: the command that continues each stopped, paused or
    interrupted run, how to resume the stalled runs (no live owner), and why a corrupt run
    cannot be read. ``--json`` prints one JSON array instead (see :func:`run_json`).
    """
    out = console()
    if not path.exists():
        if getattr(args, "json", False):
            sys.stdout.write("[]\n")
            return 0
        out.print(f"no runs yet ({path} does not exist)")
        return 0
    from rich.markup import escape
    from rich.table import Table

    store = open_store(path)
    every = sorted(store.list_runs(), key=lambda run: (run.updated_at or "", run.run_id), reverse=True)
    wanted = set(args.status or ())
    runs = [run for run in every if not wanted or run.status in wanted]
    if getattr(args, "json", False):
        listed = [run_json(store, run, path) for run, _ in as_tree(runs)]
        sys.stdout.write(json.dumps(listed, ensure_ascii=False, indent=2) + "\n")
        return 0
    if wanted and not runs:
        out.print(f"no {' or '.join(sorted(wanted))} runs in {path} ({len(every)} in all)", markup=False, soft_wrap=True)
    else:
        out.print(f"runs in {path}", markup=False, soft_wrap=True)  # a long path is not wrapped into the table's width
        table = Table()
        table.add_column("id", overflow="fold")  # a narrow terminal folds long ids (never cuts them); the other columns stay whole
        for name in ("status", "turns", "cycles", "tokens", "updated"):
            table.add_column(name, no_wrap=True, justify="left" if name in ("status", "updated") else "right")
        for run, depth in as_tree(runs):
            table.add_row(
                ("  " * (depth - 1) + "└ " if depth else "") + escape(printable(run.run_id)),
                _status(run.status),
                str(run.turns),
                str(run.cycles),
                str(run.total_tokens),
                _when(run.updated_at),
            )
        print_table(out, table)
    for run in runs:
        problem = getattr(run, "problem", None)
        if problem:
            out.print(
                f"{printable(run.status)} run {printable(run.run_id)}: {printable(str(problem))}",
                style=_STYLES["corrupt"],
                markup=False,
                soft_wrap=True,
            )
    for run in runs:
        if run.status in _WAITING_FOR_USER and run.parent_run_id is None:
            head = _head_or_none(store, run)
            command = continue_command(run, head, path)
            if command is not None:
                out.print(f"{_waits_for(run, head)} `{command}`", style=_STYLES[run.status], markup=False, soft_wrap=True)
    stalled = [run.run_id for run in every if run.status == "stalled"]
    if stalled:
        out.print(stalled_hint(store, stalled, path), style=_STYLES["stalled"], markup=False, soft_wrap=True)
    return 0


_WAITING_FOR_USER = ("stopped", "paused", "interrupted")
"""The statuses ``tether runs`` gives a continue command in its footer (stalled runs have theirs)."""


def run_json(store: RunStore, run: RunSummary, where: StoreSpec | None = None) -> dict[str, Any]:
    """One run of ``tether runs --json``: the fields of :data:`~tether.cli.app.RUN_FIELDS`.

    ``created_with`` is the flags of the run's stored hint (None for a run not made by ``tether
    run``); ``continue_with`` the command that continues it now (None for a finished, failed,
    running or corrupt run, and for a nested run, which is continued through its parent).
    """
    head = _head_or_none(store, run)
    hint = hint_of(run.run_id, head) if head is not None else None
    return {
        "run_id": run.run_id,
        "status": run.status,
        "parent_run_id": run.parent_run_id,
        "turns": run.turns,
        "cycles": run.cycles,
        "steps": run.steps,
        "total_tokens": run.total_tokens,
        "stop_reason": run.stop_reason,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "created_with": None if hint is None else hint.flags(),
        "continue_with": continue_command(run, head, where),
        "problem": run.problem,
    }


def continue_command(run: RunSummary, head: dict[str, Any] | None, where: StoreSpec | None = None) -> str | None:
    """The command that continues ``run`` now, by its status; None when there is none to give.

    ``stopped`` (Ctrl-C), ``paused`` and ``stalled`` runs go on with ``tether resume RUN FLAGS``;
    an ``interrupted`` run waits for answers, ``tether resume RUN --answer ID=VALUE FLAGS`` with
    the id of each pending interrupt its head holds (a run whose interrupts are its children's,
    a graph's, gets the plain resume, which lists them). Finished, failed, running and corrupt
    runs have none, nor a nested run (its parent continues it). The flags are the run's stored
    hint, shown only.
    """
    if head is None or run.parent_run_id is not None or run.status not in (*_WAITING_FOR_USER, "stalled"):
        return None
    if strands_session(head) is not None:  # its Strands program continues it, no tether command
        return None
    answers = [word for item in _pending(head) for word in ("--answer", f"{item.id}=VALUE")] if run.status == "interrupted" else []
    return shown([*program(), "resume", run.run_id, *answers, *_continue_flags(run.run_id, head, where)])


def _pending(head: dict[str, Any]) -> list[Any]:
    """The pending interrupts a head holds; none for a head whose interrupt state cannot be read."""
    try:
        return pending_interrupts(cast("InterruptState", head.get("interrupt_state") or {}))  # a stored head: JSON as written
    except (TetherError, KeyError, TypeError, ValueError, AttributeError):
        return []


def _waits_for(run: RunSummary, head: dict[str, Any] | None) -> str:
    """The words before a run's continue command (``tether runs``, ``tether show``), by its status."""
    name = printable(run.run_id)
    if run.status == "stalled":
        return f"stalled run {name} (its process died): resume it with"
    if run.status == "stopped":
        return f"stopped run {name} (Ctrl-C or cancelled): continue it with"
    if run.status == "paused":
        return f"paused run {name} (at a checkpoint): continue it with"
    asked = ", ".join(printable(item.name) for item in _pending(head or {}))
    if not asked:  # its interrupts are its children's (a graph), or an older Tether stored a Ctrl-C this way
        return f"interrupted run {name}: continue it with"
    return f"interrupted run {name} waits for answers ({asked}): answer with"


def _head_or_none(store: RunStore, run: RunSummary) -> dict[str, Any] | None:
    """The run's head for display; None for a corrupt run or one deleted since it was listed."""
    if run.problem is not None:
        return None
    try:
        return store.head(run.run_id)
    except TetherError:
        return None


def as_tree(runs: list[RunSummary]) -> list[tuple[RunSummary, int]]:
    """``runs`` in their order, each nested run right under its parent, with its depth (0: a
    run whose parent is not listed). A parent cycle (a damaged store) cannot loop: every run
    is listed once."""
    listed = {run.run_id for run in runs}
    children: dict[str, list[RunSummary]] = {}
    for run in runs:
        parent = getattr(run, "parent_run_id", None)  # a summary of another store may lack it
        if parent is not None and parent in listed and parent != run.run_id:
            children.setdefault(parent, []).append(run)
    nested = {run.run_id for kids in children.values() for run in kids}
    out: list[tuple[RunSummary, int]] = []
    seen: set[str] = set()

    def visit(run: RunSummary, depth: int) -> None:
        if run.run_id in seen:
            return
        seen.add(run.run_id)
        out.append((run, depth))
        for child in children.get(run.run_id, ()):
            visit(child, depth + 1)

    for run in runs:
        if run.run_id not in nested:
            visit(run, 0)
    for run in runs:  # only runs in a parent cycle are left
        visit(run, 0)
    return out


def stalled_hint(store: RunStore, stalled: list[str], where: StoreSpec | None = None) -> str:
    """The footer of ``tether runs`` when runs are stalled: the ``resume --stalled`` command to run.

    The flags are those the stalled runs were created with (their stored hints, shown only);
    when they differ, resuming with one set of flags skips the others.
    """
    many = len(stalled) != 1
    what = f"{len(stalled)} stalled run{'s' if many else ''} (no live owner): resume {'them' if many else 'it'} with"
    flags = {tuple(hint.flags()) for hint in (hint_of(run_id, store.head(run_id)) for run_id in stalled) if hint is not None}
    command = shown([*program(), "resume", "--stalled", *(where.flags() if where is not None else [])])
    if len(flags) == 1:
        return f"{what} `{command} {shown(flags.pop())}`"
    if not flags:
        return f"{what} `{command}` and your agent flags (--model, --tools, ...)"
    return (
        f"{what} `{command}` and the flags they were created with; they differ (see `tether show RUN`), "
        "and a run created with other flags than yours is skipped"
    )


def cmd_show(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether show RUN [--full]``: the run's summary, its messages (tool calls abbreviated), then its timeline."""
    from rich.markup import escape
    from rich.table import Table

    store = open_store(path)
    head = store.head(args.run_id)
    if head is None:
        raise RunNotFoundError(f"no run {args.run_id!r} in {path}; see `tether runs`")
    (run,) = with_liveness([summary_of(args.run_id, head)], store.owner_alive)  # running, or stalled: no live owner
    steps = store.history(args.run_id)  # read everything before printing anything
    stored = store.load(args.run_id)
    graph = record_of(args.run_id, head, stored.messages if stored is not None else [])
    messages = [] if graph is not None else message_lines(stored.messages if stored is not None else [], full=args.full)
    table = Table(title="timeline")
    for name in ("step", "cycle", "position"):
        table.add_column(name, no_wrap=True)
    table.add_column("details", overflow="fold", ratio=1)
    table.add_column("msgs", no_wrap=True, justify="right")
    table.add_column("time", no_wrap=True)
    for step in steps:
        table.add_row(
            str(step.step),
            str(step.cycle_index),
            escape(step.position),
            _details(step),
            str(step.message_count),
            _when(step.created_at, clock=True),
        )
    hint = created_with(args.run_id, head)
    out = console()
    out.print(
        f"[bold]{run.run_id}[/]  {_status(run.status)}  turns {run.turns}  cycles {run.cycles}  tokens {run.total_tokens}"
        f"  created {_when(run.created_at)}  updated {_when(run.updated_at)}",
        soft_wrap=True,
    )
    out.print(f"created with: {hint}", markup=False, soft_wrap=True)
    command = continue_command(run, head, path)
    if command is not None:
        out.print(f"{_waits_for(run, head)} `{command}`", markup=False, soft_wrap=True)
    if run.status == "compensating" and not store.owner_alive(args.run_id):
        command = shown([*program(), "compensate", run.run_id, *path.flags()])
        out.print(f"its unwinding was cut short; finish it (with the run's --tools) with `{command}`", markup=False, soft_wrap=True)
    if run.parent_run_id is not None:
        command = shown([*program(), "show", run.parent_run_id, *path.flags()])
        out.print(f"nested in: {printable(run.parent_run_id)} (`{command}`)", markup=False, soft_wrap=True)
    children = sorted((r for r in store.list_runs() if r.parent_run_id == args.run_id), key=lambda r: (r.created_at or "", r.run_id))
    if children:
        out.print(f"child runs ({len(children)}):", style="bold")
        for child in children:
            command = shown([*program(), "show", child.run_id, *path.flags()])
            out.print(f"  {printable(child.run_id)}  {child.status}  `{command}`", markup=False, soft_wrap=True)
    if graph is not None:
        _print_executions(out, graph, path)
    else:
        out.print(f"messages ({len(stored.messages) if stored is not None else 0}):", style="bold")
    for line in messages:
        out.print(line, markup=False, soft_wrap=True, highlight=False)
    print_table(out, table)
    return 0


def _print_executions(out: Any, graph: dict[str, Any], path: StoreSpec) -> None:
    """A graph or swarm run's node executions, in the order they started, each with its nested run."""
    out.print(f"{graph['kind']} node executions ({len(graph['log'])}):", style="bold")
    for entry in graph["log"]:
        place = f"#{entry['done']} " if entry["done"] is not None else ""
        child = entry["run_id"]
        command = f"  `{printable(shown([*program(), 'show', child, *path.flags()]))}`" if child else ""
        tokens = f"  {entry['total_tokens']} tokens" if entry["total_tokens"] is not None else ""
        line = f"  {place}{printable(entry['node'])} execution {entry['n']}  {printable(entry['status'])}{tokens}{command}"
        out.print(line, markup=False, soft_wrap=True, highlight=False)


def cmd_fork(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether fork RUN --at STEP``: a new run from that step, and the exact command that continues it."""
    from rich.markup import escape

    store = open_store(path)
    head = store.head(args.run_id)
    if strands_session(head) is not None:
        return fork_strands_session(args, store, cast("dict[str, Any]", head)["strands"], console())
    if args.session is not None:
        raise ConfigurationError(f"--session forks a Strands agent's session; {args.run_id!r} is not one (see tether fork --help)")
    new_id = fork_run(store, args.run_id, args.at, new_run_id=args.new_id)
    out = console()
    out.print(f"forked {escape(printable(args.run_id))} at step {args.at} -> [bold]{escape(printable(new_id))}[/]")
    out.print(f"continue it with: {resume_command(new_id, store.head(new_id), path, next_turn=True)}", markup=False, soft_wrap=True)
    return 0


def created_with(run_id: str, head: dict[str, Any]) -> str:
    """How the run was created, as the flags to pass to continue it (from its stored hint; shown only)."""
    try:
        hint = RunConfig.from_state(head.get("state"), run_id)
    except ConfigurationError:
        return f"unreadable {CONFIG_KEY!r} hint (the row is damaged or was edited); continue it with {IGNORE_FLAG} and your flags"
    if hint is None:
        return "no stored flags (not made by `tether run`); continue it with the flags you want"
    return shown(hint.flags())


def hint_of(run_id: str, head: dict[str, Any] | None) -> RunConfig | None:
    """The run's stored hint, for display; None when it has none or it is malformed."""
    try:
        return RunConfig.from_state(None if head is None else head.get("state"), run_id)
    except ConfigurationError:
        return None


def resume_command(run_id: str, head: dict[str, Any] | None, where: StoreSpec | None = None, *, next_turn: bool = False) -> str:
    """``tether resume RUN [--store STORE] FLAGS``: the command that continues the run, with the flags of its hint.

    With ``next_turn``, a run whose turn is over (finished, failed) has nothing to resume: its
    command is a new turn, ``tether run 'Your next message' --run-id RUN FLAGS``.
    """
    session = strands_session(head)
    if session is not None:
        return continue_strands(session)
    flags = _continue_flags(run_id, head, where)
    status = summary_of(run_id, head).status if head is not None else None
    if next_turn and status in ("finished", "failed"):
        return shown([*program(), "run", "Your next message", "--run-id", run_id, *flags])
    return shown([*program(), "resume", run_id, *flags])


def _continue_flags(run_id: str, head: dict[str, Any] | None, where: StoreSpec | None) -> list[str]:
    """``--store STORE`` (when the user gave one) and the flags of the run's stored hint."""
    hint = hint_of(run_id, head)
    return [*(where.flags() if where is not None else []), *([] if hint is None else hint.flags())]


def printable(text: str) -> str:
    """``text`` on one line with control characters escaped (it may come from a row)."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in " ".join(text.split()))


def cmd_export(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether export RUN [--format tether|typescript|atif]``: the run as snapshot JSON (resumable; ``typescript``:
    the document Strands' TypeScript SDK loads) or as an ATIF trajectory."""
    store = open_store(path)
    if getattr(args, "format", "tether") == "typescript":
        sys.stdout.write(json.dumps(snapshot_of(store, args.run_id, path).to_typescript(), ensure_ascii=False) + "\n")
        return 0
    if getattr(args, "format", "tether") == "atif":
        from ..inspect import to_atif

        if store.head(args.run_id) is None:
            raise RunNotFoundError(f"no run {args.run_id!r} in {path}; see `tether runs`")
        sys.stdout.write(json.dumps(to_atif(store, args.run_id), ensure_ascii=False, indent=2) + "\n")
        return 0
    sys.stdout.write(snapshot_of(store, args.run_id, path).to_json() + "\n")
    return 0


def cmd_size(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether size RUN``: the run's rows in the store by kind, its state by field and its
    largest messages; ``tether size``: the store's largest runs."""
    from rich.markup import escape
    from rich.table import Table

    store = open_store(path)
    out = console()
    if args.run_id is None:
        runs = store.run_sizes()
        table = Table("run", "bytes", *STORED_TABLES, title=f"largest runs in {escape(str(path))} ({len(runs)} runs)")
        for run in runs[: args.top]:
            table.add_row(escape(run.run_id), str(run.total), *(_rows_and_bytes(run.tables[name]) for name in STORED_TABLES))
        print_table(out, table)
        return 0
    stored = store.size(args.run_id)
    report = snapshot_of(store, args.run_id, path).size_report(top=args.top)
    rows = Table("rows", "count", "bytes", title="as stored")
    for name in STORED_TABLES:
        count, size = stored.tables[name]
        rows.add_row(name, str(count), str(size))
    out.print(f"[bold]{escape(args.run_id)}[/]: {report['total_bytes']} bytes, {report['message_count']} messages (as JSON)")
    out.print(f"{stored.total} bytes of rows in the store")
    print_table(out, rows)
    fields = Table("field", "bytes", title="by field")
    for name, size in sorted(report["fields"].items(), key=lambda item: -item[1]):
        fields.add_row(name, str(size))
    print_table(out, fields)
    largest = Table("index", "role", "bytes", title="largest messages")
    for item in report["largest_messages"]:
        largest.add_row(str(item["index"]), item["role"], str(item["bytes"]))
    print_table(out, largest)
    return 0


_STYLES = {
    "finished": "green",
    "running": "cyan",
    "paused": "yellow",
    "interrupted": "magenta",  # waits for answers to its interrupts
    "stopped": "yellow",  # Ctrl-C: resumable as it is
    "failed": "red",
    "compensating": "yellow",
    "compensated": "blue",
    "compensation_failed": "bold red",
    "stalled": "bold black on yellow",  # no live owner: an operator should resume it
    "corrupt": "bold white on red",  # its head cannot be read
}
"""The style of each status; any other status string shows unstyled."""


def _rows_and_bytes(figures: tuple[int, int]) -> str:
    return f"{figures[0]} / {figures[1]}"


def _status(status: str) -> str:
    from rich.markup import escape

    return f"[{_STYLES.get(status, 'default')}]{escape(status)}[/]"


def _when(value: Any, clock: bool = False) -> str:
    """A stored timestamp to the second (UTC; ``clock``: the time only), escaped: it is row text printed as markup."""
    from rich.markup import escape

    text = "-" if not value else str(value).replace("T", " ")[:19]
    return escape(text[11:] if clock and value else text)


def _verdict_cell(verdict: dict[str, Any]) -> str:
    """A ``verdict`` step's cell: the verdict, coloured, and the names of its differences
    (stored text, escaped and made printable)."""
    from rich.markup import escape

    kind = str(verdict.get("verdict"))
    colour = {"same": "green", "compatible": "green", "migratable": "yellow"}.get(kind, "red")
    names = [str(d.get("name")) for d in verdict.get("differences") or [] if isinstance(d, dict)]
    allowed = [str(name) for name in verdict.get("allowed") or []]
    text = f"[{colour}]{escape(printable(kind))}[/]"
    if names:
        text += ": " + escape(printable(", ".join(names)))
    if allowed:
        text += " " + escape(printable(f"(allowed: {', '.join(allowed)})"))  # printable() strips a leading space
    return text


def _undo_cell(step: Step) -> str:
    """A compensation step's cell: the plan (``unwind``) or one undo's outcome (``undo``)."""
    from rich.markup import escape

    undo: dict[str, Any] = step.undo or {}
    if step.position == "unwind":
        plan = ", ".join(f"{item.get('name')} ({item.get('toolUseId')})" for item in undo.get("plan") or [] if isinstance(item, dict))
        return f"[yellow]unwinding[/] ({escape(printable(str(undo.get('trigger'))))}): " + escape(printable(plan or "nothing to undo"))
    if step.position == "undo":
        call = escape(printable(f"{undo.get('name')} ({undo.get('toolUseId')})"))
        if undo.get("outcome") == "undone":
            mark = "[green]undone[/]"
        else:
            mark = "[red]undo failed[/]: " + escape(printable(str(undo.get("error"))))
        doubt = " [yellow](call was in doubt)[/]" if undo.get("in_doubt") else ""
        again = " [yellow](undo re-run, same key)[/]" if undo.get("redo") else ""
        nested = f" (nested run {escape(printable(str(undo['run_id'])))} unwound)" if undo.get("run_id") else ""
        return f"undo {call} {mark}{nested}{doubt}{again}"
    return ""


def _details(step: Step) -> str:
    """One timeline cell: the model call, the tool calls, in-doubt markers, the stop."""
    from rich.markup import escape

    parts: list[str] = []
    model: dict[str, Any] | None = step.model
    if model:
        parts.append(
            f"model {model.get('latency_ms', 0):.0f} ms, {model.get('input_tokens', 0)} in / {model.get('output_tokens', 0)} out tokens"
        )
    for call in step.tools:
        duration = call.get("duration_ms")
        timing = "?" if duration is None else f"{duration:.1f} ms"
        mark = "[red]error[/]" if call.get("error") else "[green]ok[/]"
        doubt = " [yellow]in doubt, re-run[/]" if call.get("in_doubt") else ""
        child = f" -> run {escape(printable(str(call['child_run_id'])))}" if call.get("child_run_id") else ""
        parts.append(f"tool {escape(str(call.get('name')))} {timing} {mark}{doubt}{child}")
    for marker in step.in_doubt:
        ident = escape(f"{marker.get('name')} ({marker.get('toolUseId')}) -> {marker.get('action')}")
        parts.append(f"[yellow]in doubt[/]: {ident}")
    if step.verdict:
        parts.append(_verdict_cell(step.verdict))
    if step.forked_from:
        parts.append(escape(f"forked from {step.forked_from.get('run_id')} step {step.forked_from.get('step')}"))
    if step.undo:
        parts.append(_undo_cell(step))
    if step.position in ("turn_end", "unwound"):
        reason = f" ({escape(printable(step.stop_reason))})" if step.stop_reason else ""
        parts.append(f"{_status(step.status)}{reason}")
    return "; ".join(parts) or "-"
