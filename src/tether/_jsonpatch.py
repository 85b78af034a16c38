"""Patches between JSON objects: the one diff engine of Tether's stores.

A *patch* (JSON) is an object mapping a key to ``[value]`` (set it), ``[]`` (delete it) or a
nested patch object (patch the object under that key). :func:`diff` makes one, :func:`apply`
applies one and :func:`checked_patch` makes one that provably rebuilds a given text.

Two stores use them: the durable stores' head packing (:mod:`tether.durable.packing`: a large
head field stored as a patch against the blob it was last stored as) and Temporal's versioned
state values (:mod:`tether.temporal.versions`: an agent-state value stored as a patch against
its previous version in the blob store).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._json import dumps_compact


def diff(old: Any, new: Any) -> dict[str, Any] | None:
    """The patch turning object ``old`` into object ``new`` (None when either is not an object).

    Values are compared with ``==`` (C speed); the caller checks the outcome by text (``1`` and
    ``True`` compare equal in Python), see :func:`checked_patch`.

    Args:
        old: The object the patch applies to.
        new: The object the patch must produce.
    """
    if type(old) is not dict or type(new) is not dict:
        return None
    patch: dict[str, Any] = {}
    for key, value in new.items():
        if key not in old:
            patch[key] = [value]
            continue
        before = old[key]
        if before == value and type(before) is type(value):
            continue
        sub = diff(before, value) if type(before) is dict and type(value) is dict else None
        patch[key] = sub if sub else [value]
    for key in old:
        if key not in new:
            patch[key] = []
    return patch


def apply(base: Any, patch: Any) -> Any:
    """``base`` with ``patch`` applied (``base`` is not changed; touched objects are copied).

    Raises ``ValueError`` for a patch that does not fit ``base`` (a damaged row or blob).

    Args:
        base: The object the patch was made against.
        patch: The patch (see the module docstring for its format).
    """
    if type(base) is not dict or type(patch) is not dict:
        raise ValueError("a patch applies to an object only")
    out = dict(base)
    for key, op in patch.items():
        if type(op) is list:
            if not op:
                if key not in out:
                    raise ValueError(f"a patch deletes {key!r}, which is not there")
                del out[key]
            elif len(op) == 1:
                out[key] = op[0]
            else:
                raise ValueError(f"a patch sets {key!r} with {len(op)} values")
        elif type(op) is dict:
            out[key] = apply(out.get(key), op)
        else:
            raise ValueError(f"a patch holds {type(op).__name__} under {key!r}")
    return out


def checked_patch(
    base: Any, base_text: str | None, new: Any, new_text: str, encode: Callable[[Any], str] = dumps_compact
) -> dict[str, Any] | None:
    """A patch from ``base`` to ``new`` whose outcome encodes to exactly ``new_text``, or None.

    Args:
        base: The object the patch applies to.
        base_text: ``base``'s text, if known (equal texts give the empty patch without a diff).
        new: The object to reach.
        new_text: ``new``'s text as ``encode`` writes it; the patched object must encode to it
            (so ``1`` never becomes ``1.0`` or ``true``, and, for an order-keeping encoder, key
            order is kept).
        encode: The encoder of both texts (compact JSON in insertion order by default; Temporal's
            blob store passes its canonical, key-sorted encoder).
    """
    if new_text == base_text:
        return {}
    patch = diff(base, new)
    if patch is None or encode(apply(base, patch)) != new_text:
        return None
    return patch


__all__ = ["apply", "checked_patch", "diff"]
