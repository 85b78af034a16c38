"""Compressed step rows (``z1:``): raw deflate with a frozen preset dictionary of typical step rows."""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

STEP_DICTIONARY_V1 = (
    b'{"step":1,"position":"turn_start","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","head":{"schema_version":3,'
    b'"rev":1,"start_seq":0,"next_seq":1,"cursor":{"phase":"model","cycle_index":0,"invocation_cycles":0,"invocation_tokens":0,'
    b'"results":{},"started":[],"pending_pause":null,"structured_output":null,"corrective_turn_used":false,"stop_reason":null},'
    b'"metrics":{"cycle_count":0,"tool_call_count":0,"model_call_count":0,"usage":{"input_tokens":0,"output_tokens":0,'
    b'"total_tokens":0},"model_latency_ms":0.0,"tools":{}},"model_state":{},"state":{},"conversation_manager_state":{},'
    b'"interrupt_state":{},"system_prompt":null,"status":"running","turns":1,"steps":1,"created_at":"2026-01-01T00:00:00.000000Z",'
    b'"updated_at":"2026-01-01T00:00:00.000000Z"}}'
    b'{"step":3,"position":"after_tools","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","tools":[{"toolUseId":'
    b'"tooluse_","name":"","error":false,"duration_ms":0.1,"in_doubt":false}],"delta":{"rev":[4],"next_seq":[3],"cursor":'
    b'{"phase":["model"],"cycle_index":[1]},"metrics":{"tool_call_count":[1],"tools":{"":{"calls":[1],"errors":[0],'
    b'"total_duration_ms":[0.1]}}},"status":["finished"],"stop_reason":["end_turn"]}}'
    b'{"step":2,"position":"after_model","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","delta":{"rev":[2],'
    b'"next_seq":[2],"cursor":{"phase":["tools"],"invocation_cycles":[1],"invocation_tokens":[15]},"metrics":{"cycle_count":[1],'
    b'"model_call_count":[1],"usage":{"input_tokens":[10],"output_tokens":[5],"total_tokens":[15]},"model_latency_ms":[0.1]},'
    b'"model_state":{}}}'
)
"""The preset dictionary of compressed step rows (``z1:``): typical step rows, so that a row of
a few hundred characters compresses to about a quarter. Frozen: rows written with it must stay
readable, so a better dictionary is a new prefix (``z2:``), never an edit of this one."""
_ZIPPED = "z1:"
_ZIPPED_BYTES = b"z1:"
_MAX_STEP_TEXT = 64 * 1024 * 1024
"""The largest step row text a compressed row may inflate to (a bound against a crafted row)."""


_PRIMED = zlib.compressobj(6, zlib.DEFLATED, -11, 2, zlib.Z_DEFAULT_STRATEGY, STEP_DICTIONARY_V1)
"""A compressor primed with :data:`STEP_DICTIONARY_V1`, never used itself: :func:`zip_step`
compresses with a copy of it, which deflates exactly as a new one would (the copy is the whole
deflate state) and costs under 1 µs where setting one up (the dictionary hashed in) costs about
4 µs, twice per save point. A 2 KiB window covers the dictionary and a row, and small tables
are quick to copy."""


def zip_step(text: str) -> bytes | str:
    """A step row's JSON text compressed: ``b"z1:"`` and the raw deflate of the text with
    :data:`STEP_DICTIONARY_V1` (a store that keeps only text stores :func:`zip_text` of it), or
    ``text`` itself when that is not shorter."""
    packer = _PRIMED.copy()
    zipped = _ZIPPED_BYTES + packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()
    return zipped if len(zipped) < len(text) else text


def zip_text(row: bytes | str) -> str:
    """A step row as text: a compressed row as ``z1:<base64>`` (for stores of text columns)."""
    return row if isinstance(row, str) else _ZIPPED + base64.b64encode(row[len(_ZIPPED_BYTES) :]).decode("ascii")


def is_zipped(row: Any) -> bool:
    """True for a compressed step row, as bytes or as text."""
    return (isinstance(row, bytes) and row.startswith(_ZIPPED_BYTES)) or (isinstance(row, str) and row.startswith(_ZIPPED))


def unzip_step(row: bytes | str) -> str:
    """The JSON text of a step row written by :func:`zip_step` (ValueError when it is damaged)."""
    try:
        if isinstance(row, bytes):
            data = row[len(_ZIPPED_BYTES) :]
        else:
            data = base64.b64decode(row[len(_ZIPPED) :], validate=True)
        inflater = zlib.decompressobj(-15, STEP_DICTIONARY_V1)
        out = inflater.decompress(data, _MAX_STEP_TEXT) + inflater.flush()
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"a compressed step row does not inflate ({exc})") from None
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("a compressed step row is truncated or inflates past its bound")
    return out.decode("utf-8", "surrogatepass")
