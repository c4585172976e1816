"""Each refusal, per rule: reading gives exactly that rule at its pointer; writing raises it."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

import envelopekit as ek
from envelopekit import ProducerError, Settings, rules
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._json import needs_scan
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import (
    SOM_DATASCHEMA,
    from_binary,
    from_structured,
    to_attributes,
    to_binary,
    to_structured,
)
from envelopekit.matrix import MxRequest
from envelopekit.som import SomEnvelope
from tests._calls import python_calls
from tests.som._corpus import EXAMPLES, positive_envelope

BQ = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042}, queue="orders")
_STORY = positive_envelope(EXAMPLES / "story-context" / "tags.json")
SOM = SomEnvelope.model_validate({**_STORY, "causation_id": "0199a1c4-7a2e-7b31-8c55-4d2f9e6a1b06"})
OTHER_TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def structured(env: Any = BQ, drop: tuple[str, ...] = (), **changes: Any) -> ek.Verdict[Any]:
    event: dict[str, Any] = json.loads(to_structured(env))
    for name in drop:
        del event[name]
    event.update(changes)
    return from_structured(json.dumps(event).encode())


def http(
    env: Any = BQ,
    drop: tuple[str, ...] = (),
    extra: tuple[tuple[str, Any], ...] = (),
    **changes: Any,
) -> ek.Verdict[Any]:
    message = to_binary(env, "http")
    headers = {k: v for k, v in message.headers.items() if k not in drop}
    headers.update({k.replace("_", "-"): v for k, v in changes.items()})
    return from_binary([*headers.items(), *extra], message.body, binding="http")


def kafka(env: Any = BQ, drop: tuple[str, ...] = (), **changes: bytes) -> ek.Verdict[Any]:
    message = to_binary(env, "kafka")
    headers = {k: v for k, v in message.headers.items() if k not in drop}
    headers.update(changes)
    return from_binary(headers, message.body, binding="kafka")


def amqp(
    env: Any = BQ, separator: Any = "_", drop: tuple[str, ...] = (), **changes: Any
) -> ek.Verdict[Any]:
    message = to_binary(env, "amqp", separator=separator)
    headers: dict[str, Any] = {k: v for k, v in message.headers.items() if k not in drop}
    headers.update({k.replace("__", ":"): v for k, v in changes.items()})
    return from_binary(headers, message.body, binding="amqp", content_type="application/json")


def _deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


_MATRIX = json.loads(MxRequest.create("orders.create", {"id": 1}).to_json())

# (test id, rule, pointer, the verdict).
READ: list[tuple[str, str, str, Callable[[], ek.Verdict[Any]]]] = [
    # Required attributes.
    ("missing-id", rules.CLOUDEVENTS_ATTRIBUTE_MISSING, "/id", lambda: structured(drop=("id",))),
    (
        "missing-source",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "/source",
        lambda: structured(drop=("source",)),
    ),
    ("missing-type", rules.CLOUDEVENTS_ATTRIBUTE_MISSING, "/type", lambda: structured(type=None)),
    (
        "missing-specversion",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "/specversion",
        lambda: structured(drop=("specversion",)),
    ),
    (
        "not-an-object",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "",
        lambda: from_structured(b'["specversion", "1.0"]'),
    ),
    (
        "http-missing-ce-id",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "/ce-id",
        lambda: http(drop=("ce-id",)),
    ),
    (
        "kafka-missing-ce_specversion",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "/ce_specversion",
        lambda: kafka(drop=("ce_specversion",)),
    ),
    (
        "amqp-colon-missing-type",
        rules.CLOUDEVENTS_ATTRIBUTE_MISSING,
        "/cloudEvents:type",
        lambda: amqp(separator=":", drop=("cloudEvents:type",)),
    ),
    # specversion.
    (
        "specversion-0.3",
        rules.CLOUDEVENTS_SPECVERSION_UNSUPPORTED,
        "/specversion",
        lambda: structured(specversion="0.3"),
    ),
    (
        "http-specversion-2.0",
        rules.CLOUDEVENTS_SPECVERSION_UNSUPPORTED,
        "/ce-specversion",
        lambda: http(ce_specversion="2.0"),
    ),
    # Values their types refuse.
    (
        "specversion-number",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/specversion",
        lambda: structured(specversion=1.0),
    ),
    ("id-empty", rules.CLOUDEVENTS_ATTRIBUTE_INVALID, "/id", lambda: structured(id="")),
    ("id-number", rules.CLOUDEVENTS_ATTRIBUTE_INVALID, "/id", lambda: structured(id=42)),
    (
        "id-control-character",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/id",
        lambda: structured(id=BQ.meta.id + "\u0007"),
    ),
    (
        "source-with-space",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/source",
        lambda: structured(source="not a uri"),
    ),
    (
        "source-bad-scheme",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/source",
        lambda: structured(source="1abc:x"),
    ),
    (
        "time-minute-precision",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/time",
        lambda: structured(time="2018-04-05T18:31Z"),
    ),
    (
        "time-offset-out-of-range",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/time",
        lambda: structured(time="2018-04-05T18:31:00+25:00"),
    ),
    (
        "time-no-offset",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/time",
        lambda: structured(time="2018-04-05T18:31:00"),
    ),
    (
        "dataschema-relative",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/dataschema",
        lambda: structured(dataschema="/schemas/envelope.json"),
    ),
    (
        "subject-empty",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/subject",
        lambda: structured(subject=""),
    ),
    (
        "traceparent-malformed",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/traceparent",
        lambda: structured(traceparent="00-xyz"),
    ),
    (
        "extension-object",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/comexample",
        lambda: structured(comexample={"a": 1}),
    ),
    (
        "extension-integer-beyond-int32",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/comexample",
        lambda: structured(comexample=2**31),
    ),
    (
        "http-percent-starts-no-escape",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/ce-subject",
        lambda: http(ce_subject="orders%zz"),
    ),
    (
        "http-overlong-utf8",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/ce-subject",
        lambda: http(ce_subject="a%C0%A0b"),
    ),
    (
        "http-bytes-not-ascii",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/ce-subject",
        lambda: http(ce_subject="orders\u00e9".encode()),
    ),
    (
        "kafka-not-utf8",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/ce_subject",
        lambda: kafka(ce_subject=b"\xff\xfe"),
    ),
    (
        "amqp-time-float",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/cloudEvents_time",
        lambda: amqp(cloudEvents_time=1.5),
    ),
    (
        "amqp-time-naive-datetime",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/cloudEvents_time",
        lambda: amqp(cloudEvents_time=datetime(2026, 1, 1)),  # naive on purpose
    ),
    # Names.
    (
        "name-upper-case",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/comExample",
        lambda: structured(comExample="x"),
    ),
    (
        "name-dotted",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/com.example",
        lambda: from_structured(json.dumps({**json.loads(to_structured(BQ)), "com.example": "x"})),
    ),
    ("http-ce-data", rules.CLOUDEVENTS_ATTRIBUTE_NAME, "/ce-data", lambda: http(ce_data="x")),
    (
        "http-ce-datacontenttype",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/ce-datacontenttype",
        lambda: http(ce_datacontenttype="application/json"),
    ),
    (
        "http-given-twice",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/CE-ID",
        lambda: http(extra=(("CE-ID", BQ.meta.id),)),
    ),
    (
        "amqp-separators-mixed",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "",
        lambda: amqp(cloudEvents__comexample="x"),
    ),
    # Disagreements with the envelope.
    (
        "id-not-meta-id",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/id",
        lambda: structured(id="another"),
    ),
    (
        "type-not-job",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/type",
        lambda: structured(type="urn:babel:orders:deleted"),
    ),
    (
        "time-not-created-at",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/time",
        lambda: structured(time="2001-01-01T00:00:00Z"),
    ),
    (
        "subject-not-queue",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/subject",
        lambda: structured(subject="payments"),
    ),
    (
        "correlationid-not-trace-id",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/correlationid",
        lambda: structured(correlationid="another"),
    ),
    (
        "traceparent-of-another-trace",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/traceparent",
        lambda: structured(traceparent=OTHER_TRACE),
    ),
    (
        "dataschema-of-som",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/dataschema",
        lambda: from_structured(
            json.dumps({**json.loads(to_structured(BQ)), "dataschema": SOM_DATASCHEMA}),
            spec="babelqueue",
        ),
    ),
    (
        "som-causationid",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/causationid",
        lambda: structured(SOM, causationid="another"),
    ),
    (
        "som-time",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/time",
        lambda: structured(SOM, time="2026-09-11T16:41:00.000001Z"),
    ),
    (
        "kafka-type",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/ce_type",
        lambda: kafka(ce_type=b"urn:babel:orders:deleted"),
    ),
    (
        "amqp-timestamp",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/cloudEvents_time",
        lambda: amqp(cloudEvents_time=BQ.meta.created_at + 1),
    ),
    # Data that cannot be an envelope.
    (
        "no-data",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "/data",
        lambda: structured(drop=("data",)),
    ),
    (
        "data-and-data-base64",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "",
        lambda: structured(data_base64=base64.b64encode(BQ.to_json()).decode()),
    ),
    (
        "data-base64-not-base64",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "/data_base64",
        lambda: structured(drop=("data",), data_base64="not base64!"),
    ),
    (
        "datacontenttype-xml",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "/datacontenttype",
        lambda: structured(datacontenttype="application/xml"),
    ),
    (
        "http-content-type-text",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "/content-type",
        lambda: http(content_type="text/plain"),
    ),
    (
        "data-a-matrix-message",
        rules.CLOUDEVENTS_DATA_UNSUPPORTED,
        "/data",
        lambda: structured(drop=("dataschema",), data=_MATRIX),
    ),
    # The JSON text and the limits.
    ("json-invalid", rules.JSON_INVALID, "", lambda: from_structured(b'{"id": ')),
    (
        "data-too-large",
        rules.MESSAGE_TOO_LARGE,
        "/data",
        lambda: from_structured(to_structured(BQ), settings=Settings(max_message_bytes=100)),
    ),
    (
        "event-too-large",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: from_structured(
            to_structured(BQ)[:-1] + b',"comexample":"' + b"x" * 70_000 + b'"}',
            settings=Settings(max_message_bytes=100),
        ),
    ),
    ("too-deep", rules.MESSAGE_TOO_DEEP, "", lambda: from_structured(_deep(200))),
    (
        "http-attributes-too-large",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: http(ce_comexample="x" * 70_000),
    ),
]


@pytest.mark.parametrize(("name", "rule", "at", "read"), READ, ids=[c[0] for c in READ])
def test_refused_with_its_rule_at_its_pointer(
    name: str, rule: str, at: str, read: Callable[[], ek.Verdict[Any]]
) -> None:
    verdict = read()
    assert not verdict.ok
    assert verdict.envelope is None
    assert verdict.rules() == [rule], verdict.violations
    assert at in [v.pointer for v in verdict.violations], verdict.violations
    assert all(v.source == rules.source_of(v.rule) for v in verdict.violations)


def test_every_cloudevents_rule_is_tested() -> None:
    named = {rule for rule in rules.NAMED if rule.startswith("cloudevents.")}
    tested = {case[1] for case in READ} | {case[1] for case in WRITE}
    assert named <= tested


# What is accepted though it looks unusual: the spec says to.
ACCEPTED: list[tuple[str, Callable[[], ek.Verdict[Any]]]] = [
    ("null-attribute-is-unset", lambda: structured(subject=None)),
    ("optional-attributes-left-out", lambda: structured(drop=("subject", "time", "dataschema"))),
    ("same-instant-other-offset", lambda: structured(SOM, time="2026-09-11T18:41:00+02:00")),
    ("lower-case-t-and-z", lambda: structured(SOM, time="2026-09-11t16:41:00z")),
    ("extension-boolean-and-integer", lambda: structured(comexample=True, comcount=7)),
    ("long-extension-name-read", lambda: structured(comexamplevendorattribute="x")),
    ("http-quoted-string", lambda: http(ce_subject='"orders"')),
    ("http-needless-percent-encoding", lambda: http(ce_subject="%6Frders")),
    (
        "http-header-names-in-any-case",
        lambda: http(drop=("ce-id",), extra=(("CE-Id", BQ.meta.id),)),
    ),
    ("http-json-with-charset", lambda: http(content_type="application/json; charset=utf-8")),
    ("amqp-timestamp-milliseconds", lambda: amqp(cloudEvents_time=BQ.meta.created_at)),
    (
        "amqp-timestamp-datetime",
        lambda: amqp(
            cloudEvents_time=datetime.fromtimestamp(BQ.meta.created_at / 1000, tz=timezone.utc)
        ),
    ),
    ("amqp-native-extension-values", lambda: amqp(cloudEvents_comcount=3)),
    ("other-headers-ignored", lambda: http(x_request_id="abc")),
]


@pytest.mark.parametrize(("name", "read"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted(name: str, read: Callable[[], ek.Verdict[Any]]) -> None:
    verdict = read()
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None


# --- writing ---------------------------------------------------------------------------------


def _babel(**changes: Any) -> BabelEnvelope[Any]:
    wire = BQ.to_wire()
    meta = {**wire["meta"], **changes.pop("meta", {})}
    return BabelEnvelope.model_validate({**wire, **changes, "meta": meta})


WRITE: list[tuple[str, str, str, Callable[[], object]]] = [
    (
        "job-control-character",
        rules.CLOUDEVENTS_UNREPRESENTABLE,
        "/job",
        lambda: to_structured(_babel(job="urn:babel:orders:\ncreated")),
    ),
    (
        "queue-c1-control-character",
        rules.CLOUDEVENTS_UNREPRESENTABLE,
        "/meta/queue",
        lambda: to_binary(_babel(meta={"queue": "orders\u0085"})),
    ),
    (
        "created-at-past-9999",
        rules.CLOUDEVENTS_UNREPRESENTABLE,
        "/meta/created_at",
        lambda: to_attributes(_babel(meta={"created_at": 253_402_300_800_000})),
    ),
    (
        "source-not-a-uri-reference",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/source",
        lambda: to_structured(BQ, source="my service"),
    ),
    (
        "traceparent-malformed",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/traceparent",
        lambda: to_binary(SOM, "kafka", traceparent="00-abc"),
    ),
    (
        "tracestate-empty",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/tracestate",
        lambda: to_attributes(BQ, tracestate=""),
    ),
    (
        "tracestate-without-traceparent",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/tracestate",
        lambda: to_attributes(SOM, tracestate="vendor=1"),
    ),
    (
        "traceparent-of-another-trace",
        rules.CLOUDEVENTS_ATTRIBUTE_MISMATCH,
        "/traceparent",
        lambda: to_binary(BQ, "amqp", traceparent=OTHER_TRACE),
    ),
]


WRITE += [
    (
        "extension-upper-case",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/comExample",
        lambda: to_structured(BQ, extensions={"comExample": "x"}),
    ),
    (
        "extension-longer-than-20",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/comexamplevendorattribute",
        lambda: to_binary(BQ, extensions={"comexamplevendorattribute": "x"}),
    ),
    (
        "extension-a-mapped-attribute",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/subject",
        lambda: to_attributes(SOM, extensions={"subject": "x"}),
    ),
    (
        "extension-data",
        rules.CLOUDEVENTS_ATTRIBUTE_NAME,
        "/data",
        lambda: to_attributes(BQ, extensions={"data": "x"}),
    ),
    (
        "extension-float",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/comratio",
        lambda: to_binary(BQ, "kafka", extensions={"comratio": 0.5}),  # type: ignore[call-overload]
    ),
    (
        "extension-integer-beyond-int32",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/comcount",
        lambda: to_attributes(BQ, extensions={"comcount": 2**31}),
    ),
    (
        "extension-control-character",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "/comnote",
        lambda: to_attributes(BQ, extensions={"comnote": "a\u0000b"}),
    ),
    (
        "extensions-not-a-mapping",
        rules.CLOUDEVENTS_ATTRIBUTE_INVALID,
        "",
        lambda: to_attributes(BQ, extensions=[("a", "b")]),  # type: ignore[arg-type]
    ),
]

# Attributes past what a reader takes: refused as the reader would refuse the event.
_LONG_URN = BabelEnvelope.create("urn:babel:" + "é" * 12_000, {"n": 1})  # 72,000 characters encoded
_LONG_QUEUE = BabelEnvelope.create("urn:babel:orders:created", {"n": 1}, queue="q" * 70_000)
WRITE += [
    (
        "http-attributes-past-what-a-reader-takes",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: to_binary(_LONG_URN, "http"),
    ),
    (
        "kafka-attributes-past-what-a-reader-takes",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: to_binary(_LONG_QUEUE, "kafka"),
    ),
    (
        "amqp-extension-past-what-a-reader-takes",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: to_binary(BQ, "amqp", extensions={"comnote": "n" * 70_000}),
    ),
    (
        "structured-extension-past-what-a-reader-takes",
        rules.MESSAGE_TOO_LARGE,
        "",
        lambda: to_structured(BQ, extensions={"comnote": "n" * 2_200_000}),
    ),
]


@pytest.mark.parametrize(("name", "rule", "at", "write"), WRITE, ids=[c[0] for c in WRITE])
def test_writing_refuses_what_cannot_be_expressed(
    name: str, rule: str, at: str, write: Callable[[], object]
) -> None:
    with pytest.raises(ProducerError) as raised:
        write()
    assert [(v.rule, v.pointer) for v in raised.value.violations] == [(rule, at)]


@pytest.mark.parametrize("limit", [100, 1_000_000], ids=["below-the-environment", "above-it"])
def test_a_structured_event_is_written_within_the_settings_given(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    # The reader's settings, given to both: what one reads, the other writes, whatever the
    # environment says (its limit here is the other one of the two).
    other = 1_000_000 if limit == 100 else 100
    monkeypatch.setenv("ENVELOPEKIT_MAX_MESSAGE_BYTES", str(other))
    ek.get_settings.cache_clear()  # (the autouse fixture clears it again after the test)
    reader = Settings(max_message_bytes=limit)
    env = _babel(data={"text": "x" * 100_000})
    if limit == 100:
        # 2 x 100 bytes and the attributes' 64 KiB: the 100 KB data is past it.
        with pytest.raises(ProducerError) as raised:
            to_structured(env, settings=reader)
        assert [(v.rule, v.pointer) for v in raised.value.violations] == [
            (rules.MESSAGE_TOO_LARGE, "")
        ]
    else:
        assert from_structured(to_structured(env, settings=reader), settings=reader).ok


def test_a_caller_trace_context_is_written() -> None:
    parent = "00-" + BQ.trace_id.replace("-", "") + "-b7ad6b7169203331-00"
    attributes = to_attributes(BQ, traceparent=parent, tracestate="vendor=1")
    assert attributes["traceparent"] == parent
    assert attributes["tracestate"] == "vendor=1"
    som = to_attributes(SOM, traceparent=OTHER_TRACE, source="https://newsroom.example/cms")
    assert som["traceparent"] == OTHER_TRACE
    assert som["source"] == "https://newsroom.example/cms"
    assert from_structured(to_structured(SOM, traceparent=OTHER_TRACE)).ok


def test_http_values_are_percent_encoded_as_the_binding_says() -> None:
    env = _babel(meta={"queue": 'a "b" 100% €😀'})
    headers = to_binary(env, "http").headers
    assert headers["ce-subject"] == "a%20%22b%22%20100%25%20%E2%82%AC%F0%9F%98%80"
    assert headers["ce-type"] == "urn:babel:orders:created"
    verdict = from_binary(headers, env.to_json(), binding="http", spec="babelqueue")
    assert verdict.envelope is not None
    assert verdict.envelope.meta.queue == 'a "b" 100% €😀'


def test_wrong_arguments_are_programming_errors() -> None:
    with pytest.raises(TypeError):
        to_attributes({"job": "urn:babel:x"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="binding"):
        to_binary(BQ, "nats")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="separator"):
        to_binary(BQ, "amqp", separator="/")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="binding"):
        from_binary({}, b"{}", binding="nats")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="spec"):
        from_structured(to_structured(BQ), spec="matrix")


@pytest.mark.parametrize("setting", ["warn", "refuse"])
def test_a_member_repeated_in_structured_data_follows_the_setting(setting: Any) -> None:
    body = to_structured(BQ).replace(b'"attempts":0', b'"attempts":0,"attempts":0')
    verdict = from_structured(body, settings=Settings(duplicate_keys=setting))
    found = verdict.violations if setting == "refuse" else verdict.warnings
    assert [(v.rule, v.pointer) for v in found] == [(rules.JSON_DUPLICATE_KEY, "/data/attempts")]
    assert verdict.ok is (setting == "warn")
    assert from_structured(body).ok


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_a_non_finite_number_in_structured_data_is_refused(token: bytes) -> None:
    body = to_structured(BQ).replace(b'"order_id":1042', b'"order_id":' + token)
    verdict = from_structured(body)
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_NON_FINITE, "/data/data/order_id")
    ]
    message = to_binary(BQ, "http")
    binary = from_binary(message.headers, message.body.replace(b"1042", token), binding="http")
    assert binary.rules() == [rules.NUMBER_NON_FINITE]


def test_integers_beyond_int64_in_babelqueue_data_are_kept() -> None:
    wide = b'{"job":"urn:babel:x:y","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    wide += b'"data":{"n":100000000000000000000},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-'
    wide += b'cdef01234567","queue":"q","lang":"go","schema_version":1,"created_at":1749132727000},'
    wide += b'"attempts":0}'
    env = BabelEnvelope.model_validate_json(wide)
    verdict = from_structured(to_structured(env))
    assert verdict.envelope is not None
    assert verdict.envelope.to_json() == env.to_json() == wide
    assert [w.rule for w in verdict.warnings] == [rules.NUMBER_BEYOND_INT64]


def _large_event(last: bytes) -> bytes:
    """A structured event over 16 KiB: its envelope's data holds 30,000 plain numbers."""
    numbers = b"[" + b",".join([b"-1", b"12", b"0.5"] * 10_000) + b"," + last + b"]"
    body = to_structured(BQ).replace(b'"order_id":1042', b'"order_id":' + numbers)
    assert len(body) > FULL_REPORT_BYTES
    return body


def test_a_large_events_plain_numbers_are_not_walked() -> None:
    """C passes prove the numbers of a large event plain: its data is not walked for NaN (a
    Python step a value, 10x ``orjson.loads`` on 1 MiB of small integers)."""
    found: list[Any] = []
    entered = python_calls(lambda: found.append(from_structured(_large_event(b"7"))))
    assert needs_scan.__code__ not in entered
    assert found[0].ok, found[0].violations


@pytest.mark.parametrize("token", [b"NaN", b"-Infinity", b"1e400"])
def test_a_large_events_non_finite_number_is_still_refused(token: bytes) -> None:
    verdict = from_structured(_large_event(token))
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_NON_FINITE, "/data/data/order_id/30000")
    ]
