"""Encryption at rest for store rows: AES-GCM with user-supplied keys and a key id per row.

``SQLiteStore(path, cipher=AESGCMCipher({"k1": key1, "k2": key2}, current="k2"))`` seals every
row (head, messages, tool results) as the JSON text ``{"enc": "aesgcm", "kid": "k2", "nonce":
..., "ct": ...}``. Each row names the key that sealed it, so keys rotate without rewriting
anything: new rows use ``current``, older rows stay readable while their key is still in the
map. AES-GCM authenticates as well as encrypts, so a tampered row is refused, not misread.
``cryptography`` is imported lazily (``pip install 'tether[crypto]'``).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigurationError, StoreError

ENVELOPE_KEYS = frozenset({"enc", "kid", "nonce", "ct"})


def is_envelope(value: Any) -> bool:
    """True when a parsed row is an encryption envelope rather than a plain row."""
    return isinstance(value, dict) and "enc" in value and "ct" in value


@runtime_checkable
class RowCipher(Protocol):
    """Seals and opens store rows (JSON text in, JSON envelope text out)."""

    allow_plaintext: bool

    def seal(self, text: str) -> str:
        """The envelope (JSON text) of one row's plaintext JSON text."""
        ...

    def open(self, envelope: dict[str, Any], where: str) -> str:
        """The plaintext JSON text of an envelope; ``where`` names the row in errors."""
        ...


class AESGCMCipher:
    """AES-GCM (128/192/256-bit keys) with a random 96-bit nonce per row.

    ``keys`` maps key ids to raw keys (16, 24 or 32 bytes); ``current`` is the id new rows are
    sealed with. ``allow_plaintext=True`` also reads rows written before encryption was turned
    on (off by default: an unsealed row in an encrypted store is refused as possibly forged).
    """

    name = "aesgcm"

    def __init__(self, keys: Mapping[str, bytes], current: str, *, allow_plaintext: bool = False) -> None:
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
        self.allow_plaintext = allow_plaintext

    @staticmethod
    def _aad(kid: str) -> bytes:
        return f"tether-row:{AESGCMCipher.name}:{kid}".encode()

    def seal(self, text: str) -> str:
        nonce = os.urandom(12)
        ct = self._aeads[self.current].encrypt(nonce, text.encode(), self._aad(self.current))
        return json.dumps(
            {"enc": self.name, "kid": self.current, "nonce": base64.b64encode(nonce).decode(), "ct": base64.b64encode(ct).decode()},
            separators=(",", ":"),
        )

    def open(self, envelope: dict[str, Any], where: str) -> str:
        from cryptography.exceptions import InvalidTag

        if envelope.get("enc") != self.name or set(envelope) != ENVELOPE_KEYS:
            raise StoreError(f"{where} has an unknown encryption envelope (enc={envelope.get('enc')!r}); expected {self.name!r}")
        kid = envelope["kid"]
        aead = self._aeads.get(kid) if isinstance(kid, str) else None
        if aead is None:
            known = sorted(self._aeads)
            raise StoreError(f"{where} is sealed with key id {kid!r}, which this cipher does not have (it has {known}); add that key")
        try:
            nonce = base64.b64decode(envelope["nonce"], validate=True)
            ct = base64.b64decode(envelope["ct"], validate=True)
            return str(aead.decrypt(nonce, ct, self._aad(kid)).decode())
        except (InvalidTag, ValueError, TypeError):
            raise StoreError(f"{where} failed authentication with key id {kid!r}: the row was tampered with or corrupted") from None


def open_row(value: Any, where: str, cipher: RowCipher | None) -> Any:
    """A parsed row with its encryption removed (``value`` itself when it is plain)."""
    if is_envelope(value):
        if cipher is None:
            kid = value.get("kid")
            raise StoreError(f"{where} is encrypted (key id {kid!r}) but the store has no cipher; pass cipher=AESGCMCipher(...)")
        text = cipher.open(value, where)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise StoreError(f"{where} decrypted to invalid JSON ({exc}); the store is damaged") from None
    if cipher is not None and not cipher.allow_plaintext:
        raise StoreError(
            f"{where} is not encrypted but the store's cipher requires it; pass allow_plaintext=True to read rows "
            "written before encryption was turned on"
        )
    return value
