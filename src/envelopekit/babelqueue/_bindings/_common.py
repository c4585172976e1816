"""What the bindings share: the schema-version gate on a text value, and counter parsing."""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

from ... import rules
from ..._violations import Violation, violation
from .._envelope import BabelEnvelope
from .._meta import SCHEMA_VERSION
from .._urn import is_blank

__all__ = ["E", "max_with_count", "parse_count", "rejected", "text_gate", "with_attempts"]

E = TypeVar("E", bound=BabelEnvelope[Any])

# A counter is a run of ASCII digits only: no sign, no whitespace, no Unicode digits (which
# Python's int() would accept), within signed 32 bits like the Java and .NET consumers.
_COUNT = re.compile(r"[0-9]+")
_COUNT_MAX: Final = 2**31 - 1
_SUPPORTED: Final = str(SCHEMA_VERSION)


def parse_count(raw: object) -> int | None:
    """A broker counter as an int, or ``None`` when absent or not a plain non-negative integer."""
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("ascii")
        except UnicodeDecodeError:
            return None
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if 0 <= raw <= _COUNT_MAX else None
    if isinstance(raw, str) and _COUNT.fullmatch(raw):
        value = int(raw)
        return value if value <= _COUNT_MAX else None
    return None


def max_with_count(body_attempts: int, raw_count: object, *, one_based: bool) -> int:
    """``max(body, count)`` for a broker's 0-based delivery count (``count - 1`` for a 1-based one).

    An absent or garbage count leaves the body's ``attempts``: it is never lowered.
    """
    count = parse_count(raw_count)
    if count is None:
        return body_attempts
    return max(body_attempts, count - 1 if one_based else count)


def text_gate(raw: object, where: str) -> Violation | None:
    """The gate on a text-valued ``schema_version`` property (``None`` means decode).

    Absent (``None``) or blank (empty or only ASCII whitespace; never a Unicode-aware strip)
    decodes; exactly ``"1"`` decodes; anything else, compared as is, is rejected.
    """
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return rejected(where, raw)
    if isinstance(raw, str) and (raw == _SUPPORTED or is_blank(raw)):
        return None
    return rejected(where, raw)


def rejected(where: str, raw: object) -> Violation:
    """The violation for a gated message: rejected without decoding (poison / DLQ path)."""
    return violation(
        rules.TRANSPORT_SCHEMA_VERSION_UNSUPPORTED,
        "",
        f"{where} is {raw!r}: only {_SUPPORTED!r} (or an absent or blank value) is decoded; "
        "the message is rejected without decoding its body.",
    )


def with_attempts(envelope: E, attempts: int) -> E:
    """``envelope`` with top-level ``attempts`` set (the same object when unchanged)."""
    if attempts == envelope.attempts:
        return envelope
    return envelope.model_copy(update={"attempts": attempts})
