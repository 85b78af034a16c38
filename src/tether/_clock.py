"""The one wall-clock timestamp format Tether writes.

Snapshots (``created_at``), durable heads (``created_at``/``updated_at``) and step rows
(``created_at``) all stamp times with :func:`now_iso`, so every timestamp Tether writes reads
the same way. The snapshot's ``created_at`` is a wire format shared with Strands snapshots
(pinned by the golden snapshot tests), which is why the format is ISO 8601 in UTC with
microseconds and a ``Z`` suffix. The loop core never reads a clock; only these edges do.
"""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    """The current UTC time as ISO 8601 with microseconds and a ``Z`` suffix.

    For example ``2026-01-01T12:00:00.000000Z``; :meth:`datetime.fromisoformat` parses it back
    (as an aware UTC time), and two stamps of the same format compare in time order as strings.
    """
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
