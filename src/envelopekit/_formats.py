"""String formats shared by the specs, kept as the wire text (lossless) and checked in Rust.

A format is a ``str`` constrained by a regular expression, so ``"7B3F…"`` is accepted and
re-emitted exactly as sent, where pydantic's ``UUID`` or ``datetime`` types would rewrite it.
Each type carries a :class:`Format` marker naming its keyword: the violation mapper reads it
from the field's type, and reports a mismatch as that ``format`` keyword
(``<schema>.format.uuid``), not as ``pattern``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final, Literal

from pydantic import StringConstraints, WithJsonSchema

__all__ = [
    "DATE_TIME_PATTERN",
    "URI_PATTERN",
    "URI_REFERENCE_PATTERN",
    "UUID_PATTERN",
    "DateTimeStr",
    "Format",
    "UriStr",
    "UuidStr",
]

UUID_PATTERN: Final = (
    r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
)
"""The 8-4-4-4-12 hex form in either case; any version (the strict intersection of the
reference validators: no braces, no ``urn:uuid:``, no bare 32 hex)."""

# The calendar is in the pattern, so a date-time is checked in Rust with no Python call (a call
# per date-time was 3 of the 42 µs of a SOM story-context parse). Rust's regex engine has no
# look-around, so "any year but 0000" and the leap years are spelled out as alternatives.
_YEAR: Final = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_MONTH_DAY: Final = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"  # days 01-28 of every month
    r"|(?:0[13-9]|1[0-2])-(?:29|30)"  # 29 and 30 of every month but February
    r"|(?:0[13578]|1[02])-31)"  # 31 of the seven long months
)
# Divisible by 4 and not by 100 (0004 ... 9996), or by 400 (0400 ... 9600; never 0000).
_LEAP_YEAR: Final = (
    r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
)
_TIME: Final = (
    r"[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)

DATE_TIME_PATTERN: Final = rf"^(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29){_TIME}$"
"""RFC 3339 ``date-time`` as the reference validators agree on it: a real day of the proleptic
Gregorian calendar, years 0001 to 9999; ``T``/``Z`` in either case, an offset with a colon, no
leap second, no trailing newline."""

# RFC 3986's grammar (section 3 and appendix A), rule by rule; no look-around or back-reference,
# so Rust's engine (pydantic-core), ECMA-262 (a schema `pattern`), RE2 and Python read it alike.
_UNRESERVED: Final = r"A-Za-z0-9\-._~"  # inside a character class, as each use below puts it
_SUB_DELIMS: Final = r"!$&'()*+,;="
_PCT: Final = r"%[0-9A-Fa-f]{2}"
_PCHAR: Final = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_H16: Final = r"[0-9A-Fa-f]{1,4}"
_OCTET: Final = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_LS32: Final = rf"(?:{_H16}:{_H16}|{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET})"
_IPV6_FORMS: Final = (  # RFC 3986's nine, by where "::" stands
    rf"(?:{_H16}:){{6}}{_LS32}",
    rf"::(?:{_H16}:){{5}}{_LS32}",
    rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
    rf"(?:(?:{_H16}:)?{_H16})?::(?:{_H16}:){{3}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
)
_IPV6: Final = f"(?:{'|'.join(_IPV6_FORMS)})"
_IP_LITERAL: Final = rf"\[(?:{_IPV6}|[Vv][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
# A dotted IPv4 address is also a reg-name, so `host` needs no branch of its own for one.
_AUTHORITY: Final = (
    rf"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?"
    rf"(?:{_IP_LITERAL}|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)(?::[0-9]*)?"
)
# path-empty is RFC 3986's too, but ajv-formats' `uri` (the SOM bus's) refuses `x:` and `x:?q`.
_HIER_PART: Final = (
    rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*"  # "//" authority path-abempty
    rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"  # path-absolute
    rf"|{_PCHAR}+(?:/{_PCHAR}*)*)"  # path-rootless
)
_QUERY: Final = rf"(?:{_PCHAR}|[/?])*"  # a fragment's characters are the same

URI_PATTERN: Final = rf"^[A-Za-z][A-Za-z0-9+.\-]*:{_HIER_PART}(?:\?{_QUERY})?(?:#{_QUERY})?$"
"""An RFC 3986 URI (``scheme ":" hier-part ["?" query] ["#" fragment]``, a scheme required), by
its whole grammar: the authority's user, host (IP literals included) and port, each path form
but the empty one, ASCII only and ``%`` only as a percent-encoding. The strict intersection of
the ``uri`` format checkers: a string jsonschema's (on rfc3987), jsonschema-rs's or
ajv-formats' refuses is refused, one all of them accept is accepted (``tests/test_formats.py``).
The official Python toolchain asserts nothing for ``uri`` (som.md §1.3, §14)."""

# A relative reference's first segment holds no ':' (it would read as a scheme).
_SEGMENT_NZ_NC: Final = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+"
_RELATIVE_PART: Final = (
    rf"(?://{_AUTHORITY}(?:/{_PCHAR}*)*"  # "//" authority path-abempty
    rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"  # path-absolute
    rf"|{_SEGMENT_NZ_NC}(?:/{_PCHAR}*)*"  # path-noscheme
    r"|)"  # path-empty
)

URI_REFERENCE_PATTERN: Final = (
    rf"^(?:[A-Za-z][A-Za-z0-9+.\-]*:(?:{_HIER_PART})?|{_RELATIVE_PART})"
    rf"(?:\?{_QUERY})?(?:#{_QUERY})?$"
)
"""An RFC 3986 URI-reference (a URI, or a relative reference: ``//host/p``, ``/p``, ``p``,
``?q``, ``#f``, the empty string), by its whole grammar as :data:`URI_PATTERN`; a URI's empty
path is allowed here, as RFC 3986 allows it (``x:``)."""


@dataclass(frozen=True, slots=True)
class Format:
    """The ``format`` keyword a pattern-checked string stands for, and what a mismatch says.

    Metadata of the ``Annotated`` type only: pydantic ignores it, the violation mapper finds it
    at the end of an error's location and reports ``string_pattern_mismatch`` as ``keyword``.
    """

    keyword: Literal["format.uuid", "format.date-time", "format.uri"]
    message: str


UuidStr = Annotated[
    str,
    StringConstraints(strict=True, pattern=UUID_PATTERN),
    WithJsonSchema({"type": "string", "format": "uuid", "pattern": UUID_PATTERN}),
    Format("format.uuid", "Not a UUID in its 8-4-4-4-12 hexadecimal form."),
]
"""A UUID in its canonical text form, kept as sent."""

DateTimeStr = Annotated[
    str,
    StringConstraints(strict=True, pattern=DATE_TIME_PATTERN),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN}),
    Format(
        "format.date-time",
        "Not an RFC 3339 date-time on a real calendar day (YYYY-MM-DDThh:mm:ss[.f](Z|±hh:mm)).",
    ),
]
"""An RFC 3339 date-time, kept as sent (``"…00.000000Z"`` stays byte for byte)."""

UriStr = Annotated[
    str,
    StringConstraints(strict=True, pattern=URI_PATTERN),
    # The pattern beside the format, as uuid's and date-time's: where a validator reads formats
    # as annotations (the 2020-12 default), it refuses what the model refuses.
    WithJsonSchema({"type": "string", "format": "uri", "pattern": URI_PATTERN}),
    Format("format.uri", "Not an absolute URI (scheme:…, ASCII, % only as a percent-encoding)."),
]
"""An RFC 3986 absolute URI, kept as sent."""
