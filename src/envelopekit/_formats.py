"""String formats shared by the specs, kept as the wire text (lossless) and checked in Rust.

A format is a ``str`` constrained by a regular expression, so ``"7B3F…"`` is accepted and
re-emitted exactly as sent, where pydantic's ``UUID`` or ``datetime`` types would rewrite it.
The violation mapper knows these patterns and reports a mismatch as the JSON Schema ``format``
keyword it stands for (``<schema>.format.uuid``), not as ``pattern``.
"""

from __future__ import annotations

import calendar
from typing import Annotated, Final

from pydantic import AfterValidator, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

__all__ = [
    "DATE_TIME_PATTERN",
    "FORMAT_BY_PATTERN",
    "UUID_PATTERN",
    "DateTimeStr",
    "UuidStr",
]

UUID_PATTERN: Final = (
    r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
)
"""The 8-4-4-4-12 hex form in either case; any version (the strict intersection of the
reference validators: no braces, no ``urn:uuid:``, no bare 32 hex)."""

DATE_TIME_PATTERN: Final = (
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-[0-9]{2}[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)
"""RFC 3339 ``date-time`` as the reference validators agree on it: ``T``/``Z`` in either case,
an offset with a colon, no leap second, no trailing newline. The day is checked separately."""

FORMAT_BY_PATTERN: Final[dict[str, str]] = {
    UUID_PATTERN: "format.uuid",
    DATE_TIME_PATTERN: "format.date-time",
}
"""Pattern -> the JSON Schema keyword a mismatch of it is reported as."""


# The last day of each month as two digits (February's 29 is checked against the year).
_LAST_DAY: Final = ("", "31", "29", "31", "30", "31", "30", "31", "31", "30", "31", "30", "31")


def _real_day(value: str) -> str:
    # Runs after DATE_TIME_PATTERN matched: ASCII digits, month 01-12. Days 01-28 exist in
    # every month of every year but 0000, so the common case is two string comparisons.
    day = value[8:10]
    if "01" <= day <= "28" and value[0:4] != "0000":
        return value
    year = int(value[0:4])
    month = int(value[5:7])
    if (
        year != 0
        and "01" <= day <= _LAST_DAY[month]
        and (day != "29" or month != 2 or calendar.isleap(year))
    ):
        return value
    raise PydanticCustomError(
        "format.date-time", "'{value}' is not a real calendar date", {"value": value}
    )


UuidStr = Annotated[
    str,
    StringConstraints(strict=True, pattern=UUID_PATTERN),
    WithJsonSchema({"type": "string", "format": "uuid", "pattern": UUID_PATTERN}),
]
"""A UUID in its canonical text form, kept as sent."""

DateTimeStr = Annotated[
    str,
    StringConstraints(strict=True, pattern=DATE_TIME_PATTERN),
    AfterValidator(_real_day),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN}),
]
"""An RFC 3339 date-time, kept as sent (``"…00.000000Z"`` stays byte for byte)."""
