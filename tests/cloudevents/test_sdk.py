"""The official CloudEvents SDK as the oracle: it reads what we write, we read what it writes.

``cloudevents`` 2.x (a test-only peer): its JSON format and its HTTP, Kafka and AMQP bindings,
each in structured and binary mode, over every corpus envelope.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

import pytest
from cloudevents.core.bindings import amqp, http, kafka
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from envelopekit.cloudevents import (
    STRUCTURED_CONTENT_TYPE,
    from_binary,
    from_message,
    from_structured,
    to_attributes,
    to_binary,
    to_structured,
)
from tests.cloudevents._corpus import VALID, envelope, ids

FORMAT = JSONFormat()


def _moment(text: str) -> datetime:
    # Python 3.10's fromisoformat takes neither `Z` nor every fraction width: ours write 3 or 6.
    return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))


def assert_same_event(event: Any, env: Any) -> None:
    """The SDK's event has our attributes (``time`` as the same instant) and the envelope."""
    expected: dict[str, Any] = dict(to_attributes(env))
    got = dict(event.get_attributes())
    assert _moment(expected.pop("time")) == got.pop("time")
    assert got == expected
    assert event.get_data() == json.loads(env.to_json())


# --- the SDK reads what we write -------------------------------------------------------------


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_sdk_reads_our_structured_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    body = to_structured(env)
    assert_same_event(FORMAT.read(None, body), env)
    message = http.HTTPMessage({"content-type": STRUCTURED_CONTENT_TYPE}, body)
    assert_same_event(http.from_http(message, FORMAT), env)
    record = kafka.KafkaMessage({"content-type": STRUCTURED_CONTENT_TYPE.encode()}, None, body)
    assert_same_event(kafka.from_kafka(record, FORMAT), env)
    frame = amqp.AMQPMessage({"content-type": STRUCTURED_CONTENT_TYPE}, {}, body)
    assert_same_event(amqp.from_amqp(frame, FORMAT), env)


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_sdk_reads_our_http_binary_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    message = to_binary(env, "http")
    received = http.HTTPMessage(message.headers, message.body)
    assert_same_event(http.from_binary(received, FORMAT), env)
    assert_same_event(http.from_http(received, FORMAT), env)


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_sdk_reads_our_kafka_binary_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    message = to_binary(env, "kafka")
    record = kafka.KafkaMessage(message.headers, None, message.body)
    assert_same_event(kafka.from_binary(record, FORMAT), env)
    assert_same_event(kafka.from_kafka(record, FORMAT), env)


@pytest.mark.parametrize("separator", ["_", ":"])
@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_sdk_reads_our_amqp_binary_event(name: str, spec: str, raw: bytes, separator: Any) -> None:
    env = envelope(spec, raw)
    message = to_binary(env, "amqp", separator=separator)
    frame = amqp.AMQPMessage({"content-type": message.content_type}, message.headers, message.body)
    assert_same_event(amqp.from_binary(frame, FORMAT), env)
    assert_same_event(amqp.from_amqp(frame, FORMAT), env)


# --- we read what the SDK writes -------------------------------------------------------------


def sdk_event(env: Any, data: Any = None) -> CloudEvent:
    """The SDK's own event for ``env``: our attributes, ``time`` a datetime, the envelope."""
    attributes: dict[str, Any] = dict(to_attributes(env))
    attributes["time"] = _moment(attributes["time"])
    return CloudEvent(attributes, json.loads(env.to_json()) if data is None else data)


def assert_read(verdict: Any, env: Any) -> None:
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert verdict.envelope.to_json() == env.to_json()


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_we_read_the_sdks_structured_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    body = FORMAT.write(sdk_event(env))
    assert_read(from_structured(body), env)
    message = http.to_structured(sdk_event(env), FORMAT)
    assert_read(from_message(message.headers, message.body, binding="http"), env)
    record = kafka.to_structured(sdk_event(env), FORMAT)
    assert_read(from_message(record.headers, record.value, binding="kafka"), env)
    frame = amqp.to_structured(sdk_event(env), FORMAT)
    content_type = frame.properties["content-type"]
    assert_read(
        from_message(
            frame.application_properties,
            frame.application_data,
            binding="amqp",
            content_type=content_type,
        ),
        env,
    )


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_we_read_the_sdks_data_base64_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    body = FORMAT.write(sdk_event(env, data=env.to_json()))
    assert json.loads(body)["data_base64"] == base64.b64encode(env.to_json()).decode()
    assert_read(from_structured(body, spec=spec), env)


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_we_read_the_sdks_http_binary_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    message = http.to_binary(sdk_event(env), FORMAT)
    assert_read(from_binary(message.headers, message.body, binding="http"), env)
    assert_read(from_message(message.headers, message.body, binding="http"), env)


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_we_read_the_sdks_kafka_binary_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    record = kafka.to_binary(sdk_event(env), FORMAT)
    assert_read(from_binary(record.headers, record.value, binding="kafka"), env)
    assert_read(from_message(record.headers, record.value, binding="kafka"), env)


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_we_read_the_sdks_amqp_binary_event(name: str, spec: str, raw: bytes) -> None:
    env = envelope(spec, raw)
    frame = amqp.to_binary(sdk_event(env), FORMAT)
    # The SDK writes `time` as a native AMQP timestamp: Unix milliseconds.
    assert isinstance(frame.application_properties["cloudEvents_time"], int)
    content_type = frame.properties["content-type"]
    verdict = from_binary(
        frame.application_properties,
        frame.application_data,
        binding="amqp",
        content_type=content_type,
    )
    assert_read(verdict, env)


EXTENSIONS: dict[str, str | int | bool] = {
    "partitionkey": "order-1042",
    "comcount": 7,
    "comflag": True,
}
AS_STRINGS = {"partitionkey": "order-1042", "comcount": "7", "comflag": "true"}


@pytest.mark.parametrize("mode", ["structured", "http", "kafka", "amqp"])
def test_extensions_reach_the_sdk_typed_as_each_format_types_them(mode: str) -> None:
    env = envelope(*VALID[0][1:])
    if mode == "structured":
        event = FORMAT.read(None, to_structured(env, extensions=EXTENSIONS))
        expected: dict[str, Any] = EXTENSIONS
    elif mode == "http":
        message = to_binary(env, "http", extensions=EXTENSIONS)
        event = http.from_binary(http.HTTPMessage(message.headers, message.body), FORMAT)
        expected = AS_STRINGS  # header values are canonical strings
    elif mode == "kafka":
        record = to_binary(env, "kafka", extensions=EXTENSIONS)
        event = kafka.from_binary(kafka.KafkaMessage(record.headers, None, record.body), FORMAT)
        expected = AS_STRINGS
    else:
        frame = to_binary(env, "amqp", extensions=EXTENSIONS)
        event = amqp.from_binary(
            amqp.AMQPMessage({"content-type": frame.content_type}, frame.headers, frame.body),
            FORMAT,
        )
        expected = EXTENSIONS  # AMQP booleans and longs
    for name, value in expected.items():
        assert event.get_extension(name) == value
    assert event.get_data() == json.loads(env.to_json())


@pytest.mark.parametrize("mode", ["structured", "http", "kafka", "amqp"])
def test_we_read_an_event_with_extensions(mode: str) -> None:
    env = envelope(*VALID[0][1:])
    if mode == "structured":
        verdict = from_structured(to_structured(env, extensions=EXTENSIONS))
    else:
        binding: Any = mode
        message = to_binary(env, binding, extensions=EXTENSIONS)
        verdict = from_binary(
            message.headers, message.body, binding=binding, content_type=message.content_type
        )
    assert_read(verdict, env)


@pytest.mark.parametrize("mode", ["structured", "http", "kafka", "amqp"])
def test_the_verdict_gives_the_attributes_as_received(mode: str) -> None:
    env = envelope(*VALID[-1][1:])  # a SOM envelope: no trace context of its own
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    options: dict[str, Any] = {"traceparent": parent, "source": "https://newsroom.example/cms"}
    written = to_attributes(env, extensions=EXTENSIONS, **options)
    if mode == "structured":
        verdict = from_structured(to_structured(env, extensions=EXTENSIONS, **options))
        expected: dict[str, Any] = dict(written)
    else:
        binding: Any = mode
        message = to_binary(env, binding, extensions=EXTENSIONS, **options)
        verdict = from_binary(
            message.headers, message.body, binding=binding, content_type=message.content_type
        )
        expected = dict(written) if mode == "amqp" else {**written, **AS_STRINGS}
    assert verdict.ok, verdict.violations
    assert verdict.attributes == expected
    assert verdict.attributes["traceparent"] == parent
