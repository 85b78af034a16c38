"""A run's incarnation: which creation of a run id a head, a writer or a nested run belongs to.

A run id names a run until the run is deleted; then the id may be used again, for a new run that
shares nothing with the old one. The revision cannot tell the two apart (both count from 1), so
every run gets an *incarnation* when it is created: a random nonce (:func:`new_incarnation`)
that its session writes into every head (``incarnation``) and that the store keeps next to the
revision. It is checked

- by every write: the store's compare-and-swap refuses a write whose incarnation is not the
  stored run's (:func:`check_incarnation`, called by :func:`tether.durable.store.check_fence`)
  with :class:`~tether.errors.RunReplacedError`, so a writer of a deleted run can never write
  into its successor, even at the same revision;
- by an agent's session cache: a cached session is reused only for the same incarnation (it
  knows which blobs and rows are stored: those of its own run);
- by a parent adopting a nested run: a child run's head records its parent's incarnation
  (``parent_incarnation``), and a parent resumes a child only if the child is its own
  (:func:`belongs`); a child of another incarnation of the parent id (left by an older Tether, a
  crash, a copied store) is stale and is replaced by a fresh child run, never read.

Stored data from before incarnations existed has none: such a run is *legacy*. A legacy run's
incarnation is ``None`` (its writers carry ``None`` too, so they still match it), and a legacy
parent adopts its children as it did (lenient: those runs were in flight when Tether was
upgraded and must resume as they were; a legacy parent cannot be told from an older
incarnation of itself, which was the old behaviour). A parent with an incarnation never adopts a
child that does not record exactly that incarnation, legacy children included.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from ..errors import RunReplacedError, StoreError

INCARNATION = "incarnation"
"""The head field holding the run's incarnation."""
PARENT_INCARNATION = "parent_incarnation"
"""The head field of a nested run holding its parent's incarnation when the child was created."""
INCARNATION_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a stored incarnation may be (a new one is 32 hex digits)."""


def new_incarnation() -> str:
    """A fresh incarnation for a run being created: 128 random bits as hex."""
    return secrets.token_hex(16)


def incarnation_of(head: dict[str, Any] | None, key: str = INCARNATION) -> str | None:
    """The incarnation a head records under ``key`` (None: a legacy head, or no head).

    Raises:
        StoreError: The field is there but is not an incarnation (a damaged or forged head).
    """
    value = None if head is None else head.get(key)
    if value is None:
        return None
    if type(value) is not str or not INCARNATION_PATTERN.fullmatch(value):
        raise StoreError(f"head {key} must be 1-64 characters from A-Z a-z 0-9 _ -, got {value!r:.60}")
    return value


def check_incarnation(run_id: str, writer: str | None, stored: str | None) -> None:
    """Refuse a write to an existing run made for another incarnation of its id.

    Args:
        run_id: The run written.
        writer: The incarnation the write's head records (None: a legacy run's writer).
        stored: The incarnation of the run the store holds (None: a legacy run).
    """
    if writer != stored:
        raise RunReplacedError(
            f"run {run_id!r} was deleted and created again since this writer loaded it (incarnation {writer or 'legacy'}, "
            f"the store holds {stored or 'legacy'}): it is another run now, so nothing was written; load {run_id!r} again"
        )


def belongs(child: dict[str, Any], parent: dict[str, Any] | None) -> bool:
    """True when the nested run with head ``child`` belongs to the parent run with head ``parent``.

    A legacy parent (no incarnation) adopts its children; any other parent only a child recording
    its incarnation. No parent head: the child belongs to nothing that exists.
    """
    if parent is None:
        return False
    mine = incarnation_of(parent)
    if mine is None:
        return True
    return incarnation_of(child, PARENT_INCARNATION) == mine


__all__ = [
    "INCARNATION",
    "PARENT_INCARNATION",
    "belongs",
    "check_incarnation",
    "incarnation_of",
    "new_incarnation",
]
