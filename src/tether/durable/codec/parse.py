"""Reading one row: its text parsed (with a nesting bound) and its seal opened, and the wording
of every error about a row that is not what Tether wrote.

Every failure is a :class:`~tether.errors.StoreError` worded ``run 'X': <table> <position>:
<problem>; the store is damaged`` (:func:`damaged`), never a ``KeyError`` or a
``RecursionError`` deeper in.
"""

from __future__ import annotations

from typing import Any

from ..._json import MAX_DEPTH, parse_json
from ...errors import ShapeError, StoreError
from ..crypto import RowCipher, RowPlace, is_envelope

MAX_ROW_DEPTH = MAX_DEPTH
"""The deepest nesting of arrays and objects a row may have (written or read): the bound of
every JSON text Tether reads (:data:`tether._json.MAX_DEPTH`), measured before parsing; writes
refuse rows deeper than this so that every row written can be read back."""

ROW_ERRORS = (ShapeError, TypeError, ValueError, KeyError, AttributeError, RecursionError)
"""What parsing or validating a damaged row can raise; each becomes a StoreError."""


def damaged(run_id: str, where: str, problem: str) -> StoreError:
    """The error for a row that is not what Tether wrote: names the run, the table and the position."""
    return StoreError(f"run {run_id!r}: {where}: {problem}; the store is damaged")


def problem(exc: BaseException) -> str:
    """A short description of what parsing or validating a row raised."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, ShapeError):
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def where_of(place: RowPlace) -> str:
    """How errors name a row: ``messages seq 3``, ``results cycle 2 toolUseId 'x'``, ``steps step 4``, ``head``."""
    if place.table == "messages":
        return f"messages seq {place.position}"
    if place.table == "results":
        cycle, _, ident = str(place.position).partition("/")
        return f"results cycle {cycle} toolUseId {ident!r}"
    if place.table == "steps":
        return f"steps step {place.position}"
    return place.table


def parse_text(run_id: str, where: str, text: Any, what: str = "") -> Any:
    """The JSON value of row text; StoreError naming the run and the row when it is not JSON."""
    if not isinstance(text, str):
        raise damaged(run_id, where, f"the row is not JSON text (a {type(text).__name__})")
    try:
        return parse_json(text)
    except (ValueError, RecursionError) as exc:
        raise damaged(run_id, where, f"the row{what} is corrupt or truncated ({problem(exc)})") from None


def open_row(run_id: str, where: str, value: Any, cipher: RowCipher | None, place: RowPlace) -> Any:
    """A parsed row with its seal opened (``value`` itself when it is plain and that is allowed)."""
    if is_envelope(value):
        if cipher is None:
            kid = value.get("kid")
            raise StoreError(
                f"run {run_id!r}: {where} is encrypted (key id {kid!r}) but the store has no cipher; pass cipher=AESGCMCipher(...)"
            )
        return parse_text(run_id, where, cipher.open(value, f"run {run_id!r}: {where}", place), " decrypted")
    if cipher is not None and not cipher.allow_plaintext:
        raise StoreError(
            f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it; pass allow_plaintext=True to read rows "
            "written before encryption was turned on"
        )
    return value


def parse_row(run_id: str, where: str, text: Any, cipher: RowCipher | None, place: RowPlace) -> Any:
    """The JSON value of one row's text, its seal opened at ``place``; StoreError naming ``where``."""
    return open_row(run_id, where, parse_text(run_id, where, text), cipher, place)
