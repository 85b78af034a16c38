"""Blob rows: a run's large values stored once under their digest (see
:mod:`tether.durable.packing`), read back verified and resolved into the heads that refer to them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from ...errors import StoreError
from ..crypto import RowCipher, RowPlace, is_envelope
from ..packing import BLOB_FIELDS, blob_id, is_ref, refs_of, unpack_head
from .parse import damaged, open_row, parse_text, problem

BlobFetch = Callable[[Collection[str]], Iterable[tuple[Any, Any]]]
"""A store's reader of blob rows: given blob ids, the ``(id, text)`` rows it has of them."""


def is_packed(head: Any) -> bool:
    """True when ``head`` may hold blob references (a head object written with schema 3 or later)."""
    return type(head) is dict and type(head.get("schema_version")) is int and head["schema_version"] >= 3


def unpacked(run_id: str, where: str, head: Any, cipher: RowCipher | None, blobs: BlobFetch | None) -> Any:
    """``head`` with its blob references resolved (read through ``blobs``), or, without
    ``blobs``, with the fields stored as blobs left out (None)."""
    if not is_packed(head):
        return head
    ids = refs_of(head)
    if not ids and not any(is_ref(head.get(name)) for name in BLOB_FIELDS):
        return head
    if blobs is None:
        return {key: None if key in BLOB_FIELDS and is_ref(value) else value for key, value in head.items()}
    return resolve_refs(run_id, where, head, decode_blobs(run_id, ids, blobs, cipher))


def resolve_refs(run_id: str, where: str, head: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``head`` with its references replaced by the blob ``values``; StoreError when one does not fit."""
    try:
        return unpack_head(head, values)
    except (KeyError, TypeError, ValueError) as exc:
        raise damaged(run_id, where, f"a blob reference does not resolve ({problem(exc)})") from None


def decode_blobs(run_id: str, ids: Collection[str], blobs: BlobFetch, cipher: RowCipher | None = None) -> dict[str, Any]:
    """The values of the blobs ``ids`` of run ``run_id``, read through ``blobs`` and verified.

    A blob row must be the JSON text its id is the digest of (a ``sha256:`` id is recomputed;
    an ``hmac:`` id names a sealed row, which the cipher authenticates bound to that id); a
    missing, altered or unsealed-where-sealing-is-required row is a damaged store.
    """
    wanted = set(ids)
    values: dict[str, Any] = {}
    if not wanted:
        return values
    for ident, text in blobs(sorted(wanted)):
        if ident not in wanted or ident in values:
            continue
        where = f"blobs {ident!r}"
        if not isinstance(text, str):
            raise damaged(run_id, where, f"the row is not JSON text (a {type(text).__name__})")
        parsed = parse_text(run_id, where, text)
        if is_envelope(parsed):
            values[ident] = open_row(run_id, where, parsed, cipher, RowPlace("blobs", run_id, ident))
            continue
        if cipher is not None and not cipher.allow_plaintext:
            raise StoreError(f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it")
        if not ident.startswith("sha256:") or blob_id(text) != ident:
            raise damaged(run_id, where, "its text does not match its digest")
        values[ident] = parsed
    missing = wanted - values.keys()
    if missing:
        raise damaged(run_id, f"blobs {sorted(missing)[0]!r}", "the row is missing")
    return values
