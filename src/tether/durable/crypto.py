"""Encryption at rest for store rows: AES-GCM with user-supplied keys, a key id per row, and
every row bound to its place.

``SQLiteStore(path, cipher=AESGCMCipher({"k1": key1, "k2": key2}, current="k2"))`` seals every
row (head, messages, tool results, steps) as the JSON text ``{"enc": "aesgcm", "v": 2, "kid":
"k2", "nonce": ..., "ct": ...}``. Each row names the key that sealed it, so keys rotate without
rewriting anything: new rows use ``current``, older rows stay readable while their key is still
in the map. AES-GCM authenticates as well as encrypts, so a tampered row is refused, not misread.

**Rows are bound to their place.** The associated data of a version-2 row is a canonical byte
string of the format version, the key id and the row's :class:`RowPlace`: its table, its run id
and its position in the run (a message's ``seq``, a tool result's ``cycle/toolUseId``, a step's
number, the head's revision). A row of another run spliced in, a row moved to another position,
or a whole run copied under a new id fails authentication. The head carries its revision in
clear as ``"rev"`` (it is authenticated: it is part of the associated data), so a reader can
rebuild the head's place without a column of its own; a store that knows which revision is
current also catches an old head written back (see ``tether.durable.codec.decode_head``).

**Version-1 rows** (no ``"v"``; written before rows were bound) authenticate only their key id:
they still open, so existing stores keep loading, but they are *not* place-bound (an old
row could be spliced elsewhere). Every write seals a version-2 row, and forks re-seal what they
copy. ``allow_unbound_rows=False`` refuses version-1 rows: use it for stores created after the
upgrade, or once no version-1 row is left. ``cryptography`` is imported lazily (``pip install
'tether[crypto]'``).

Third-party ciphers implement :class:`RowCipher`: ``seal(text, place)`` returns an envelope (a
JSON object with ``"enc"`` and ``"ct"``) and ``open(envelope, where, place)`` returns the
plaintext, or raises :class:`~tether.errors.StoreError` naming ``where``; binding the row to
``place`` (:meth:`RowPlace.canonical` gives its canonical bytes) is the cipher's job.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigurationError, StoreError

ENVELOPE_KEYS = frozenset({"enc", "kid", "nonce", "ct"})
"""The keys of a version-1 envelope (no ``"v"``: sealed before rows were bound to their place)."""
ENVELOPE_V2_KEYS = ENVELOPE_KEYS | {"v"}
"""The keys of a version-2 envelope (the head row also carries ``"rev"``, which the codec reads)."""
TABLES = ("head", "messages", "results", "steps", "blobs")


def is_envelope(value: Any) -> bool:
    """True when a parsed row is an encryption envelope rather than a plain row."""
    return isinstance(value, dict) and "enc" in value and "ct" in value


@dataclass(frozen=True, slots=True)
class RowPlace:
    """Where a row belongs: what a sealed row is bound to.

    ``table`` is one of :data:`TABLES`; ``position`` is the message's ``seq``, the tool result's
    ``f"{cycle}/{toolUseId}"``, the step's number, the blob's id or the head's ``rev``. ``position`` is None
    only for a head whose revision the reader does not know (a version-2 head then cannot be
    verified, and a cipher refuses to open it).
    """

    table: str
    run_id: str
    position: int | str | None

    def canonical(self) -> bytes:
        """The canonical bytes of this place: an ASCII JSON array, unambiguous for any run id."""
        return json.dumps([self.table, self.run_id, self.position], ensure_ascii=True, separators=(",", ":")).encode("ascii")


@runtime_checkable
class RowCipher(Protocol):
    """Seals and opens store rows (JSON text in, a JSON envelope out), bound to their place.

    ``allow_plaintext`` says whether unsealed rows are read at all (rows written before
    encryption was turned on).
    """

    allow_plaintext: bool

    def seal(self, text: str, place: RowPlace) -> dict[str, Any]:
        """The envelope of one row's plaintext JSON text (with ``"enc"`` and ``"ct"`` keys),
        authenticated together with ``place``; the store writes it as compact JSON."""
        ...

    def open(self, envelope: dict[str, Any], where: str, place: RowPlace) -> str:
        """The plaintext JSON text of an envelope found at ``place``; raises StoreError naming
        ``where`` when it does not authenticate there."""
        ...


class AESGCMCipher:
    """AES-GCM (128/192/256-bit keys) with a random 96-bit nonce per row.

    ``keys`` maps key ids to raw keys (16, 24 or 32 bytes); ``current`` is the id new rows are
    sealed with. ``allow_plaintext=True`` also reads rows written before encryption was turned
    on (off by default: an unsealed row in an encrypted store is refused as possibly forged).
    ``allow_unbound_rows=False`` refuses version-1 rows, which are not bound to their place
    (on by default, so stores written before binding keep loading).

    Args:
        keys: Key ids mapped to raw AES keys of 16, 24 or 32 bytes.
        current: The id (one of ``keys``) that seals new rows.
        allow_plaintext: Also read unsealed rows (written before encryption was turned on).
        allow_unbound_rows: Read version-1 rows, which are not bound to their place.
    """

    name = "aesgcm"
    version = 2

    def __init__(self, keys: Mapping[str, bytes], current: str, *, allow_plaintext: bool = False, allow_unbound_rows: bool = True) -> None:
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError as exc:
            raise ConfigurationError(
                "AESGCMCipher needs the 'cryptography' package, which is not installed; install it with pip install 'tether[crypto]'"
            ) from exc
        if not isinstance(keys, Mapping) or not keys:
            raise ConfigurationError("AESGCMCipher keys must be a non-empty mapping of key id -> 16/24/32-byte key")
        self._aeads: dict[str, Any] = {}
        for kid, key in keys.items():
            if not isinstance(kid, str) or not kid or len(kid) > 64:
                raise ConfigurationError(f"AESGCMCipher keys: key id {kid!r} must be a non-empty string of at most 64 characters")
            if not isinstance(key, bytes | bytearray) or len(key) not in (16, 24, 32):
                size = len(key) if isinstance(key, bytes | bytearray) else type(key).__name__
                raise ConfigurationError(f"AESGCMCipher keys[{kid!r}] must be 16, 24 or 32 raw bytes (got {size}); see AESGCM.generate_key")
            self._aeads[kid] = AESGCM(bytes(key))
        if current not in self._aeads:
            raise ConfigurationError(f"AESGCMCipher current={current!r} is not one of the key ids {sorted(self._aeads)}")
        self.current = current
        self.blob_key = hmac.new(bytes(keys[current]), b"tether-blob-id", hashlib.sha256).digest()
        """The key of the keyed digests that name blob rows (see ``tether.durable.packing.blob_id``):
        derived from the current key, so blob ids say nothing to a reader without it."""
        self.allow_plaintext = allow_plaintext
        self.allow_unbound_rows = allow_unbound_rows

    @staticmethod
    def _aad_v1(kid: str) -> bytes:
        """The associated data of a version-1 row: the key id only."""
        return f"tether-row:{AESGCMCipher.name}:{kid}".encode()

    @staticmethod
    def _aad(kid: str, place: RowPlace) -> bytes:
        """The associated data of a version-2 row: format version, key id, table, run id, position."""
        fields = ["tether-row", AESGCMCipher.name, AESGCMCipher.version, kid, place.table, place.run_id, place.position]
        return json.dumps(fields, ensure_ascii=True, separators=(",", ":")).encode("ascii")

    def seal(self, text: str, place: RowPlace) -> dict[str, Any]:
        if place.position is None:
            raise StoreError(f"run {place.run_id!r}: cannot seal a {place.table} row without its position")
        nonce = os.urandom(12)
        ct = self._aeads[self.current].encrypt(nonce, text.encode(), self._aad(self.current, place))
        return {
            "enc": self.name,
            "v": self.version,
            "kid": self.current,
            "nonce": base64.b64encode(nonce).decode(),
            "ct": base64.b64encode(ct).decode(),
        }

    def open(self, envelope: dict[str, Any], where: str, place: RowPlace) -> str:
        from cryptography.exceptions import InvalidTag

        bound = "v" in envelope
        keys = ENVELOPE_V2_KEYS if bound else ENVELOPE_KEYS
        if envelope.get("enc") != self.name or set(envelope) != keys:
            raise StoreError(f"{where} has an unknown encryption envelope (enc={envelope.get('enc')!r}); expected {self.name!r}")
        version = envelope.get("v")
        if bound and (type(version) is not int or version != self.version):
            raise StoreError(f"{where} has an envelope of unknown version {version!r} (this Tether reads versions 1 and {self.version})")
        kid = envelope["kid"]
        aead = self._aeads.get(kid) if isinstance(kid, str) else None
        if aead is None:
            known = sorted(self._aeads)
            raise StoreError(f"{where} is sealed with key id {kid!r}, which this cipher does not have (it has {known}); add that key")
        if not bound and not self.allow_unbound_rows:
            raise StoreError(
                f"{where} is a version-1 row, sealed before rows were bound to their place, and this cipher has "
                "allow_unbound_rows=False; the row may have been moved from another run or position"
            )
        if bound and place.position is None:
            raise StoreError(f"{where}: cannot verify the {place.table} row of run {place.run_id!r} without its revision")
        aad = self._aad(kid, place) if bound else self._aad_v1(kid)
        try:
            nonce = base64.b64decode(envelope["nonce"], validate=True)
            ct = base64.b64decode(envelope["ct"], validate=True)
            return str(aead.decrypt(nonce, ct, aad).decode())
        except (InvalidTag, ValueError, TypeError):
            moved = ", or moved from another run or position" if bound else ""
            raise StoreError(f"{where} failed authentication with key id {kid!r}: the row was tampered with or corrupted{moved}") from None
