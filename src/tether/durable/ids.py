"""Deterministic ids of nested runs, and adopting the stored child run such an id finds.

A parent that starts a child run (an agent called as a tool, a graph node, a swarm member)
must find the same child again after a crash, in another process, with nothing stored in
between but its own tool-start marker. So the child's id is a pure function of the parent's
run id and a key the parent's state already holds (the tool-use id, or the node id and its
execution count).

Because the id is deterministic, a run with it may also be left over from another incarnation
of the parent id (deleted and created again): :func:`adopt_child` is the one place a parent
decides whether to resume the child run it finds, and it resumes only its own.
"""

from __future__ import annotations

import hashlib
import logging
import re

from .incarnation import belongs
from .store import RUN_ID_PATTERN, RunStore, validate_run_id

_log = logging.getLogger(__name__)
_UNSAFE = re.compile(r"[^A-Za-z0-9_:-]")
_MAX = 128
_DIGEST = 12


def child_run_id(parent_run_id: str, key: str) -> str:
    """The run id of the nested run ``key`` of run ``parent_run_id``.

    ``parent.key`` when that is a valid run id (readable, and sorted next to its parent);
    otherwise the key's unsafe characters are replaced and a digest of the exact pair is
    appended (``parent.key-1a2b3c4d5e6f``), the parent's id shortened if need be, so distinct
    keys never share a child id and the result always fits the run id pattern.

    Args:
        parent_run_id: The parent's run id (a valid run id).
        key: What identifies the child within the parent: a tool-use id, ``node_id.N``...
    """
    validate_run_id(parent_run_id)
    if not isinstance(key, str) or not key:
        raise TypeError(f"a nested run's key must be a non-empty string, got {key!r}")
    plain = f"{parent_run_id}.{key}"
    if len(plain) <= _MAX and RUN_ID_PATTERN.fullmatch(plain) and "." not in key:
        return plain
    digest = hashlib.sha256(f"{parent_run_id}\x00{key}".encode()).hexdigest()[:_DIGEST]
    safe = _UNSAFE.sub("_", key)[:32]
    room = _MAX - len(safe) - len(digest) - 2
    return f"{parent_run_id[:room]}.{safe}-{digest}"


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


__all__ = ["adopt_child", "child_run_id"]
