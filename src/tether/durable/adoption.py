"""Adopting a stored nested run: a parent resumes only a child run of its own incarnation.

A nested run's id is deterministic (:func:`tether.durable.ids.child_run_id`), so a run found
under it may be left over from another incarnation of the parent id (deleted and created again).
:func:`adopt_child` is the one place a parent decides whether to resume it.
"""

from __future__ import annotations

import logging

from .incarnation import belongs
from .store import RunStore

_log = logging.getLogger(__name__)


def adopt_child(store: RunStore, parent_run_id: str, run_id: str) -> bool:
    """True when nested run ``run_id`` exists and belongs to the current incarnation of its parent
    ``parent_run_id`` (resume it); False when there is none to resume (start it afresh).

    A run found under the id that records another incarnation of the parent (or none, while the
    parent has one) is stale: left by a deleted parent of the same id (an older Tether's
    ``delete_run``, a crash, a copied store). It is deleted, with its own nested runs, and never
    read: its answer was for another task. A legacy parent adopts its children (see
    :mod:`tether.durable.incarnation`).

    Raises:
        RunLockedError: The stale run has a live owner (it cannot be replaced now).
    """
    head = store.head(run_id)
    if head is None:
        return False
    if belongs(head, store.head(parent_run_id)):
        return True
    _log.warning("run %r: nested run %r belongs to an earlier run of that id; deleting it and starting it afresh", parent_run_id, run_id)
    store.delete_run(run_id)
    return False


__all__ = ["adopt_child"]
