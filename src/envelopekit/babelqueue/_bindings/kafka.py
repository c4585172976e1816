"""Apache Kafka (broker-bindings §6): ``bq-*`` record headers, the authoritative ``bq-attempts``.

```python
from envelopekit.babelqueue import BabelEnvelope, kafka

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
record = kafka.project(env)  # producer.produce(topic, env.to_json(), **record)
# on poll: record.headers() and record.value()
headers, value = record["headers"], env.to_json()
if (refused := kafka.gate(headers)) is None:
    env = kafka.reconcile(BabelEnvelope.model_validate_json(value), headers)
assert refused is None and env.attempts == 0
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypedDict

from ... import _exports
from ..._violations import Violation
from .._envelope import BabelEnvelope
from .._replay import REPLAY_BYPASS_HEADER, header_says_replay
from ._common import E, parse_count, text_gate, with_attempts

__all__ = [
    "ATTEMPTS_HEADER",
    "SCHEMA_VERSION_HEADER",
    "Headers",
    "KafkaRecord",
    "attempts",
    "gate",
    "header",
    "is_replay",
    "project",
    "reconcile",
]
__dir__ = _exports.listing(__name__, __all__)

SCHEMA_VERSION_HEADER: Final = "bq-schema-version"
ATTEMPTS_HEADER: Final = "bq-attempts"

HeaderValue = bytes | str | None
Headers = Sequence[tuple[str, HeaderValue]] | Mapping[str, HeaderValue]
"""Record headers as Kafka clients give them: a list of ``(key, value)`` pairs, or a mapping."""


class KafkaRecord(TypedDict):
    """``Producer.produce`` keyword arguments (confluent-kafka names)."""

    headers: list[tuple[str, bytes]]
    timestamp: int


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> KafkaRecord:
    """The ``bq-*`` headers as UTF-8 bytes, and the record timestamp = ``meta.created_at`` (ms).

    ``replay=True`` (a replaying redrive) adds the ``bq-replay-bypass: 1`` header.
    """
    meta = envelope.meta
    pairs = [
        ("bq-job", envelope.job),
        ("bq-trace-id", envelope.trace_id),
        ("bq-message-id", meta.id),
        ("bq-schema-version", str(meta.schema_version)),
        ("bq-source-lang", meta.lang),
        (ATTEMPTS_HEADER, str(envelope.attempts)),
    ]
    if replay:
        pairs.append((REPLAY_BYPASS_HEADER, "1"))
    return {
        "headers": [(name, value.encode("utf-8")) for name, value in pairs],
        "timestamp": meta.created_at,
    }


def header(headers: Headers | None, name: str) -> HeaderValue:
    """The first value of header ``name`` (Kafka allows repeats), or ``None`` when absent."""
    if not headers:
        return None
    if isinstance(headers, Mapping):
        return headers.get(name)
    for key, value in headers:
        if key == name:
            return value
    return None


def attempts(body_attempts: int, header_attempts: object) -> int:
    """The ``bq-attempts`` header when present and valid, else the body's (NOT a max).

    Kafka has no native delivery count, so the header is authoritative and overrides the body
    even when lower; the body is the fallback for a producer that is not BabelQueue.
    """
    count = parse_count(header_attempts)
    return body_attempts if count is None else count


def reconcile(envelope: E, headers: Headers | None) -> E:
    """``envelope`` with ``attempts`` from the record's ``bq-attempts`` header."""
    return with_attempts(envelope, attempts(envelope.attempts, header(headers, ATTEMPTS_HEADER)))


def gate(headers: Headers | None) -> Violation | None:
    """The §6.7 gate on the first ``bq-schema-version`` header (UTF-8), before decoding.

    Returns:
        ``None`` to decode, or the violation to dead-letter the record with, undecoded.
    """
    raw = header(headers, SCHEMA_VERSION_HEADER)
    return text_gate(raw, f"The Kafka header {SCHEMA_VERSION_HEADER}")


def is_replay(headers: Headers | None) -> bool:
    """Whether the first ``bq-replay-bypass`` header marks the record as a deliberate replay."""
    return header_says_replay(header(headers, REPLAY_BYPASS_HEADER))
