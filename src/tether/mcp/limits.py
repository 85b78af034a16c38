"""The cap on the size of an MCP tool result (``max_result_bytes``).

A tool result goes into the conversation, the run store and every later model request, so a
server answering a call with tens of megabytes would cost minutes and hundreds of megabytes
before the model even sees it. A result over the cap becomes an error result naming the tool
and the cap instead. What is bounded depends on the transport:

- **Streamable HTTP**: the response to a ``tools/call`` request (and a resumption of it: a GET
  with ``Last-Event-ID``) is read only up to the cap, then the connection is closed: the client
  never holds more than the cap plus one network chunk of it. The client asks for uncompressed
  responses (``Accept-Encoding: identity``), so the bytes counted are the payload's.
- **stdio**: the MCP SDK reads each message (one JSON line) whole before Tether sees it, so an
  oversized result is read and parsed, then dropped: it is not converted, stored, or sent to
  the model.
- **Every transport**: the parsed result is measured (:func:`result_size`) before it is
  converted, which also catches what the HTTP bound does not see (a server that compresses
  anyway, a standalone event stream).

The HTTP bound lives in :mod:`tether.mcp.http_limit` (it imports the SDK's HTTP client).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024
"""The default ``max_result_bytes`` of an MCP tool source: 10 MiB (millions of tokens of text,
or a large screenshot)."""


@dataclass
class ResponseRead:
    """What the HTTP transport read of one tool call's response.

    Attributes:
        read: Bytes read so far.
        dropped: The response passed ``max_result_bytes`` and the rest was not read.
        event_limit: For an event stream, the largest event the SDK's HTTP client accepts
            (``httpx2.EventSource``'s ``max_event_size``): a larger one ends the stream, and the
            SDK reports only that it ended.
    """

    read: int = 0
    dropped: bool = False
    event_limit: int | None = None


class ResponseReads:
    """The :class:`ResponseRead` of each tool call's HTTP response, by idempotency key.

    Shared by a source's transport (which writes) and its calls (which take their own entry):
    the SDK turns a response cut short into a generic protocol error, and this says why.
    """

    def __init__(self) -> None:
        self._reads: dict[str, ResponseRead] = {}

    def open(self, key: str, event_limit: int | None) -> ResponseRead:
        """A fresh record for the response to the call ``key`` (replacing an earlier attempt's)."""
        record = self._reads[key] = ResponseRead(event_limit=event_limit)
        return record

    def pop(self, key: str) -> ResponseRead | None:
        return self._reads.pop(key, None)


def result_size(result: Any) -> int:
    """The size of an MCP ``CallToolResult`` as data: the UTF-8 bytes of its texts, the base64
    characters of its images, audio and blobs, and ``structuredContent`` as compact JSON (string
    escapes not counted). Measured without copying the payload."""
    structured = getattr(result, "structured_content", None)
    size = 0 if structured is None else _json_size(structured)
    for block in getattr(result, "content", None) or []:
        for holder in (block, getattr(block, "resource", None)):
            for field in ("text", "data", "blob"):
                value = getattr(holder, field, None)
                if isinstance(value, str):
                    size += _utf8_len(value)
    return size


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _json_size(value: Any) -> int:
    """Compact JSON length of parsed JSON data, walked without recursion (any depth)."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += _utf8_len(item) + 2
        elif isinstance(item, dict):
            size += 2 + max(len(item) - 1, 0) + len(item)  # braces, commas, colons
            for key, child in item.items():
                size += _utf8_len(str(key)) + 2
                stack.append(child)
        elif isinstance(item, list | tuple):
            size += 2 + max(len(item) - 1, 0)
            stack.extend(item)
        elif item is None or isinstance(item, bool | int | float):
            size += len(json.dumps(item))
        else:  # not JSON data (a server's structuredContent is parsed JSON): its text
            size += _utf8_len(str(item))
    return size


__all__ = ["DEFAULT_MAX_RESULT_BYTES", "ResponseRead", "ResponseReads", "result_size"]
