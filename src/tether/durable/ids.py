"""Run ids: what a valid one is, and the deterministic ids of nested runs.

A parent that starts a child run (an agent called as a tool, a graph node, a swarm member)
must find the same child again after a crash, in another process, with nothing stored in
between but its own tool-start marker. So the child's id is a pure function of the parent's
run id and a key the parent's state already holds (the tool-use id, or the node id and its
execution count).

Because the id is deterministic, a run with it may also be left over from another incarnation
of the parent id (deleted and created again): :func:`tether.durable.adoption.adopt_child` is the
one place a parent decides whether to resume the child run it finds, and it resumes only its own.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..errors import StoreError

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""What a run id may be: 1-128 characters from ``A-Z a-z 0-9 . _ : -``."""


def validate_run_id(run_id: Any) -> str:
    """Return ``run_id`` if it is a safe run id, else raise :class:`StoreError` naming it.

    Args:
        run_id: The candidate: 1-128 characters from ``A-Z a-z 0-9 . _ : -``, not ``.`` or ``..``.
    """
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id) or run_id in (".", ".."):
        raise StoreError(f"run_id {run_id!r} is invalid: use 1-128 characters from A-Z a-z 0-9 . _ : - (not '.' or '..')")
    return run_id


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


__all__ = ["RUN_ID_PATTERN", "child_run_id", "validate_run_id"]
