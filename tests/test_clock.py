"""`tether._clock.now_iso`: the one timestamp format Tether writes."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tether import _clock


def test_a_stamp_is_iso_8601_utc_with_microseconds_and_z() -> None:
    before = datetime.now(UTC)
    stamp = _clock.now_iso()
    after = datetime.now(UTC)
    assert len(stamp) == len("2026-01-01T12:00:00.000000Z") and stamp.endswith("Z")
    parsed = datetime.fromisoformat(stamp)
    assert parsed.tzinfo is not None and parsed.utcoffset() == timedelta(0)
    assert before - timedelta(milliseconds=1) <= parsed <= after + timedelta(milliseconds=1)


@pytest.mark.parametrize("ns", [0, 999_999_999, 1_800_000_000_123_456_789, 1_800_000_001_000_000_000, 946_684_799_999_999_000])
def test_the_cached_second_formats_exactly_as_datetime_does(monkeypatch: pytest.MonkeyPatch, ns: int) -> None:
    """Across second boundaries (the seconds' text is cached), a stamp equals what
    ``datetime.isoformat`` gives for the same instant, truncated to the microsecond."""
    monkeypatch.setattr(_clock, "_second", (-1, ""))
    for offset in (0, 1_000, 999_999_000, 1_000_000_000):
        monkeypatch.setattr(time, "time_ns", lambda value=ns + offset: value)
        expected = datetime.fromtimestamp((ns + offset) // 1000 / 1_000_000, UTC).replace(microsecond=(ns + offset) // 1000 % 1_000_000)
        assert _clock.now_iso() == expected.isoformat(timespec="microseconds").replace("+00:00", "Z")
