"""FastStream: subscribers typed by each public model, on the Redis and Kafka test brokers.

FastStream decodes a JSON body and validates it into the subscriber's annotation from Python
objects, the dict door; a message published as our model is serialized by pydantic. Both must
arrive as the model ``model_validate_json`` reads from the wire bytes.
"""

# No `from __future__ import annotations`: the handlers' annotations are read at runtime.
import asyncio
import datetime
import json
from typing import Any

import pytest
from faststream.kafka import KafkaBroker, TestKafkaBroker
from faststream.redis import RedisBroker, TestRedisBroker
from pydantic import BaseModel
from typing_extensions import TypedDict

from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorCode, MxErrorPayload, MxRequest, MxResponse
from envelopekit.som import OriginatingSystem, SomEnvelope, StoryContext


class OrderCreated(BaseModel):
    order_id: int


class DatedOrder(TypedDict):
    order_id: int
    at: datetime.datetime


class TenantsEnvelope(BabelEnvelope[DatedOrder]):
    """A user's envelope with a field of its own."""

    tenant: str = "none"


def _messages() -> dict[str, tuple[Any, BaseModel]]:
    request = MxRequest.create("fs.list", {"path": "/"}, expect_reply=True)
    story = StoryContext(
        story_id="s-1",
        slug="S",
        headline="Storm",
        story_type="PLANNED",
        sequence_number=1,
        updated_at="2026-09-11T13:00:00Z",
    )
    system = OriginatingSystem(system_id="ncs-1", system_type="ncs")
    return {
        "babelqueue": (
            BabelEnvelope,
            BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}),
        ),
        "babelqueue-order": (
            BabelEnvelope[OrderCreated],
            BabelEnvelope[OrderCreated].create(
                "urn:babel:orders:created", OrderCreated(order_id=2)
            ),
        ),
        # A date-time, which pydantic's strict Python mode takes only as a `datetime`.
        "babelqueue-dated": (
            BabelEnvelope[DatedOrder],
            BabelEnvelope[DatedOrder].model_validate_json(_dated),
        ),
        "babelqueue-subclass": (
            TenantsEnvelope,
            TenantsEnvelope.model_validate({**json.loads(_dated), "tenant": "t"}),
        ),
        "som": (SomEnvelope, SomEnvelope.create("story.context", story, originating_system=system)),
        "matrix-request": (MxRequest, request),
        "matrix-reply": (MxResponse, request.reply({"ok": True, "count": 0, "items": []})),
        "matrix-failed": (MxResponse, request.fail(MxErrorCode.NOT_FOUND, "no such dir")),
        "matrix-error-payload": (
            MxErrorPayload,
            MxErrorPayload.of(MxErrorCode.UNAVAILABLE, "try later"),
        ),
        # Past 16 KiB: long lists of small objects, one number at the end read by the scan
        # (session 34's passes over their values), through the dict door and the JSON one.
        "matrix-reply-long": (
            MxResponse,
            request.reply({"ok": True, "items": [*_objects, {"a": 0.1234567890123456}]}),
        ),
        # Within 16 KiB, containers of 8 members or more, read from the text orjson writes of
        # them (session 37).
        "babelqueue-wide": (
            BabelEnvelope,
            BabelEnvelope.create("urn:babel:orders:created", {"items": _rows}),
        ),
        "matrix-reply-wide": (MxResponse, request.reply({"ok": True, "items": _rows})),
        "babelqueue-long": (
            BabelEnvelope,
            BabelEnvelope.create("urn:babel:orders:created", {"a": [*_objects, {"a": 2**53 + 1}]}),
        ),
    }


_objects: list[Any] = [{"a": -1, "b": "x"}] * 2_000
# `create` takes a mapping of JSON values only: the date-time is read from the wire.
_dated = BabelEnvelope.create("urn:a:b", {"order_id": 3, "at": "2026-01-01T00:00:00Z"}).to_json()
_rows: list[Any] = [{"sku": f"s{i}", "qty": i, "tags": ["a", "b"]} for i in range(40)]


MESSAGES = _messages()


async def _deliver(kind: str, model: Any, message: BaseModel) -> list[Any]:
    received: list[Any] = []
    wire = json.loads(message.to_json())  # type: ignore[attr-defined]
    if kind == "redis":
        redis = RedisBroker()

        @redis.subscriber("envelopes")
        async def on_redis(envelope: model) -> None:
            received.append(envelope)

        async with TestRedisBroker(redis) as redis_broker:
            await redis_broker.publish(message, channel="envelopes")
            await redis_broker.publish(wire, channel="envelopes")
    else:
        kafka = KafkaBroker()

        @kafka.subscriber("envelopes")
        async def on_kafka(envelope: model) -> None:
            received.append(envelope)

        async with TestKafkaBroker(kafka) as kafka_broker:
            await kafka_broker.publish(message, topic="envelopes")
            await kafka_broker.publish(wire, topic="envelopes")
    return received


@pytest.mark.parametrize("broker", ["redis", "kafka"])
@pytest.mark.parametrize("name", list(MESSAGES))
def test_a_typed_subscriber_receives_the_model(broker: str, name: str) -> None:
    model, message = MESSAGES[name]
    received = asyncio.run(_deliver(broker, model, message))
    expected = model.model_validate_json(message.to_json())  # type: ignore[attr-defined]
    assert received == [expected, expected]
    assert all(type(item) is type(expected) for item in received)
    assert [r.to_json() for r in received] == [message.to_json()] * 2  # type: ignore[attr-defined]


def test_a_failed_reply_arrives_as_an_error_payload() -> None:
    _, failed = MESSAGES["matrix-failed"]
    for broker in ("redis", "kafka"):
        (first, second) = asyncio.run(_deliver(broker, MxResponse, failed))
        assert first.is_error and second.is_error
        assert isinstance(first.payload, MxErrorPayload)
        assert first.payload.code is MxErrorCode.NOT_FOUND
