"""The CloudEvents 1.0 type system, as far as this mapping writes and reads it.

Canonical string forms (spec.md "Type System"), the attribute-name rule, RFC 3339 instants
compared exactly (any number of fraction digits), and the three bindings' header-value codecs:
HTTP percent-encoding (http-protocol-binding.md §3.1.3.2), Kafka UTF-8 bytes, AMQP values.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone
from typing import Final
from urllib.parse import quote, unquote_to_bytes

from .._formats import DATE_TIME_PATTERN, URI_PATTERN, URI_REFERENCE_PATTERN

__all__ = [
    "INT32",
    "MAX_NAME_LENGTH",
    "Instant",
    "Millis",
    "bad_string",
    "datetime_instant",
    "format_millis",
    "http_decode",
    "http_encode",
    "instant_of",
    "is_attribute_name",
    "is_int32",
    "is_uri",
    "is_uri_reference",
    "millis_instant",
    "to_millis",
]

SPECVERSION: Final = "1.0"
MAX_NAME_LENGTH: Final = 20
"""Attribute names SHOULD NOT be longer (spec.md, "Attribute Naming Convention"): an extension
is never written with a longer name; one is read."""
INT32: Final = range(-(2**31), 2**31)
"""The CloudEvents Integer: signed 32-bit."""


def is_int32(value: int) -> bool:
    """Whether ``value`` is a CloudEvents Integer (signed 32-bit).

    Compared with the bounds: ``value in INT32`` is a constant-time test for an ``int`` only,
    and walks the range item by item for a subclass (an ``IntEnum`` member: about a minute).
    """
    return INT32.start <= value < INT32.stop


_NAME: Final = re.compile(r"[a-z0-9]+")
# CloudEvents String: no C0/C1 control characters, no surrogates, no noncharacters.
_NOT_STRING: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
    + "".join(chr(plane * 0x10000 + low) for plane in range(17) for low in (0xFFFE, 0xFFFF))
    + "]"
)
_DATE_TIME: Final = re.compile(DATE_TIME_PATTERN)
_URI: Final = re.compile(URI_PATTERN)
_URI_REFERENCE: Final = re.compile(URI_REFERENCE_PATTERN)
_PARTS: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
# Printable ASCII but space, '"' and '%' passes through HTTP header encoding unchanged.
_HTTP_SAFE: Final = "".join(
    chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"%' and not chr(c).isalnum()
)
_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_QUOTED_PAIR: Final = re.compile(r"\\(.)", re.DOTALL)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
MAX_MILLIS: Final = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z: the last instant RFC 3339's four-digit year can write."""

Instant = tuple[int, str]
"""An instant, exactly: Unix seconds and the fraction's digits without trailing zeros."""


def is_attribute_name(name: str) -> bool:
    """Whether ``name`` is a CloudEvents attribute name: lowercase ``a-z`` and ``0-9`` only."""
    return _NAME.fullmatch(name) is not None


def bad_string(value: str) -> str | None:
    """Why ``value`` is not a CloudEvents String, or ``None`` when it is one."""
    found = _NOT_STRING.search(value)
    if found is None:
        return None
    return f"holds the character U+{ord(found.group()):04X}, which a CloudEvents String may not"


def is_uri_reference(value: str) -> bool:
    """Whether ``value`` is a non-empty RFC 3986 URI-reference (the type of ``source``)."""
    return bool(value) and _URI_REFERENCE.fullmatch(value) is not None


def is_uri(value: str) -> bool:
    """Whether ``value`` is an absolute RFC 3986 URI (the type of ``dataschema``)."""
    return _URI.fullmatch(value) is not None


def instant_of(value: str) -> Instant | None:
    """The instant an RFC 3339 date-time names, or ``None`` when it is not one."""
    if _DATE_TIME.fullmatch(value) is None:
        return None
    found = _PARTS.fullmatch(value)
    if found is None:  # pragma: no cover - the pattern above admits only this shape
        return None
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if found.group(8):
        offset = int(found.group(9)) * 3600 + int(found.group(10)) * 60
        seconds -= offset if found.group(8) == "+" else -offset
    return seconds, (found.group(7) or "").rstrip("0")


class Millis(tuple[int, str]):
    """An instant read from an AMQP timestamp, which holds milliseconds and no finer."""

    __slots__ = ()


def millis_instant(millis: int) -> Millis:
    """The instant of a Unix-milliseconds time (an AMQP timestamp)."""
    return Millis((millis // 1000, f"{millis % 1000:03d}".rstrip("0")))


def to_millis(instant: Instant) -> Instant:
    """``instant`` truncated to the millisecond, as an AMQP timestamp would carry it."""
    return instant[0], instant[1][:3].rstrip("0")


def datetime_instant(value: datetime) -> Instant:
    """The instant of an aware ``datetime`` (an AMQP library's timestamp)."""
    delta = value - _EPOCH
    seconds = delta.days * 86400 + delta.seconds
    return seconds, f"{delta.microseconds:06d}".rstrip("0")


def format_millis(millis: int) -> str:
    """Unix milliseconds as RFC 3339 in UTC with millisecond precision: ``…T16:41:00.123Z``.

    ``millis`` must be within ``0 .. MAX_MILLIS``.
    """
    moment = _EPOCH + timedelta(milliseconds=millis)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def http_encode(value: str) -> str:
    """A String as an HTTP header value (http-protocol-binding.md §3.1.3.2).

    Space, ``"``, ``%`` and everything outside printable ASCII are percent-encoded from UTF-8,
    in upper-case hex.
    """
    return quote(value, safe=_HTTP_SAFE, encoding="utf-8", errors="strict")


def http_decode(value: str) -> str | None:
    """An HTTP header value as its String, or ``None`` when it encodes none.

    A double-quoted value is unquoted first (older senders), then one round of percent-decoding
    runs; bytes that are not UTF-8 (overlong forms included) and a ``%`` that starts no escape
    are refused.
    """
    value = value.strip(" \t")
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        value = _QUOTED_PAIR.sub(r"\1", value[1:-1])
    if _PERCENT.search(value):
        return None
    try:
        return unquote_to_bytes(value).decode("utf-8")
    except UnicodeError:  # bytes that are not UTF-8, or a str holding a lone surrogate
        return None
