"""A cheap estimate of a request's input tokens, made before the call.

Providers count tokens with their own tokenizers, which Tether does not ship; the budget only
needs to know, before a call is made, whether its input could fit. The estimate is the length of
the value's compact JSON text divided by :data:`CHARS_PER_TOKEN` (about four characters per
token for English text and code with the common BPE tokenizers), rounded up; bytes count as their
base64 length. It is rough on purpose: O(size of the value), no dependency, the same everywhere.

The loop estimates a whole request once (system prompt, tool specs, conversation) and then only
what each step adds: after a model call the next request is the call's reported input tokens plus
its reported output tokens plus the estimate of the messages appended since (tool results, a new
prompt). So the per-cycle cost stays flat however long the run gets.
"""

from __future__ import annotations

import base64
import json
from typing import Any

CHARS_PER_TOKEN = 4
"""Characters of compact JSON text counted as one token."""


def _bytes_text(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def estimate_tokens(value: Any) -> int:
    """Estimated tokens of ``value`` (messages, a system prompt, tool specs: any JSON-like data).

    Args:
        value: The data to estimate; bytes count as their base64 text, other non-JSON values as
            their ``str``.
    """
    if value is None:
        return 0
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_bytes_text)
    return -(-len(text) // CHARS_PER_TOKEN)


__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]
