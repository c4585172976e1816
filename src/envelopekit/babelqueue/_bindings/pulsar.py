"""Apache Pulsar (broker-bindings §5): string properties, ``RedeliveryCount``, the gate.

```python
from envelopekit.babelqueue import BabelEnvelope, pulsar

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
properties = pulsar.project(env)  # producer.send(env.to_json(), properties=properties)
# on receive: msg.properties(), msg.data(), msg.redelivery_count()
if (refused := pulsar.gate(properties)) is None:
    env = pulsar.reconcile(BabelEnvelope.model_validate_json(env.to_json()), 2)
assert refused is None and env.attempts == 2
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ... import _exports
from ..._violations import Violation
from .._envelope import BabelEnvelope
from .._replay import REPLAY_BYPASS_HEADER, header_says_replay
from ._common import E, max_with_count, text_gate, with_attempts

__all__ = [
    "SCHEMA_VERSION_PROPERTY",
    "attempts",
    "gate",
    "is_replay",
    "project",
    "reconcile",
]
__dir__ = _exports.listing(__name__, __all__)

SCHEMA_VERSION_PROPERTY: Final = "bq-schema-version"


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> dict[str, str]:
    """The ``bq-*`` message properties, all strings (numbers are stringified).

    The broker sets the native publish time; ``meta.created_at`` in the body is authoritative.
    ``replay=True`` (a replaying redrive) adds ``bq-replay-bypass: "1"``.
    """
    meta = envelope.meta
    properties = {
        "bq-job": envelope.job,
        "bq-trace-id": envelope.trace_id,
        "bq-message-id": meta.id,
        "bq-schema-version": str(meta.schema_version),
        "bq-source-lang": meta.lang,
        "bq-attempts": str(envelope.attempts),
    }
    if replay:
        properties[REPLAY_BYPASS_HEADER] = "1"
    return properties


def attempts(body_attempts: int, redelivery_count: object) -> int:
    """``max(body, RedeliveryCount)``: the count is 0-based, so there is no ``- 1``."""
    return max_with_count(body_attempts, redelivery_count, one_based=False)


def reconcile(envelope: E, redelivery_count: object) -> E:
    """``envelope`` with :func:`attempts` applied (never lowered)."""
    return with_attempts(envelope, attempts(envelope.attempts, redelivery_count))


def gate(properties: Mapping[str, Any] | None) -> Violation | None:
    """The §5.7 gate on the ``bq-schema-version`` property, before decoding.

    Returns:
        ``None`` to decode, or the violation to dead-letter the message with, undecoded.
    """
    raw = (properties or {}).get(SCHEMA_VERSION_PROPERTY)
    return text_gate(raw, f"The Pulsar property {SCHEMA_VERSION_PROPERTY}")


def is_replay(properties: Mapping[str, Any] | None) -> bool:
    """Whether the ``bq-replay-bypass`` property marks the message as a deliberate replay."""
    return header_says_replay((properties or {}).get(REPLAY_BYPASS_HEADER))
