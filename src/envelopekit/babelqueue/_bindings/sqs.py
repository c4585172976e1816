"""Amazon SQS (broker-bindings §3): ``MessageAttributes``, ``ApproximateReceiveCount``, the gate.

```python
from envelopekit.babelqueue import BabelEnvelope, sqs

env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
attributes = sqs.project(env)
# sqs_client.send_message(QueueUrl=url, MessageBody=env.to_json().decode(),
#                         MessageAttributes=attributes)
# on receive (AttributeNames=["ApproximateReceiveCount"], MessageAttributeNames=["All"]):
msg = {"Body": env.to_json().decode(), "MessageAttributes": attributes,
       "Attributes": {"ApproximateReceiveCount": "1"}}
if (refused := sqs.gate(msg.get("MessageAttributes"))) is None:
    env = sqs.reconcile(BabelEnvelope.model_validate_json(msg["Body"]),
                        msg["Attributes"].get("ApproximateReceiveCount"))
assert refused is None and env.attempts == 0
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

from ... import _exports
from ..._violations import Violation
from .._envelope import BabelEnvelope
from .._replay import REPLAY_BYPASS_HEADER, header_says_replay
from ._common import E, max_with_count, text_gate, with_attempts

__all__ = [
    "SCHEMA_VERSION_ATTRIBUTE",
    "SqsAttribute",
    "attempts",
    "gate",
    "is_replay",
    "project",
    "reconcile",
]
__dir__ = _exports.listing(__name__, __all__)

SCHEMA_VERSION_ATTRIBUTE: Final = "bq-schema-version"


class SqsAttribute(TypedDict):
    """One SQS message attribute, as boto3 takes and returns it."""

    DataType: Literal["String", "Number"]
    StringValue: str


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> dict[str, SqsAttribute]:
    """The ``bq-*`` message attributes: ids and strings are ``String``, counters ``Number``.

    ``replay=True`` (a replaying redrive) adds the ``bq-replay-bypass`` String attribute.
    """
    meta = envelope.meta
    attributes: dict[str, SqsAttribute] = {
        "bq-job": _string(envelope.job),
        "bq-trace-id": _string(envelope.trace_id),
        "bq-message-id": _string(meta.id),
        "bq-schema-version": _number(meta.schema_version),
        "bq-source-lang": _string(meta.lang),
        "bq-created-at": _number(meta.created_at),
    }
    if replay:
        attributes[REPLAY_BYPASS_HEADER] = _string("1")
    return attributes


def attempts(body_attempts: int, approximate_receive_count: object) -> int:
    """``max(body, ApproximateReceiveCount - 1)``; an absent or garbage count is ignored.

    Args:
        body_attempts: the envelope's own ``attempts``.
        approximate_receive_count: the SQS system attribute, a decimal string (``"3"``) as boto3
            returns it, an int, or ``None`` when not requested.
    """
    return max_with_count(body_attempts, approximate_receive_count, one_based=True)


def reconcile(envelope: E, approximate_receive_count: object) -> E:
    """``envelope`` with :func:`attempts` applied (never lowered)."""
    return with_attempts(envelope, attempts(envelope.attempts, approximate_receive_count))


def gate(message_attributes: Mapping[str, Mapping[str, Any]] | None) -> Violation | None:
    """The §3.7 gate on the ``bq-schema-version`` attribute's ``StringValue``, before decoding.

    Returns:
        ``None`` to decode the body, or the ``transport.schema_version_unsupported`` violation
        to dead-letter the message with, undecoded.
    """
    attribute = (message_attributes or {}).get(SCHEMA_VERSION_ATTRIBUTE)
    raw = attribute.get("StringValue") if isinstance(attribute, Mapping) else None
    return text_gate(raw, f"The SQS attribute {SCHEMA_VERSION_ATTRIBUTE}")


def is_replay(message_attributes: Mapping[str, Mapping[str, Any]] | None) -> bool:
    """Whether the ``bq-replay-bypass`` attribute marks the message as a deliberate replay."""
    attribute = (message_attributes or {}).get(REPLAY_BYPASS_HEADER)
    return isinstance(attribute, Mapping) and header_says_replay(attribute.get("StringValue"))


def _string(value: str) -> SqsAttribute:
    return {"DataType": "String", "StringValue": value}


def _number(value: int) -> SqsAttribute:
    return {"DataType": "Number", "StringValue": str(value)}
