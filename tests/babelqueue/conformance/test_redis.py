"""Manifest section ``redis``: payload identity, the element is the envelope JSON byte for byte."""

from __future__ import annotations

from envelopekit.babelqueue import BabelEnvelope, redis
from tests.babelqueue.conformance._manifest import fixture_bytes, section

SECTION = section("redis")
IDENTITY = SECTION["payload_identity"]


def test_payload_identity_of_the_stored_bytes() -> None:
    raw = fixture_bytes(IDENTITY["envelope_file"])
    stored = redis.element(raw)
    assert stored == raw
    reserved = redis.reserve(stored)
    assert reserved.body == raw
    assert reserved.headers == {}


def test_payload_identity_of_an_envelope() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(IDENTITY["envelope_file"]))
    stored = redis.element(envelope)
    # No wrapping and no added fields: the element is the envelope's own encoding.
    assert stored == envelope.to_json()
    assert redis.reserve(stored).body == stored
    assert redis.reserve(stored.decode("utf-8")).body == stored
