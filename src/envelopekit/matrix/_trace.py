"""W3C Trace Context ids as Matrix carries them in ``traceId``, ``spanId`` and ``parentSpanId``.

The schemas type the three fields as plain strings, so envelopekit accepts any string on input
(matrix.md §14.5) and reports a non-W3C id only as a lint warning. Ids the SDK mints, and ids
a producer passes to :meth:`MxRequest.create`, must be W3C: exactly 32 (trace) or 16 (span)
lowercase hex digits, not all zeros (W3C Trace Context, ``trace-id`` and ``parent-id``).
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, StringConstraints
from typing_extensions import Never

from .. import rules
from .._errors import ProducerError
from .._ids import span_id, trace_id
from .._violations import Violation, rule_error, shown, violation

__all__ = [
    "SPAN_ID_PATTERN",
    "TRACE_ID_PATTERN",
    "SpanId",
    "TraceId",
    "is_span_id",
    "is_trace_id",
    "new_span_id",
    "new_trace_id",
    "require_span_id",
    "require_trace_id",
    "trace_warnings",
]

TRACE_ID_PATTERN: Final = r"^[0-9a-f]{32}$"
"""A W3C trace-id: 16 bytes as 32 lowercase hex digits (all zeros is also invalid)."""
SPAN_ID_PATTERN: Final = r"^[0-9a-f]{16}$"
"""A W3C parent-id (span id): 8 bytes as 16 lowercase hex digits (all zeros is also invalid)."""

_TRACE_RE: Final = re.compile(TRACE_ID_PATTERN)
_SPAN_RE: Final = re.compile(SPAN_ID_PATTERN)


def is_trace_id(value: str) -> bool:
    """Whether ``value`` is a valid W3C trace-id."""
    # fullmatch, not match: `$` would let a trailing newline through.
    return _TRACE_RE.fullmatch(value) is not None and value != "0" * 32


def is_span_id(value: str) -> bool:
    """Whether ``value`` is a valid W3C span (parent) id."""
    return _SPAN_RE.fullmatch(value) is not None and value != "0" * 16


def _not_zero(value: str) -> str:
    # The Rust regex engine has no look-ahead, so "not all zeros" is a separate check.
    if not value.strip("0"):
        raise rule_error("pattern", "an all-zero id is invalid in W3C Trace Context")
    return value


TraceId = Annotated[
    str, StringConstraints(strict=True, pattern=TRACE_ID_PATTERN), AfterValidator(_not_zero)
]
"""A string that must be a W3C trace-id (for models that want to insist on one)."""

SpanId = Annotated[
    str, StringConstraints(strict=True, pattern=SPAN_ID_PATTERN), AfterValidator(_not_zero)
]
"""A string that must be a W3C span id (for models that want to insist on one)."""


def new_trace_id() -> str:
    """A fresh W3C trace-id."""
    return trace_id()


def new_span_id() -> str:
    """A fresh W3C span id."""
    return span_id()


# The wire member each producing keyword fills, for the refusal's pointer.
_POINTERS: Final = {"trace_id": "/traceId", "span_id": "/spanId", "parent_span_id": "/parentSpanId"}


def require_trace_id(value: str, name: str = "trace_id") -> str:
    """Return ``value`` if it is a W3C trace-id.

    Raises:
        ProducerError: when it is not (``trace_context.format``); the SDK never emits a
            non-W3C id of its own accord.
    """
    if not isinstance(value, str) or not is_trace_id(value):
        _refuse(name, f"{name} {shown(value)} is not a W3C trace-id (32 lowercase hex, not 0)")
    return value


def require_span_id(value: str, name: str = "span_id") -> str:
    """Return ``value`` if it is a W3C span id.

    Raises:
        ProducerError: when it is not (``trace_context.format``).
    """
    if not isinstance(value, str) or not is_span_id(value):
        _refuse(name, f"{name} {shown(value)} is not a W3C span id (16 lowercase hex, not 0)")
    return value


def _refuse(name: str, message: str) -> Never:
    at = _POINTERS.get(name, "")
    raise ProducerError(message, [violation(rules.TRACE_CONTEXT_FORMAT, at, message)])


def trace_warnings(trace: object, span: object, parent: object) -> list[Violation]:
    """``trace_context.format`` warnings for the present, non-W3C ids of one envelope."""
    found: list[Violation] = []
    for key, value, check, kind in (
        ("traceId", trace, is_trace_id, "trace-id (32 lowercase hex, not all zeros)"),
        ("spanId", span, is_span_id, "span id (16 lowercase hex, not all zeros)"),
        ("parentSpanId", parent, is_span_id, "span id (16 lowercase hex, not all zeros)"),
    ):
        if isinstance(value, str) and not check(value):
            message = f"{shown(value)} is not a W3C {kind}"
            found.append(violation(rules.TRACE_CONTEXT_FORMAT, "/" + key, message))
    return found
