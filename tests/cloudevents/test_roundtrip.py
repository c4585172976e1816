"""Every corpus envelope survives envelope -> CloudEvent -> envelope byte for byte, in each mode."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import pytest

import envelopekit as ek
from envelopekit import rules
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import (
    BABELQUEUE_DATASCHEMA,
    SOM_DATASCHEMA,
    STRUCTURED_CONTENT_TYPE,
    EventVerdict,
    from_binary,
    from_message,
    from_structured,
    to_attributes,
    to_binary,
    to_structured,
)
from envelopekit.som import SomEnvelope
from tests.cloudevents._corpus import INVALID, VALID, envelope, ids

MODES = ["structured", "http", "kafka", "amqp", "amqp-colon"]


def write_and_read(
    env: Any, mode: str, spec: str = "auto", extensions: dict[str, Any] | None = None
) -> EventVerdict[Any]:
    if mode == "structured":
        return from_structured(to_structured(env, extensions=extensions), spec=spec)
    message = _binary(env, mode, extensions)
    binding: Any = mode.partition("-")[0]
    content_type = message.content_type if binding == "amqp" else None
    return from_binary(
        message.headers, message.body, binding=binding, content_type=content_type, spec=spec
    )


def _binary(env: Any, mode: str, extensions: dict[str, Any] | None = None) -> Any:
    binding: Any = mode.partition("-")[0]
    return to_binary(
        env, binding, extensions=extensions, separator=":" if mode == "amqp-colon" else "_"
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_the_envelope_survives_byte_for_byte(name: str, spec: str, raw: bytes, mode: str) -> None:
    original = envelope(spec, raw)
    verdict = write_and_read(original, mode)
    assert verdict.ok, verdict.violations
    assert verdict.spec == spec
    assert verdict.envelope is not None
    assert type(verdict.envelope) is type(original)
    assert verdict.envelope.to_json() == original.to_json()
    # The event carries what the envelope re-emits, so it is judged as that is.
    assert verdict.warnings == ek.check(original.to_json(), spec=spec).warnings


@pytest.mark.parametrize("mode", ["structured", "http"])
@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_the_spec_named_by_the_caller_reads_the_same(
    name: str, spec: str, raw: bytes, mode: str
) -> None:
    original = envelope(spec, raw)
    verdict = write_and_read(original, mode, spec=spec)
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert verdict.envelope.to_json() == original.to_json()
    other = "som" if spec == "babelqueue" else "babelqueue"
    assert not write_and_read(original, mode, spec=other).ok


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_structured_mode_embeds_the_envelope_bytes(name: str, spec: str, raw: bytes) -> None:
    original = envelope(spec, raw)
    body = to_structured(original)
    assert body.endswith(b',"data":' + original.to_json() + b"}")
    event = json.loads(body)
    assert {k: v for k, v in event.items() if k != "data"} == to_attributes(original)
    assert event["data"] == json.loads(original.to_json())


@pytest.mark.parametrize(("name", "spec", "raw"), VALID, ids=ids(VALID))
def test_the_mapping_table(name: str, spec: str, raw: bytes) -> None:
    original = envelope(spec, raw)
    attributes = to_attributes(original)
    assert list(attributes)[:4] == ["specversion", "id", "source", "type"]
    assert attributes["specversion"] == "1.0"
    assert attributes["datacontenttype"] == "application/json"
    if isinstance(original, BabelEnvelope):
        assert attributes["id"] == original.meta.id
        assert attributes["source"] == "/babelqueue"
        assert attributes["type"] == original.job
        assert attributes["subject"] == original.meta.queue
        assert attributes["dataschema"] == BABELQUEUE_DATASCHEMA
        assert attributes["correlationid"] == original.trace_id
        assert str(attributes["traceparent"]).split("-")[1] == original.trace_id.replace("-", "")
        assert "causationid" not in attributes
    else:
        assert isinstance(original, SomEnvelope)
        system = original.originating_system
        assert attributes["id"] == original.message_id
        assert attributes["source"] == f"/som/{system.system_type}/{system.system_id}"
        assert attributes["type"] == original.message_type
        assert attributes["time"] == original.timestamp
        assert attributes["subject"] == original.topic
        assert attributes["dataschema"] == SOM_DATASCHEMA
        assert attributes["correlationid"] == original.correlation_id
        assert "traceparent" not in attributes


def test_babelqueue_time_is_created_at_in_milliseconds() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
    env = env.model_copy(update={"meta": env.meta.model_copy(update={"created_at": 1749132727123})})
    assert to_attributes(env)["time"] == "2025-06-05T14:12:07.123Z"
    zero = env.model_copy(update={"meta": env.meta.model_copy(update={"created_at": 0})})
    assert to_attributes(zero)["time"] == "1970-01-01T00:00:00.000Z"


def test_the_official_schema_ids_are_the_dataschemas() -> None:
    from tests.conftest import DATA

    for path, expected in (
        ("babelqueue/schema/message-envelope.schema.json", BABELQUEUE_DATASCHEMA),
        ("som/schema/envelope.schema.json", SOM_DATASCHEMA),
    ):
        assert json.loads((DATA / path).read_bytes())["$id"] == expected


def test_a_retry_keeps_the_event_id_and_the_new_attempts_travel() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}).retried()
    verdict = from_structured(to_structured(env), spec="babelqueue")
    assert verdict.envelope is not None
    assert verdict.envelope.attempts == 1
    assert to_attributes(env)["id"] == env.meta.id


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
def test_from_message_tells_the_modes_apart(binding: Any) -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
    message = to_binary(env, binding)
    content_type = message.content_type if binding == "amqp" else None
    binary = from_message(message.headers, message.body, binding=binding, content_type=content_type)
    assert binary.ok, binary.violations
    structured_headers: dict[str, Any] = (
        {} if binding == "amqp" else {"Content-Type": STRUCTURED_CONTENT_TYPE}
    )
    if binding == "kafka":
        structured_headers = {"content-type": STRUCTURED_CONTENT_TYPE.encode()}
    structured = from_message(
        structured_headers,
        to_structured(env),
        binding=binding,
        content_type=STRUCTURED_CONTENT_TYPE if binding == "amqp" else None,
    )
    assert structured.ok, structured.violations
    assert binary.envelope is not None and structured.envelope is not None
    assert binary.envelope.to_json() == structured.envelope.to_json() == env.to_json()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("urn", "é" * 7_000),  # 42,000 characters percent-encoded: read back
        ("urn", "é" * 11_000),  # 66,000: past what a reader takes in HTTP only
        ("urn", "\U0001f600" * 16_000),  # 64,000 bytes in Kafka, 192,000 characters in HTTP
        ("queue", "q" * 65_300),  # past it with the other attributes, in every binding
        ("extension", "x" * 65_400),
    ],
    ids=["urn-42k", "urn-66k", "urn-astral", "queue-65k", "extension-65k"],
)
def test_what_is_written_is_read_back_or_refused_at_once(mode: str, field: str, value: str) -> None:
    # What a writer produces, its reader reads back; an event it could not is never produced.
    urn = "urn:babel:" + value if field == "urn" else "urn:babel:orders:created"
    env = BabelEnvelope.create(urn, {"n": 1}, queue=value if field == "queue" else None)
    extensions = {"comnote": value} if field == "extension" else None
    try:
        verdict = write_and_read(env, mode, extensions=extensions)
    except ek.ProducerError as refused:
        assert [(v.rule, v.pointer) for v in refused.violations] == [(rules.MESSAGE_TOO_LARGE, "")]
        return
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert verdict.envelope.to_json() == env.to_json()


class Region(str, Enum):
    EU = "eu-west"


class Priority(int, Enum):
    HIGH = 7
    BEYOND_INT32 = 2**40


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("value", "written"), [(Region.EU, "eu-west"), (Priority.HIGH, 7)], ids=["str-enum", "int-enum"]
)
def test_an_extension_of_a_json_type_subclass_is_written_as_its_value(
    mode: str, value: Any, written: Any
) -> None:
    # An enum member of a string or an integer is its value in every mode (its `str()` would
    # be `Region.EU` in a header, `"eu-west"` in the JSON format).
    env = BabelEnvelope.create("urn:babel:orders:created", {"n": 1})
    extensions = {"comregion": value}
    if mode.startswith("amqp"):
        headers = _binary(env, mode, extensions).headers
        sent = headers["cloudEvents:comregion" if mode == "amqp-colon" else "cloudEvents_comregion"]
        assert type(sent) is type(written)  # a plain value an AMQP codec knows
    verdict = write_and_read(env, mode, extensions=extensions)
    assert verdict.ok, verdict.violations
    read = verdict.attributes["comregion"]
    assert read == (str(written) if mode in ("http", "kafka") else written)


@pytest.mark.timeout(10)  # `member in range(-2**31, 2**31)` walked the range: minutes
def test_an_integer_subclass_is_judged_by_its_bounds_at_once() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"n": 1})
    with pytest.raises(ek.ProducerError) as refused:
        to_attributes(env, extensions={"compriority": Priority.BEYOND_INT32})
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        (rules.CLOUDEVENTS_ATTRIBUTE_INVALID, "/compriority")
    ]
    message = to_binary(env, "amqp")
    for value, ok in ((Priority.HIGH, True), (Priority.BEYOND_INT32, False)):
        headers = {**message.headers, "cloudEvents_compriority": value}
        verdict = from_binary(headers, message.body, binding="amqp")
        assert verdict.ok is ok, verdict.violations


# --- an event around a message `check` refuses is refused with the same rules ---------------

_CARRIER = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})


@pytest.mark.parametrize(("name", "raw", "expected"), INVALID, ids=ids(INVALID))
def test_an_invalid_fixture_in_structured_mode(name: str, raw: bytes, expected: list[str]) -> None:
    event: dict[str, Any] = {**to_attributes(_CARRIER), "data": json.loads(raw)}
    verdict = from_structured(json.dumps(event).encode(), spec="babelqueue")
    assert not verdict.ok
    assert verdict.envelope is None
    assert verdict.rules() == expected
    checked = ek.check(raw, spec="babelqueue")
    expected_pointers = ["/data" + v.pointer for v in checked.violations]
    assert [v.pointer for v in verdict.violations] == expected_pointers


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
@pytest.mark.parametrize(("name", "raw", "expected"), INVALID, ids=ids(INVALID))
def test_an_invalid_fixture_in_binary_mode(
    name: str, raw: bytes, expected: list[str], binding: Any
) -> None:
    message = to_binary(_CARRIER, binding)
    verdict = from_binary(message.headers, raw, binding=binding, content_type="application/json")
    assert verdict.rules() == expected
    assert verdict.violations == ek.check(raw, spec="babelqueue").violations


def test_an_unknown_rule_never_appears() -> None:
    for _, raw, _expected in INVALID:
        event = {**to_attributes(_CARRIER), "data": json.loads(raw)}
        for found in from_structured(json.dumps(event)).violations:
            assert rules.is_rule(found.rule)
