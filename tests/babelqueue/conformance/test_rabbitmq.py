"""Manifest section ``rabbitmq``: AMQP 0-9-1 properties and native-typed headers."""

from __future__ import annotations

from envelopekit.babelqueue import BabelEnvelope, rabbitmq
from tests.babelqueue.conformance._manifest import fixture_bytes, section

SECTION = section("rabbitmq")
PROJECTION = SECTION["property_projection"]


def test_property_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    properties = rabbitmq.project(envelope)
    headers = properties["headers"]
    assert {k: v for k, v in properties.items() if k != "headers"} == PROJECTION["properties"]
    assert headers == PROJECTION["headers"]
    # Field tables are typed: integers stay integers (not stringified as on Kafka/Pulsar).
    for key, value in PROJECTION["headers"].items():
        assert type(headers[key]) is type(value), key
