"""``tether rm`` and ``tether prune``: delete runs from the store.

Deleting goes through the store's ``delete_run``, which takes the run's lease first: a run that a
live process owns is refused (``rm --force`` fences its owner off with ``break_lease`` first, so
its next write fails instead of recreating half a run). ``prune`` never touches a run with a live
owner, nor a run whose age cannot be read (a corrupt head): it only deletes what it can date.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from ..durable.history import RunSummary
from ..errors import RunLockedError, RunNotFoundError
from .runs import console, open_store, printable
from .stores import StoreSpec

EXIT_ERROR = 1


def cmd_rm(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether rm RUN... [--force]``: delete each run; one line per run, exit 1 when any was not deleted."""
    store = open_store(path)
    out, err = console(), console(stderr=True)
    failed = 0
    for run_id in dict.fromkeys(args.run_ids):  # each once, in the order given
        try:  # the head is not read: a corrupt run can be deleted too
            if args.force and store.owner_alive(run_id):
                store.break_lease(run_id)  # fence the owner off: its next write fails
            store.delete_run(run_id)
        except RunLockedError:
            failed += 1
            err.print(
                f"error: tether rm: run {printable(run_id)!r} is owned by a live process; wait for it, or pass --force to fence it off "
                "and delete the run",
                markup=False,
                soft_wrap=True,
            )
            continue
        except RunNotFoundError as exc:
            failed += 1
            err.print(f"error: tether rm: {printable(str(exc))}", markup=False, soft_wrap=True)
            continue
        out.print(f"deleted {printable(run_id)}", markup=False, soft_wrap=True)
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
    old = [run for run in store.list_runs() if (not wanted or run.status in wanted) and _older(run, cutoff)]
    deleted: list[str] = []
    kept: list[str] = []
    for run in old:
        if run.status == "running":  # a live owner (list_runs shows an ownerless one as stalled)
            kept.append(run.run_id)
            continue
        if not args.dry_run:
            try:
                store.delete_run(run.run_id)
            except (RunLockedError, RunNotFoundError):  # taken or deleted since it was listed
                kept.append(run.run_id)
                continue
        deleted.append(run.run_id)
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
