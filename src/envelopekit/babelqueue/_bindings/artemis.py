"""Apache ActiveMQ Artemis over AMQP 1.0 (broker-bindings §7): JMS-readable slots, the gate.

URN, trace id and message id ride the JMS-native slots (``x-opt-jms-type``, correlation-id,
message-id); the ``bq_*`` application properties use underscores, since JMS property names must
be Java identifiers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypedDict

from ... import _exports
from ..._violations import Violation
from .._envelope import BabelEnvelope
from .._replay import header_says_replay
from ._common import E, max_with_count, text_gate, with_attempts

__all__ = [
    "APP_ID",
    "JMS_TYPE_ANNOTATION",
    "REPLAY_BYPASS_PROPERTY",
    "SCHEMA_VERSION_PROPERTY",
    "ArtemisMessage",
    "attempts",
    "gate",
    "is_replay",
    "project",
    "reconcile",
]
__dir__ = _exports.listing(__name__, __all__)

JMS_TYPE_ANNOTATION: Final = "x-opt-jms-type"
SCHEMA_VERSION_PROPERTY: Final = "bq_schema_version"
# `bq-replay-bypass` spelt as a JMS identifier, as every other `bq_*` property here.
REPLAY_BYPASS_PROPERTY: Final = "bq_replay_bypass"
APP_ID: Final = "babelqueue"


class ArtemisMessage(TypedDict):
    """The AMQP 1.0 sections a JMS peer reads.

    ``creation_time`` is Unix milliseconds, the AMQP timestamp (python-qpid-proton's
    ``Message.creation_time`` takes seconds: divide by 1000 there).
    """

    message_annotations: dict[str, str]
    message_id: str
    correlation_id: str
    creation_time: int
    application_properties: dict[str, str]


def project(envelope: BabelEnvelope[Any], *, replay: bool = False) -> ArtemisMessage:
    """JMSType = URN, JMSCorrelationID = trace_id, JMSTimestamp = created_at, ``bq_*`` strings.

    ``replay=True`` (a replaying redrive) adds the ``bq_replay_bypass: "1"`` property.
    """
    meta = envelope.meta
    message: ArtemisMessage = {
        "message_annotations": {JMS_TYPE_ANNOTATION: envelope.job},
        "message_id": meta.id,
        "correlation_id": envelope.trace_id,
        "creation_time": meta.created_at,
        "application_properties": {
            "bq_schema_version": str(meta.schema_version),
            "bq_source_lang": meta.lang,
            "bq_attempts": str(envelope.attempts),
            "bq_app_id": APP_ID,
        },
    }
    if replay:
        message["application_properties"][REPLAY_BYPASS_PROPERTY] = "1"
    return message


def attempts(body_attempts: int, delivery_count: object) -> int:
    """``max(body, delivery-count)``: the AMQP header is 0-based, so there is no ``- 1``.

    (Over JMS, pass ``JMSXDeliveryCount - 1``: that property is 1-based.)
    """
    return max_with_count(body_attempts, delivery_count, one_based=False)


def reconcile(envelope: E, delivery_count: object) -> E:
    """``envelope`` with :func:`attempts` applied (never lowered)."""
    return with_attempts(envelope, attempts(envelope.attempts, delivery_count))


def gate(application_properties: Mapping[str, Any] | None) -> Violation | None:
    """The §7.7 gate on ``bq_schema_version`` (underscores), before decoding.

    Returns:
        ``None`` to decode, or the violation to dead-letter the message with, undecoded.
    """
    raw = (application_properties or {}).get(SCHEMA_VERSION_PROPERTY)
    return text_gate(raw, f"The Artemis application property {SCHEMA_VERSION_PROPERTY}")


def is_replay(application_properties: Mapping[str, Any] | None) -> bool:
    """Whether the ``bq_replay_bypass`` application property marks a deliberate replay."""
    return header_says_replay((application_properties or {}).get(REPLAY_BYPASS_PROPERTY))
