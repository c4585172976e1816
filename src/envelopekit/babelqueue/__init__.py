"""BabelQueue v1: the polyglot job-queue envelope ``{job, trace_id, data, meta, attempts}``.

```python
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
raw = env.to_json()                                   # what the six other SDKs read
again = BabelEnvelope.model_validate_json(raw)        # at the consuming boundary
```

Names here load on first use (as the top-level package's do), so validating messages does not
pay for the consumer toolkit or the broker bindings.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._bindings import artemis, asb, kafka, pulsar, rabbitmq, redis, sqs
    from ._dead_letter import DeadLetter, DeadLetterReason
    from ._envelope import BabelEnvelope, DataT
    from ._evolution import (
        breaking_changes,
    )
    from ._forbidden import FORBIDDEN_META_KEYS, FORBIDDEN_TOP_LEVEL_KEYS
    from ._idempotency import (
        AsyncClaimingSeenStore,
        AsyncIdempotent,
        AsyncSeenStore,
        ClaimingSeenStore,
        Effect,
        Idempotent,
        InMemorySeenStore,
        Lease,
        SeenStore,
        SeenStoreUnavailable,
        async_idempotent,
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
    from ._redis_seen import AsyncRedisSeenStore, RedisSeenStore
    from ._redrive import (
        Kept,
        KeptReason,
        Redriven,
        redrive,
    )
    from ._replay import (
        REPLAY_BYPASS_HEADER,
        bypass_external_effects,
        is_replay,
        replay_headers,
        replay_scope,
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
    from ._sensitive import (
        GDPR_KEYWORD,
        Cipher,
        DecryptError,
        Sensitive,
        SensitivePath,
        payload_schema,
        protect,
        sensitive_paths,
        unprotect,
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
    "GDPR_KEYWORD",
    "LANGS",
    "REPLAY_BYPASS_HEADER",
    "SCHEMA_VERSION",
    "TRACEPARENT",
    "TRACESTATE",
    "UNKNOWN_URN_STRATEGIES",
    "URN_CONVENTION",
    "AsyncClaimingSeenStore",
    "AsyncIdempotent",
    "AsyncRedisSeenStore",
    "AsyncSeenStore",
    "BabelEnvelope",
    "BabelMeta",
    "Cipher",
    "ClaimingSeenStore",
    "DataT",
    "DeadLetter",
    "DeadLetterDecision",
    "DeadLetterReason",
    "Decision",
    "DecryptError",
    "Delete",
    "Done",
    "Effect",
    "Fail",
    "Handle",
    "Idempotent",
    "InMemorySeenStore",
    "InvalidPayloadError",
    "Kept",
    "KeptReason",
    "Lang",
    "Lease",
    "Outcome",
    "PayloadSchemas",
    "Reconcile",
    "RedisSeenStore",
    "Redriven",
    "Reject",
    "Release",
    "Retry",
    "Router",
    "SchemaProvider",
    "SchemaRegistryError",
    "SeenStore",
    "SeenStoreUnavailable",
    "Sensitive",
    "SensitivePath",
    "TraceParent",
    "UnknownUrnError",
    "UnknownUrnStrategy",
    "artemis",
    "asb",
    "async_idempotent",
    "breaking_changes",
    "bypass_external_effects",
    "check_payload",
    "idempotent",
    "is_blank",
    "is_replay",
    "kafka",
    "lint_urn",
    "message_id",
    "parent_of",
    "payload_schema",
    "protect",
    "pulsar",
    "rabbitmq",
    "read_traceparent",
    "redis",
    "redrive",
    "replay_headers",
    "replay_scope",
    "sensitive_paths",
    "sqs",
    "trace_id_of",
    "unprotect",
    "write_traceparent",
]

# name -> the module (relative to this package) that defines it; the broker bindings are modules.
_LAZY: dict[str, str] = {
    "ASCII_WHITESPACE": "._urn",
    "FORBIDDEN_META_KEYS": "._forbidden",
    "FORBIDDEN_TOP_LEVEL_KEYS": "._forbidden",
    "GDPR_KEYWORD": "._sensitive",
    "LANGS": "._meta",
    "REPLAY_BYPASS_HEADER": "._replay",
    "SCHEMA_VERSION": "._meta",
    "TRACEPARENT": "._traceparent",
    "TRACESTATE": "._traceparent",
    "UNKNOWN_URN_STRATEGIES": "._routing",
    "URN_CONVENTION": "._urn",
    "AsyncClaimingSeenStore": "._idempotency",
    "AsyncIdempotent": "._idempotency",
    "AsyncRedisSeenStore": "._redis_seen",
    "AsyncSeenStore": "._idempotency",
    "BabelEnvelope": "._envelope",
    "BabelMeta": "._meta",
    "Cipher": "._sensitive",
    "ClaimingSeenStore": "._idempotency",
    "DataT": "._envelope",
    "DeadLetter": "._dead_letter",
    "DeadLetterDecision": "._routing",
    "DeadLetterReason": "._dead_letter",
    "Decision": "._routing",
    "DecryptError": "._sensitive",
    "Delete": "._routing",
    "Done": "._routing",
    "Effect": "._idempotency",
    "Fail": "._routing",
    "Handle": "._routing",
    "Idempotent": "._idempotency",
    "InMemorySeenStore": "._idempotency",
    "InvalidPayloadError": "._payload_schema",
    "Kept": "._redrive",
    "KeptReason": "._redrive",
    "Lang": "._meta",
    "Lease": "._idempotency",
    "Outcome": "._routing",
    "PayloadSchemas": "._payload_schema",
    "Reconcile": "._routing",
    "RedisSeenStore": "._redis_seen",
    "Redriven": "._redrive",
    "Reject": "._routing",
    "Release": "._routing",
    "Retry": "._routing",
    "Router": "._routing",
    "SchemaProvider": "._payload_schema",
    "SchemaRegistryError": "._payload_schema",
    "SeenStore": "._idempotency",
    "SeenStoreUnavailable": "._idempotency",
    "Sensitive": "._sensitive",
    "SensitivePath": "._sensitive",
    "TraceParent": "._traceparent",
    "UnknownUrnError": "._routing",
    "UnknownUrnStrategy": "._routing",
    "artemis": "._bindings",
    "asb": "._bindings",
    "async_idempotent": "._idempotency",
    "breaking_changes": "._evolution",
    "bypass_external_effects": "._replay",
    "check_payload": "._payload_schema",
    "idempotent": "._idempotency",
    "is_blank": "._urn",
    "is_replay": "._replay",
    "kafka": "._bindings",
    "lint_urn": "._urn",
    "message_id": "._idempotency",
    "parent_of": "._traceparent",
    "payload_schema": "._sensitive",
    "protect": "._sensitive",
    "pulsar": "._bindings",
    "rabbitmq": "._bindings",
    "read_traceparent": "._traceparent",
    "redis": "._bindings",
    "redrive": "._redrive",
    "replay_headers": "._replay",
    "replay_scope": "._replay",
    "sensitive_paths": "._sensitive",
    "sqs": "._bindings",
    "trace_id_of": "._traceparent",
    "unprotect": "._sensitive",
    "write_traceparent": "._traceparent",
}
_MODULES = frozenset({"artemis", "asb", "kafka", "pulsar", "rabbitmq", "redis", "sqs"})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _MODULES:
        value: Any = importlib.import_module(f"{module}.{name}", __name__)
    else:
        value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
