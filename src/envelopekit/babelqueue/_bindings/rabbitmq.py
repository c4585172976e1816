"""RabbitMQ, AMQP 0-9-1 (broker-bindings §2): basic properties and typed ``x-*`` headers.

```python
from envelopekit.babelqueue import BabelEnvelope, rabbitmq

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
properties = rabbitmq.project(env)
# channel.basic_publish(exchange, key, env.to_json(), pika.BasicProperties(**properties))
assert properties["type"] == env.job and properties["headers"]["x-attempts"] == 0
```

Consume-side ``attempts`` stay in the body (the runtime republishes with ``attempts + 1``); the
``x-attempts`` header is a produce-side mirror, so there is no reconciliation here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypedDict

from ... import _exports
from .._envelope import BabelEnvelope
from .._replay import REPLAY_BYPASS_HEADER, header_says_replay

__all__ = ["APP_ID", "AmqpProperties", "is_replay", "project"]
__dir__ = _exports.listing(__name__, __all__)

APP_ID: Final = "babelqueue"
CONTENT_TYPE: Final = "application/json"


class AmqpProperties(TypedDict):
    """``pika.BasicProperties`` keyword arguments."""

    type: str
    correlation_id: str
    message_id: str
    app_id: str
    content_type: str
    headers: dict[str, int | str]


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> AmqpProperties:
    """Type = URN, correlation_id = trace_id, message_id = meta.id, native-typed headers.

    AMQP 0-9-1 field tables are typed, so ``x-schema-version`` and ``x-attempts`` stay integers.
    ``replay=True`` (a replaying redrive) adds the ``bq-replay-bypass: "1"`` header.
    """
    meta = envelope.meta
    properties: AmqpProperties = {
        "type": envelope.job,
        "correlation_id": envelope.trace_id,
        "message_id": meta.id,
        "app_id": APP_ID,
        "content_type": CONTENT_TYPE,
        "headers": {
            "x-schema-version": meta.schema_version,
            "x-source-lang": meta.lang,
            "x-attempts": envelope.attempts,
        },
    }
    if replay:
        properties["headers"][REPLAY_BYPASS_HEADER] = "1"
    return properties


def is_replay(headers: Mapping[str, Any] | None) -> bool:
    """Whether the AMQP header table's ``bq-replay-bypass`` marks a deliberate replay.

    ``headers`` is ``BasicProperties.headers`` (``None`` when the delivery carried none); a
    value may arrive as ``bytes`` from the AMQP stack.
    """
    return header_says_replay((headers or {}).get(REPLAY_BYPASS_HEADER))
