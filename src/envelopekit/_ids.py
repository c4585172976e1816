"""Ids and clocks: every fresh id and timestamp the SDK mints comes from here."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import uuid_utils

__all__ = [
    "now_ms",
    "rfc3339",
    "span_id",
    "trace_id",
    "uuid4",
    "uuid7",
]


def uuid4() -> str:
    """A fresh random UUID (version 4), lowercase and hyphenated."""
    return str(uuid_utils.uuid4())


def uuid7() -> str:
    """A fresh time-ordered UUID (version 7), lowercase and hyphenated."""
    return str(uuid_utils.uuid7())


def now_ms() -> int:
    """The current time as Unix epoch milliseconds, UTC (floored, as the Python reference)."""
    return time.time_ns() // 1_000_000


def rfc3339(moment: datetime | None = None, *, digits: int = 3) -> str:
    """An RFC 3339 UTC timestamp with a ``Z`` suffix, ``digits`` fractional digits (0-6).

    Args:
        moment: an aware datetime (converted to UTC); ``None`` means now.
        digits: how many fractional-second digits to write.

    Raises:
        ValueError: for a naive datetime, one outside years 0001-9999 in UTC, or ``digits``
            outside 0-6.
    """
    if not 0 <= digits <= 6:
        raise ValueError("digits must be between 0 and 6")
    if moment is None:
        moment = datetime.now(timezone.utc)
    elif moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("a naive datetime has no time zone; pass an aware one")
    try:
        moment = moment.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(f"{moment.isoformat()} is outside years 0001-9999 in UTC") from None
    # Not strftime: glibc's %Y does not zero-pad years below 1000.
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    if digits:
        text += "." + f"{moment.microsecond:06d}"[:digits]
    return text + "Z"


def trace_id() -> str:
    """A W3C trace-context trace id: 32 lowercase hex digits, never all zeros."""
    while True:
        value = uuid_utils.uuid4().hex
        if value.strip("0"):
            return value


def span_id() -> str:
    """A W3C trace-context span (parent) id: 16 lowercase hex digits, never all zeros."""
    while True:
        value = uuid_utils.uuid4().hex[:16]
        if value.strip("0"):
            return value
