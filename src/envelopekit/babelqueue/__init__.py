"""BabelQueue v1: the polyglot job-queue envelope ``{job, trace_id, data, meta, attempts}``.

```python
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
raw = env.to_json()                                   # what the six other SDKs read
again = BabelEnvelope.model_validate_json(raw)        # at the consuming boundary
```
"""

from __future__ import annotations

from ._bindings import artemis, asb, kafka, pulsar, rabbitmq, redis, sqs
from ._dead_letter import DeadLetter, DeadLetterReason
from ._envelope import BabelEnvelope, DataT
from ._forbidden import FORBIDDEN_META_KEYS, FORBIDDEN_TOP_LEVEL_KEYS
from ._idempotency import (
    Effect,
    Idempotent,
    InMemorySeenStore,
    SeenStore,
    idempotent,
    message_id,
)
from ._meta import LANGS, SCHEMA_VERSION, BabelMeta, Lang
from ._payload_schema import (
    InvalidPayloadError,
    PayloadSchemas,
    SchemaProvider,
    SchemaRegistryError,
    check_payload,
)
from ._routing import (
    UNKNOWN_URN_STRATEGIES,
    DeadLetterDecision,
    Decision,
    Delete,
    Done,
    Fail,
    Handle,
    Outcome,
    Reconcile,
    Reject,
    Release,
    Retry,
    Router,
    UnknownUrnError,
    UnknownUrnStrategy,
)
from ._traceparent import (
    TRACEPARENT,
    TRACESTATE,
    TraceParent,
    parent_of,
    read_traceparent,
    trace_id_of,
    write_traceparent,
)
from ._urn import ASCII_WHITESPACE, URN_CONVENTION, is_blank, lint_urn

__all__ = [
    "ASCII_WHITESPACE",
    "FORBIDDEN_META_KEYS",
    "FORBIDDEN_TOP_LEVEL_KEYS",
    "LANGS",
    "SCHEMA_VERSION",
    "TRACEPARENT",
    "TRACESTATE",
    "UNKNOWN_URN_STRATEGIES",
    "URN_CONVENTION",
    "BabelEnvelope",
    "BabelMeta",
    "DataT",
    "DeadLetter",
    "DeadLetterDecision",
    "DeadLetterReason",
    "Decision",
    "Delete",
    "Done",
    "Effect",
    "Fail",
    "Handle",
    "Idempotent",
    "InMemorySeenStore",
    "InvalidPayloadError",
    "Lang",
    "Outcome",
    "PayloadSchemas",
    "Reconcile",
    "Reject",
    "Release",
    "Retry",
    "Router",
    "SchemaProvider",
    "SchemaRegistryError",
    "SeenStore",
    "TraceParent",
    "UnknownUrnError",
    "UnknownUrnStrategy",
    "artemis",
    "asb",
    "check_payload",
    "idempotent",
    "is_blank",
    "kafka",
    "lint_urn",
    "message_id",
    "parent_of",
    "pulsar",
    "rabbitmq",
    "read_traceparent",
    "redis",
    "sqs",
    "trace_id_of",
    "write_traceparent",
]
