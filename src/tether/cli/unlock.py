"""``tether unlock RUN``: fence off a run's owner and free its lease, so the run can be resumed.

A process that owns a run holds its lease; a process that died frees it by itself (the run shows
as ``stalled``), but a stopped, hung or unreachable one holds it forever. Unlocking calls the
store's ``break_lease``: the run's lease epoch is bumped, so the old owner's next write raises
:class:`~tether.errors.LeaseLostError` and nothing more of it is stored, and the lease is freed
for ``tether resume``. The old process is not killed: it is fenced off. Since that loses the work
a live owner did since its last write, a run with a live owner is unlocked only with ``--yes``.
"""

from __future__ import annotations

import argparse

from ..errors import RunLockedError, RunNotFoundError
from .runs import console, open_store, resume_command
from .stores import StoreSpec


def cmd_unlock(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether unlock RUN [--yes]``: break the run's lease; one line naming the new epoch and how to resume."""
    store = open_store(path)
    run_id: str = args.run_id
    head = store.head(run_id)  # before anything is written: a missing run gets no lease row
    if head is None:
        raise RunNotFoundError(f"no run {run_id!r} in {path}; see `tether runs`")
    if store.owner_alive(run_id) and not args.yes:
        raise RunLockedError(
            f"run {run_id!r} has a live owner (pid unknown); unlocking fences it off: its next write fails. Pass --yes to do it"
        )
    epoch = store.break_lease(run_id)
    console().print(
        f"run {run_id!r} unlocked: its owner (if any) is fenced off (epoch {epoch}); resume it with: {resume_command(run_id, head, path)}",
        markup=False,
        soft_wrap=True,
    )
    return 0


__all__ = ["cmd_unlock"]
