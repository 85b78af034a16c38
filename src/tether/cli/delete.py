"""``tether rm`` and ``tether prune``: delete runs from the store.

Deleting goes through the store's ``delete_run``, which deletes a run with its whole tree of
nested runs (agent-tool calls, graph node executions, swarm member turns: see
:func:`tether.durable.store.run_tree`) and takes every run's lease first: a tree that a live
process owns any part of is refused (``rm --force`` fences those owners off with ``break_lease``
first, so their next write fails instead of recreating half a run). Every deleted run is printed.

``prune`` works on whole trees too: a tree is pruned when its top run (one with no parent in the
store) has the wanted status and no run of the tree was updated within the age; a nested run is
never pruned on its own while its parent stays. It never touches a tree with a live owner, nor
one with a run whose age cannot be read (a corrupt head): it only deletes what it can date.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from ..durable.history import RunSummary
from ..durable.store import run_tree
from ..errors import RunLockedError, RunNotFoundError
from .exits import EXIT_ERROR
from .runs import console, open_store, printable
from .stores import StoreSpec


def cmd_rm(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether rm RUN... [--force]``: delete each run with its nested runs; one line per deleted run,
    exit 1 when any named run was not deleted."""
    store = open_store(path)
    out, err = console(), console(stderr=True)
    failed = 0
    for run_id in dict.fromkeys(args.run_ids):  # each once, in the order given
        try:  # the head is not read: a corrupt run can be deleted too
            if args.force:
                for ident in run_tree(store.list_runs(), run_id):
                    if store.owner_alive(ident):
                        store.break_lease(ident)  # fence the owner off: its next write fails
            deleted = store.delete_run(run_id)
        except RunLockedError:
            failed += 1
            err.print(
                f"error: tether rm: run {printable(run_id)!r} (or a run nested in it) is owned by a live process; wait for it, "
                "or pass --force to fence it off and delete the run",
                markup=False,
                soft_wrap=True,
            )
            continue
        except RunNotFoundError as exc:
            failed += 1
            err.print(f"error: tether rm: {printable(str(exc))}", markup=False, soft_wrap=True)
            continue
        for ident in deleted:
            out.print(f"deleted {printable(ident)}", markup=False, soft_wrap=True)
    return EXIT_ERROR if failed else 0


def cmd_prune(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether prune --older-than DAYS [--status S] [--dry-run]``: delete the runs not updated for DAYS days."""
    out = console()
    if not path.exists():
        out.print(f"no runs yet ({path} does not exist)", markup=False, soft_wrap=True)
        return 0
    store = open_store(path)
    cutoff = datetime.now(UTC) - timedelta(days=args.older_than)
    wanted = set(args.status or ())
    runs = store.list_runs()
    by_id = {run.run_id: run for run in runs}
    deleted: list[str] = []
    kept: list[str] = []
    for top in runs:
        if top.parent_run_id in by_id or (wanted and top.status not in wanted):
            continue  # a nested run goes with its parent's tree, never on its own
        tree = [by_id[ident] for ident in run_tree(runs, top.run_id)]
        if not all(_older(run, cutoff) for run in tree):
            continue
        if any(run.status == "running" for run in tree):  # a live owner (list_runs shows an ownerless one as stalled)
            kept.append(top.run_id)
            continue
        if args.dry_run:
            deleted += [run.run_id for run in tree]
            continue
        try:
            deleted += store.delete_run(top.run_id)
        except (RunLockedError, RunNotFoundError):  # taken or deleted since it was listed
            kept.append(top.run_id)
    verb = "would delete" if args.dry_run else "deleted"
    for run_id in deleted:
        out.print(f"{verb} {printable(run_id)}", markup=False, soft_wrap=True)
    days = f"{args.older_than:g} day{'' if args.older_than == 1 else 's'}"
    summary = f"{verb} {len(deleted)} run{'' if len(deleted) == 1 else 's'} not updated for {days}"
    if kept:
        summary += f"; kept {len(kept)} with a live owner ({', '.join(printable(run_id) for run_id in kept)})"
    out.print(summary, markup=False, soft_wrap=True)
    return 0


def _older(run: RunSummary, cutoff: datetime) -> bool:
    """True when the run was last updated before ``cutoff`` (False when its time cannot be read)."""
    try:
        updated = datetime.fromisoformat(str(run.updated_at))
    except ValueError:
        return False
    if updated.tzinfo is None:
        updated = updated.replace(tzinfo=UTC)
    return updated < cutoff


__all__ = ["cmd_prune", "cmd_rm"]
