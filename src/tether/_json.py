"""JSON discipline: validation with named paths, fast deep copies, and the bytes envelope.

Everything Tether persists is JSON. In memory, messages may hold ``bytes`` (image and document
sources, redacted reasoning); on the way out they become ``{"$b64": "<base64>"}`` envelopes and
on the way back in they are decoded at the places where bytes are allowed.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .errors import StateError, json_path

BYTES_KEY = "$b64"


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

    Raises ``TypeError``/``ValueError`` for anything else that is not JSON; callers that need a
    named path call :func:`ensure_json` first or on failure.
    """
    return _decode(_encoder.encode(value))


def copy_json(value: Any) -> Any:
    """Deep-copy pure JSON data (a C-speed round trip; no bytes allowed)."""
    return _decode(_plain_encoder.encode(value))


def find_non_json(value: Any, path: list[Any]) -> tuple[list[Any], str] | None:
    """Return the path and type name of the first value in ``value`` that is not JSON."""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return path, "non-finite float"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return path + [key], f"non-string key {type(key).__name__}"
            found = find_non_json(item, path + [key])
            if found:
                return found
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = find_non_json(item, path + [i])
            if found:
                return found
        return None
    return path, type(value).__name__


def ensure_json(value: Any, what: str, error: type[Exception] = StateError) -> Any:
    """Return a deep JSON copy of ``value`` or raise ``error`` naming the first bad path."""
    try:
        return copy_json(value)
    except (TypeError, ValueError, RecursionError):
        pass
    found = find_non_json(value, [what])
    if found is None:  # e.g. a circular reference
        raise error(f"{what} is not JSON (circular reference?); store only JSON values")
    path, kind = found
    raise error(f"{json_path(path)} is not JSON ({kind}); store only dict, list, str, int, float, bool or None")


def decode_bytes(value: Any) -> Any:
    """Decode a bytes envelope (or pass bytes through); ``None`` if it is neither."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict) and len(value) == 1:
        raw = value.get(BYTES_KEY)
        if isinstance(raw, str):
            try:
                return base64.b64decode(raw.encode("ascii"), validate=True)
            except (ValueError, UnicodeEncodeError):
                return None
    return None
