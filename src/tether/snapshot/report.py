"""Where a snapshot's bytes go: serialized size per field and the largest messages."""

from __future__ import annotations

import json
from typing import Any

from .._json import json_copy


def size_report(data: dict[str, Any], app_data: dict[str, Any], *, top: int = 5) -> dict[str, Any]:
    """Bytes per field (as compact UTF-8 JSON) and the ``top`` largest messages.

    Returns ``{"total_bytes", "fields": {name: bytes}, "message_count",
    "largest_messages": [{"index", "role", "bytes"}]}``; ``fields`` includes ``app_data``.
    """

    def size(value: Any) -> int:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=json_copy).encode())

    fields = {name: size(value) for name, value in data.items()}
    fields["app_data"] = size(app_data)
    messages = data.get("messages")
    if not isinstance(messages, list):
        messages = []
    sized = sorted(
        ((size(message), index, message.get("role", "?") if isinstance(message, dict) else "?") for index, message in enumerate(messages)),
        key=lambda item: (-item[0], item[1]),
    )[: max(top, 0)]
    return {
        "total_bytes": sum(fields.values()),
        "fields": fields,
        "message_count": len(messages),
        "largest_messages": [{"index": i, "role": role, "bytes": b} for b, i, role in sized],
    }
