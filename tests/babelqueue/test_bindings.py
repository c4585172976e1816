"""Broker bindings beyond the manifest cases: edge inputs, typing of values, Redis frames."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from envelopekit import rules
from envelopekit.babelqueue import (
    BabelEnvelope,
    artemis,
    asb,
    kafka,
    pulsar,
    rabbitmq,
    redis,
    sqs,
)
from tests.conftest import DATA

ORDER = (DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes()


def order(attempts: int = 0) -> BabelEnvelope:
    env = BabelEnvelope.model_validate_json(ORDER)
    return env.model_copy(update={"attempts": attempts})


def test_bindings_are_exported_modules() -> None:
    bq = importlib.import_module("envelopekit.babelqueue")  # `__all__` is read at run time
    for module in (artemis, asb, kafka, pulsar, rabbitmq, redis, sqs):
        assert module.__name__.rsplit(".", 1)[1] in bq.__all__
        assert all(hasattr(module, name) for name in module.__all__)


@pytest.mark.parametrize(
    "count", ["+3", " 3", "3 ", "٣", "-1", "3.0", "", b"\xff", True, -2, 2**31, None, object()]
)
def test_garbage_counts_are_ignored(count: object) -> None:
    for reconcile in (sqs.attempts, asb.attempts, pulsar.attempts, artemis.attempts):
        assert reconcile(4, count) == 4
    assert kafka.attempts(4, count) == 4


def test_counts_as_bytes_and_ints() -> None:
    assert sqs.attempts(0, b"7") == 6
    assert kafka.attempts(9, b"2") == 2
    assert pulsar.attempts(1, 3) == 3


def test_reconcile_returns_the_same_object_when_nothing_changes() -> None:
    env = order(5)
    assert sqs.reconcile(env, "2") is env
    assert kafka.reconcile(env, None) is env
    moved = pulsar.reconcile(env, 9)
    assert moved is not env and moved.attempts == 9 and env.attempts == 5
    assert moved.meta == env.meta and moved.trace_id == env.trace_id


def test_kafka_header_shapes() -> None:
    env = order(1)
    assert kafka.reconcile(env, {"bq-attempts": b"4"}).attempts == 4
    # Kafka allows repeated headers: the first one wins.
    assert kafka.reconcile(env, [("bq-attempts", b"2"), ("bq-attempts", b"8")]).attempts == 2
    assert kafka.reconcile(env, [("bq-attempts", None)]).attempts == 1
    assert kafka.gate([("bq-schema-version", None)]) is None
    assert kafka.gate([("bq-schema-version", b"\xff")]) is not None
    assert kafka.gate({"bq-schema-version": "1"}) is None
    assert kafka.gate(None) is None


def test_the_projection_of_a_produced_envelope_round_trips() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    later = env.retried().retried()
    assert pulsar.project(later)["bq-attempts"] == "2"
    assert dict(kafka.project(later)["headers"])["bq-attempts"] == b"2"
    assert rabbitmq.project(later)["headers"]["x-attempts"] == 2
    assert artemis.project(later)["application_properties"]["bq_attempts"] == "2"
    assert artemis.project(later)["message_id"] == env.meta.id
    assert sqs.project(later)["bq-source-lang"] == {"DataType": "String", "StringValue": "python"}
    # What a consumer reads back off the headers agrees with the body.
    assert kafka.reconcile(later, kafka.project(later)["headers"]).attempts == 2


@pytest.mark.parametrize(
    ("value", "decodes"),
    [(True, False), (1, True), (b"1", True), (b" ", True), (None, True), ([1], False)],
)
def test_asb_typed_values(value: Any, decodes: bool) -> None:
    assert (asb.gate({"bq-schema-version": value}) is None) is decodes
    assert (asb.gate({b"bq-schema-version": value}) is None) is decodes


def test_gate_violations_are_catalogued() -> None:
    found = [
        sqs.gate({"bq-schema-version": {"StringValue": "2"}}),
        asb.gate({"bq-schema-version": 2}),
        pulsar.gate({"bq-schema-version": "2"}),
        kafka.gate([("bq-schema-version", b"2")]),
        artemis.gate({"bq_schema_version": "2"}),
    ]
    for v in found:
        assert v is not None
        assert v.rule == rules.TRANSPORT_SCHEMA_VERSION_UNSUPPORTED and v.source == "conformance"
        assert "'2'" in v.message or " 2:" in v.message
    # Artemis reads the underscore name only.
    assert artemis.gate({"bq-schema-version": "2"}) is None
    # SQS without a StringValue (e.g. a binary attribute) is not gated.
    assert sqs.gate({"bq-schema-version": {"DataType": "Binary"}}) is None


def test_redis_frame_only_with_headers() -> None:
    env = order()
    assert redis.element(env, {}) == env.to_json()
    assert redis.element(env, {"traceparent": ""}) == env.to_json()  # blank values dropped
    framed = redis.element(env, {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"})
    assert framed != env.to_json() and framed.startswith(b'{"__bq_frame":1')
    reserved = redis.reserve(framed)
    assert reserved.body == env.to_json()
    assert reserved.headers == {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}


@pytest.mark.parametrize(
    "value",
    [b"not json", b'{"__bq_frame":1', b'{"__bq_frame":2,"body":"x"}', b'{"__bq_frame":1}', b"[]"],
)
def test_redis_values_that_are_not_frames_pass_through(value: bytes) -> None:
    assert redis.reserve(value) == redis.Reserved(value, {})
