"""BabelQueue v1: the polyglot job-queue envelope ``{job, trace_id, data, meta, attempts}``.

```python
from envelopekit.babelqueue import BabelEnvelope

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
raw = env.to_json()                                   # what the six other SDKs read
again = BabelEnvelope.model_validate_json(raw)        # at the consuming boundary
assert again == env and again.meta.queue == "orders"
```

Names here load on first use (as the top-level package's do), so validating messages does not
pay for the consumer toolkit or the broker bindings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._bindings import artemis as artemis
    from ._bindings import asb as asb
    from ._bindings import kafka as kafka
    from ._bindings import pulsar as pulsar
    from ._bindings import rabbitmq as rabbitmq
    from ._bindings import redis as redis
    from ._bindings import sqs as sqs
    from ._dead_letter import DeadLetter as DeadLetter
    from ._dead_letter import DeadLetterReason as DeadLetterReason
    from ._envelope import BabelEnvelope as BabelEnvelope
    from ._envelope import DataT as DataT
    from ._evolution import breaking_changes as breaking_changes
    from ._forbidden import FORBIDDEN_META_KEYS as FORBIDDEN_META_KEYS
    from ._forbidden import FORBIDDEN_TOP_LEVEL_KEYS as FORBIDDEN_TOP_LEVEL_KEYS
    from ._idempotency import AsyncClaimingSeenStore as AsyncClaimingSeenStore
    from ._idempotency import AsyncIdempotent as AsyncIdempotent
    from ._idempotency import AsyncSeenStore as AsyncSeenStore
    from ._idempotency import ClaimingSeenStore as ClaimingSeenStore
    from ._idempotency import Effect as Effect
    from ._idempotency import Idempotent as Idempotent
    from ._idempotency import InMemorySeenStore as InMemorySeenStore
    from ._idempotency import Lease as Lease
    from ._idempotency import SeenStore as SeenStore
    from ._idempotency import SeenStoreUnavailable as SeenStoreUnavailable
    from ._idempotency import async_idempotent as async_idempotent
    from ._idempotency import idempotent as idempotent
    from ._idempotency import message_id as message_id
    from ._meta import LANGS as LANGS
    from ._meta import SCHEMA_VERSION as SCHEMA_VERSION
    from ._meta import BabelMeta as BabelMeta
    from ._meta import Lang as Lang
    from ._payload_schema import InvalidPayloadError as InvalidPayloadError
    from ._payload_schema import PayloadSchemas as PayloadSchemas
    from ._payload_schema import SchemaProvider as SchemaProvider
    from ._payload_schema import SchemaRegistryError as SchemaRegistryError
    from ._payload_schema import check_payload as check_payload
    from ._redis_seen import AsyncRedisSeenStore as AsyncRedisSeenStore
    from ._redis_seen import RedisSeenStore as RedisSeenStore
    from ._redrive import Kept as Kept
    from ._redrive import KeptReason as KeptReason
    from ._redrive import Redriven as Redriven
    from ._redrive import redrive as redrive
    from ._replay import REPLAY_BYPASS_HEADER as REPLAY_BYPASS_HEADER
    from ._replay import bypass_external_effects as bypass_external_effects
    from ._replay import is_replay as is_replay
    from ._replay import replay_headers as replay_headers
    from ._replay import replay_scope as replay_scope
    from ._routing import UNKNOWN_URN_STRATEGIES as UNKNOWN_URN_STRATEGIES
    from ._routing import DeadLetterDecision as DeadLetterDecision
    from ._routing import Decision as Decision
    from ._routing import Delete as Delete
    from ._routing import Done as Done
    from ._routing import Fail as Fail
    from ._routing import Handle as Handle
    from ._routing import InvalidEnvelopeError as InvalidEnvelopeError
    from ._routing import Outcome as Outcome
    from ._routing import Reconcile as Reconcile
    from ._routing import Reject as Reject
    from ._routing import Release as Release
    from ._routing import Retry as Retry
    from ._routing import Route as Route
    from ._routing import Router as Router
    from ._routing import UnknownUrnError as UnknownUrnError
    from ._routing import UnknownUrnStrategy as UnknownUrnStrategy
    from ._sensitive import GDPR_KEYWORD as GDPR_KEYWORD
    from ._sensitive import Cipher as Cipher
    from ._sensitive import DecryptError as DecryptError
    from ._sensitive import Sensitive as Sensitive
    from ._sensitive import SensitivePath as SensitivePath
    from ._sensitive import payload_schema as payload_schema
    from ._sensitive import protect as protect
    from ._sensitive import sensitive_paths as sensitive_paths
    from ._sensitive import unprotect as unprotect
    from ._traceparent import TRACEPARENT as TRACEPARENT
    from ._traceparent import TRACESTATE as TRACESTATE
    from ._traceparent import TraceParent as TraceParent
    from ._traceparent import parent_of as parent_of
    from ._traceparent import read_traceparent as read_traceparent
    from ._traceparent import trace_id_of as trace_id_of
    from ._traceparent import write_traceparent as write_traceparent
    from ._urn import ASCII_WHITESPACE as ASCII_WHITESPACE
    from ._urn import URN_CONVENTION as URN_CONVENTION
    from ._urn import is_blank as is_blank
    from ._urn import lint_urn as lint_urn
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
