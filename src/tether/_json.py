"""JSON discipline: validation with named paths, fast deep copies, and the bytes envelope.

Everything Tether persists is JSON. In memory, messages may hold ``bytes`` (image and document
sources, redacted reasoning); on the way out they become ``{"$b64": "<base64>"}`` envelopes and
on the way back in they are decoded at the places where bytes are allowed.

Deep copies of data already checked to be pure JSON use :mod:`marshal` as a C-speed copier
(:func:`freeze` / :func:`thaw`). A frozen blob never leaves the process and is only ever thawed
from bytes this module produced from plain JSON values, so it is a copy mechanism, not a storage
format: nothing persisted or received from outside is ever unmarshalled (or unpickled).
"""

from __future__ import annotations

import base64
import binascii
import json
import marshal
import math
from typing import Any

from .errors import StateError, json_path

BYTES_KEY = "$b64"
_BYTES_MARKER = BYTES_KEY.encode("ascii")
_MARSHAL_VERSION = 4
_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})
_isfinite = math.isfinite


def _default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(type(value).__name__)


_encoder = json.JSONEncoder(default=_default, ensure_ascii=False, allow_nan=False, check_circular=True)
_plain_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_decode = json.JSONDecoder().decode


def dumps(value: Any) -> str:
    """Serialize JSON data, encoding any bytes as envelopes."""
    return _encoder.encode(value)


def encode(value: Any) -> Any:
    """Return a deep copy of ``value`` that is pure JSON (bytes become envelopes).

    Raises ``TypeError``/``ValueError``/``RecursionError`` for anything else that is not JSON;
    callers that need a named path call :func:`find_non_json` on failure.
    """
    if _is_json(value):
        return thaw(freeze(value))
    return _decode(_encoder.encode(value))


def _is_json(value: Any) -> bool:
    tv = type(value)
    if tv is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) in _SCALARS:
                continue
            if not _is_json(item):
                return False
        return True
    if tv is list:
        for item in value:
            if type(item) in _SCALARS:
                continue
            if not _is_json(item):
                return False
        return True
    if tv is float:
        return _isfinite(value)
    return tv in _SCALARS


def is_json(value: Any) -> bool:
    """True when ``value`` is made only of dict (str keys), list, str, int, finite float, bool, None.

    Exact types only (no tuples, subclasses or bytes); a structure nested too deeply for the
    interpreter (or circular) is reported as not JSON. Never raises.
    """
    try:
        return _is_json(value)
    except RecursionError:
        return False


def freeze(value: Any) -> bytes:
    """An immutable in-process image of pure-JSON ``value`` (see the module docstring)."""
    return marshal.dumps(value, _MARSHAL_VERSION)


def thaw(blob: bytes) -> Any:
    """A fresh deep copy of the value :func:`freeze` captured in ``blob``."""
    return marshal.loads(blob)


def may_hold_bytes(blob: bytes) -> bool:
    """False when the frozen value certainly contains no ``$b64`` envelope (a C-speed scan)."""
    return _BYTES_MARKER in blob


def copy_json(value: Any) -> Any:
    """Deep-copy pure JSON data at C speed.

    Raises ``TypeError``/``ValueError`` for values that are not JSON (bytes included); tuples
    and non-string keys are normalized the way :mod:`json` does.
    """
    if _is_json_safe(value):
        return thaw(freeze(value))
    return _decode(_plain_encoder.encode(value))


def _is_json_safe(value: Any) -> bool:
    try:
        return _is_json(value)
    except RecursionError:
        return False


def strict_copy(value: Any, what: str, error: type[Exception]) -> Any:
    """A deep copy of ``value`` if it is pure JSON (exact types), else ``error`` naming the path."""
    if _is_json_safe(value):
        return thaw(freeze(value))
    raise error(describe_non_json(value, what))


def describe_non_json(value: Any, what: str) -> str:
    """An error message naming the first place in ``value`` that is not JSON."""
    found = find_non_json(value, [what])
    if found is None:
        return f"{what} is not JSON; store only dict, list, str, int, float, bool or None"
    path, kind = found
    return f"{json_path(path)} is not JSON ({kind}); store only dict, list, str, int, float, bool or None"


def find_non_json(value: Any, path: list[Any]) -> tuple[list[Any], str] | None:
    """Return the path and a description of the first value in ``value`` that is not JSON.

    Circular references and nesting too deep to process are reported too; never raises.
    """
    try:
        return _find(value, path, set())
    except RecursionError:
        return path, "nested too deeply"


def _find(value: Any, path: list[Any], active: set[int]) -> tuple[list[Any], str] | None:
    tv = type(value)
    if tv in _SCALARS:
        return None
    if tv is float:
        return None if _isfinite(value) else (path, "non-finite float")
    if tv is dict or tv is list:
        if id(value) in active:
            return path, "circular reference"
        active.add(id(value))
        try:
            if tv is dict:
                for key, item in value.items():
                    if type(key) is not str:
                        return path + [key], f"non-string key {type(key).__name__}"
                    found = _find(item, path + [key], active)
                    if found:
                        return found
            else:
                for i, item in enumerate(value):
                    found = _find(item, path + [i], active)
                    if found:
                        return found
        finally:
            active.discard(id(value))
        return None
    return path, type(value).__name__


def ensure_json(value: Any, what: str, error: type[Exception] = StateError) -> Any:
    """Return a deep JSON copy of ``value`` or raise ``error`` naming the first bad path."""
    try:
        return copy_json(value)
    except (TypeError, ValueError, RecursionError):
        pass
    raise error(describe_non_json(value, what))


def is_envelope(value: Any) -> bool:
    """True for ``{"$b64": <str>}`` (the content is not checked)."""
    return type(value) is dict and len(value) == 1 and type(value.get(BYTES_KEY)) is str


def decode_base64(text: str) -> bytes:
    """Decode canonical base64 (padded, no whitespace); ``ValueError`` otherwise.

    Canonical means re-encoding gives the same text, so a decoded envelope always encodes back
    to exactly what was loaded.
    """
    try:
        raw = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError(f"invalid base64 in a {BYTES_KEY!r} envelope") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"non-canonical base64 in a {BYTES_KEY!r} envelope") from None
    return raw


def decode_bytes(value: Any) -> bytes | None:
    """Decode a bytes envelope (or pass bytes through); ``None`` if it is neither.

    An envelope whose base64 is invalid raises ``ValueError`` (never a silent ``None``).
    """
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if is_envelope(value):
        return decode_base64(value[BYTES_KEY])
    return None
