"""Azure Service Bus (broker-bindings §4): message fields, ``DeliveryCount``, the typed gate.

```python
from envelopekit.babelqueue import BabelEnvelope, asb

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
message = asb.project(env)  # sender.send_messages(ServiceBusMessage(env.to_json(), **message))
# on receive: msg.application_properties, b"".join(msg.body), msg.delivery_count
if (refused := asb.gate(message["application_properties"])) is None:
    env = asb.reconcile(BabelEnvelope.model_validate_json(env.to_json()), 3)
assert refused is None and env.attempts == 2  # a third delivery: two attempts were made
```
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Final, TypedDict

from ... import _exports
from ..._violations import Violation
from .._envelope import BabelEnvelope
from .._meta import SCHEMA_VERSION
from .._replay import REPLAY_BYPASS_HEADER, header_says_replay
from ._common import E, max_with_count, rejected, text_gate, with_attempts

__all__ = [
    "SCHEMA_VERSION_PROPERTY",
    "AsbMessage",
    "attempts",
    "gate",
    "is_replay",
    "project",
    "reconcile",
]
__dir__ = _exports.listing(__name__, __all__)

SCHEMA_VERSION_PROPERTY: Final = "bq-schema-version"
CONTENT_TYPE: Final = "application/json"


class AsbMessage(TypedDict):
    """``ServiceBusMessage`` keyword arguments (azure-servicebus names)."""

    subject: str
    correlation_id: str
    message_id: str
    content_type: str
    application_properties: dict[str, int | str]


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> AsbMessage:
    """Subject = URN, CorrelationId = trace_id, MessageId = meta.id, plus ``bq-*`` properties.

    The application properties are native AMQP-typed: numbers stay numbers. (``bq-created-at``
    needs an AMQP ``long``; azure-servicebus picks the width from the value.) ``replay=True``
    (a replaying redrive) adds the ``bq-replay-bypass: "1"`` property.
    """
    meta = envelope.meta
    message: AsbMessage = {
        "subject": envelope.job,
        "correlation_id": envelope.trace_id,
        "message_id": meta.id,
        "content_type": CONTENT_TYPE,
        "application_properties": {
            "bq-schema-version": meta.schema_version,
            "bq-source-lang": meta.lang,
            "bq-created-at": meta.created_at,
        },
    }
    if replay:
        message["application_properties"][REPLAY_BYPASS_HEADER] = "1"
    return message


def attempts(body_attempts: int, delivery_count: object) -> int:
    """``max(body, DeliveryCount - 1)``: DeliveryCount is 1-based; 0 or 1 keeps the body's count."""
    return max_with_count(body_attempts, delivery_count, one_based=True)


def reconcile(envelope: E, delivery_count: object) -> E:
    """``envelope`` with :func:`attempts` applied (never lowered)."""
    return with_attempts(envelope, attempts(envelope.attempts, delivery_count))


def gate(application_properties: Mapping[Any, Any] | None) -> Violation | None:
    """The §4.7 gate on the AMQP-typed ``bq-schema-version`` application property.

    A string follows the text rule of every binding (absent, blank or exactly ``"1"`` decodes).
    A number decodes only when it is an AMQP integral type, of any width and signedness, equal
    to 1: ``2``, ``0``, ``1.5`` and a floating-point ``1.0`` reject, as does a boolean or any
    other type. A present-but-null property is treated as absent. Keys and string values may
    arrive as UTF-8 ``bytes`` from the AMQP stack.

    Returns:
        ``None`` to decode, or the violation to dead-letter the message with, undecoded.
    """
    where = f"The Service Bus application property {SCHEMA_VERSION_PROPERTY}"
    raw = _lookup(application_properties)
    if raw is None or isinstance(raw, (str, bytes, bytearray)):
        return text_gate(raw, where)
    # bool is an Integral in Python but an AMQP boolean on the wire; a float is never integral
    # here, even 1.0 (AMQP float/double), whatever its value.
    if isinstance(raw, bool) or not isinstance(raw, numbers.Integral):
        return rejected(where, raw)
    return None if int(raw) == SCHEMA_VERSION else rejected(where, raw)


def is_replay(application_properties: Mapping[Any, Any] | None) -> bool:
    """Whether the ``bq-replay-bypass`` application property marks a deliberate replay."""
    return header_says_replay(_lookup(application_properties, REPLAY_BYPASS_HEADER))


def _lookup(properties: Mapping[Any, Any] | None, wanted: str = SCHEMA_VERSION_PROPERTY) -> object:
    if not properties:
        return None
    for key, value in properties.items():
        name = bytes(key).decode("utf-8", "replace") if isinstance(key, (bytes, bytearray)) else key
        if name == wanted:
            return value
    return None
