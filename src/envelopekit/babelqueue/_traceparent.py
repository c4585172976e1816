"""Trace continuation: the W3C ``traceparent`` transport header (ADR-0028), beside the envelope.

The header rides the transport's own metadata (AMQP headers, SQS attributes, Kafka headers, a
Redis frame), never the envelope, whose ``trace_id`` stays byte for byte as produced. A consumer
continues the producer's span when a valid header arrived, and otherwise falls back to a parent
derived from ``trace_id`` (ADR-0025), so every hop of one ``trace_id`` shares one trace:

```python
from envelopekit.babelqueue import BabelEnvelope, parent_of, write_traceparent

envelope = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
span_id = "00f067aa0ba902b7"
headers = write_traceparent({}, envelope, parent_id=span_id)   # producer, beside the body
parent = parent_of(envelope, headers)                           # consumer: always a parent
assert parent.parent_id == span_id
assert parent_of(envelope, {}).trace_id == envelope.trace_id.replace("-", "")  # derived
```
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._envelope import BabelEnvelope

__all__ = [
    "TRACEPARENT",
    "TRACESTATE",
    "TraceParent",
    "parent_of",
    "read_traceparent",
    "trace_id_of",
    "write_traceparent",
]

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"

_HEADER = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
# Every character of a W3C tracestate (its keys, values, `=`, `,` and optional whitespace).
_TRACESTATE_CHARS = re.compile(r"[\x20-\x7e]*")
_ZERO_TRACE: Final = "0" * 32
_ZERO_SPAN: Final = "0" * 16
_SAMPLED: Final = 0x01
# HTTP allows optional whitespace around a field value; nothing else is trimmed.
_OWS: Final = " \t"

HeaderValue = str | bytes | None
Headers = Mapping[str, HeaderValue] | Sequence[tuple[str, HeaderValue]]


@dataclass(frozen=True, slots=True)
class TraceParent:
    """A parsed ``traceparent``: ``00-<trace-id>-<parent-id>-<flags>``.

    Attributes:
        trace_id: 32 lowercase hex digits, not all zero.
        parent_id: the parent span's id, 16 lowercase hex digits, not all zero.
        flags: the trace flags byte (bit 0: sampled).
    """

    trace_id: str
    parent_id: str
    flags: int = _SAMPLED

    def __post_init__(self) -> None:
        if not _HEX32.fullmatch(self.trace_id) or self.trace_id != self.trace_id.lower():
            raise ValueError("trace_id must be 32 lowercase hex digits")
        if self.trace_id == _ZERO_TRACE:
            raise ValueError("trace_id must not be all zeros")
        if not _HEX16.fullmatch(self.parent_id) or self.parent_id == _ZERO_SPAN:
            raise ValueError("parent_id must be 16 lowercase hex digits, not all zeros")
        if not isinstance(self.flags, int):
            # A float in range was kept, and `header()` then raised on formatting it.
            raise TypeError(f"flags must be an int, not {type(self.flags).__name__}")
        if not 0 <= self.flags <= 0xFF:
            raise ValueError("flags must be one byte")

    @property
    def sampled(self) -> bool:
        """Whether the caller recorded the trace (flag bit 0)."""
        return bool(self.flags & _SAMPLED)

    def header(self) -> str:
        """The header value, always version ``00``."""
        return f"00-{self.trace_id}-{self.parent_id}-{self.flags:02x}"

    def __str__(self) -> str:
        return self.header()

    @classmethod
    def parse(cls, value: str | bytes | None) -> TraceParent | None:
        """Parse a header value; ``None`` for anything W3C Trace Context says to ignore.

        Lowercase hex only; version ``ff`` is invalid; version ``00`` is exactly 55 characters;
        a later version may append ``-``-separated fields, which are ignored. All-zero trace or
        parent ids are invalid.
        """
        if isinstance(value, bytes):
            try:
                value = value.decode("ascii")
            except UnicodeDecodeError:
                return None
        if not isinstance(value, str):
            return None
        value = value.strip(_OWS)
        found = _HEADER.match(value)
        if found is None:
            return None
        version, trace_id, parent_id, flags = found.groups()
        if version == "ff":
            return None
        if version == "00" and len(value) != 55:
            return None
        if len(value) > 55 and value[55] != "-":
            return None
        if trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
            return None
        return cls(trace_id, parent_id, int(flags, 16))


def trace_id_of(trace_id: str) -> str:
    """The 32-hex W3C / OpenTelemetry trace id for an envelope ``trace_id`` (ADR-0025).

    A UUID maps to its own 16 bytes; any other string (consumers accept any non-empty one) to
    the first 16 bytes of its SHA-256. Never all zeros. The same mapping as the other SDKs,
    so every hop of one ``trace_id`` lands in one trace.
    """
    compact = trace_id.replace("-", "")
    if _HEX32.fullmatch(compact) and compact.strip("0"):
        return compact.lower()
    digest = hashlib.sha256(trace_id.encode("utf-8")).digest()[:16].hex()
    return digest if digest != _ZERO_TRACE else _ZERO_TRACE[:-1] + "1"


def _derived_parent_id(trace_id: str) -> str:
    # The synthetic parent span the other SDKs derive for a header-less delivery.
    digest = hashlib.sha256(("babelqueue-span:" + trace_id).encode("utf-8")).digest()[:8].hex()
    return digest if digest != _ZERO_SPAN else _ZERO_SPAN[:-1] + "1"


def read_traceparent(headers: Headers | None) -> TraceParent | None:
    """The valid ``traceparent`` among transport headers, or ``None``.

    The name (a string, or bytes as a raw Redis or Kafka client gives it) matches
    case-insensitively; any other name is another header. A missing, malformed or repeated
    header is ignored.
    """
    if not headers:
        return None
    pairs: Any = headers.items() if isinstance(headers, Mapping) else headers
    found = [value for name, value in pairs if _named(name, TRACEPARENT)]
    if len(found) != 1:
        return None
    return TraceParent.parse(found[0])


def _named(name: object, header: str) -> bool:
    """Whether a header ``name`` (a string, or bytes) is ``header``, in any case."""
    if isinstance(name, str):
        return name.lower() == header
    return isinstance(name, bytes) and name.lower() == header.encode()


def write_traceparent(
    headers: Mapping[str, str] | None,
    envelope: BabelEnvelope[Any],
    *,
    parent_id: str | None = None,
    sampled: bool = True,
    tracestate: str | None = None,
) -> dict[str, str]:
    """Transport headers for publishing ``envelope``, with its ``traceparent`` set.

    The envelope is not touched. Its ``trace_id`` gives the trace id (:func:`trace_id_of`).

    Args:
        headers: headers to keep (copied; any earlier ``traceparent``/``tracestate`` replaced,
            its name a string or bytes in any case).
        envelope: the message being published.
        parent_id: the producing span's id (16 lowercase hex); a random one when not given.
        sampled: the sampled flag.
        tracestate: a W3C ``tracestate`` to carry along, if any.

    Raises:
        ValueError: for a ``parent_id`` that is not 16 lowercase hex digits, or all zeros, or a
            ``tracestate`` with a character W3C Trace Context does not allow in one (anything
            but printable ASCII: a CR or LF would end the header line it is written on).
        TypeError: for a ``tracestate`` that is not a string.
    """
    if tracestate is not None:
        if not isinstance(tracestate, str):
            raise TypeError(f"tracestate must be a str, not {type(tracestate).__name__}")
        if not _TRACESTATE_CHARS.fullmatch(tracestate):
            raise ValueError(f"tracestate must be printable ASCII: {tracestate[:64]!r}")
    span = parent_id if parent_id is not None else _random_span_id()
    parent = TraceParent(trace_id_of(envelope.trace_id), span, _SAMPLED if sampled else 0)
    out = {
        k: v
        for k, v in (headers or {}).items()
        if not (_named(k, TRACEPARENT) or _named(k, TRACESTATE))
    }
    out[TRACEPARENT] = parent.header()
    if tracestate:
        out[TRACESTATE] = tracestate
    return out


def parent_of(envelope: BabelEnvelope[Any], headers: Headers | None = None) -> TraceParent:
    """The parent a consumer's span continues: the carried header, else one from ``trace_id``."""
    carried = read_traceparent(headers)
    if carried is not None:
        return carried
    return TraceParent(trace_id_of(envelope.trace_id), _derived_parent_id(envelope.trace_id))


def _random_span_id() -> str:
    while True:
        span = secrets.token_hex(8)
        if span != _ZERO_SPAN:
            return span
