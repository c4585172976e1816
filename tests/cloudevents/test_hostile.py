"""Bad input never raises: any bytes, any headers, any JSON event; and the type-system pieces."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envelopekit import rules
from envelopekit._formats import URI_REFERENCE_PATTERN
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import (
    from_binary,
    from_message,
    from_structured,
    to_binary,
    to_structured,
)
from envelopekit.cloudevents._types import (
    http_decode,
    http_encode,
    instant_of,
    is_uri_reference,
)

BQ = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
EVENT: dict[str, Any] = json.loads(to_structured(BQ))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
HEADER_VALUE = st.text() | st.binary() | st.integers() | st.none() | st.booleans()


def _judged(verdict: Any) -> None:
    assert verdict.ok is (not verdict.violations)
    assert all(rules.is_rule(v.rule) for v in verdict.violations + verdict.warnings)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes(raw: bytes) -> None:
    _judged(from_structured(raw))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from([*EVENT, "data_base64", "x", "Ab"]), JSON, max_size=6))
def test_any_change_to_the_event(changes: dict[str, Any]) -> None:
    _judged(from_structured(json.dumps({**EVENT, **changes}).encode()))


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["http", "kafka", "amqp"]),
    st.lists(
        st.tuples(
            st.sampled_from(["ce-id", "ce_type", "cloudEvents_time", "cloudEvents:x", "CE-X"])
            | st.text(max_size=12),
            HEADER_VALUE,
        ),
        max_size=8,
    ),
    st.binary(max_size=100) | st.just(BQ.to_json()),
)
def test_any_headers(binding: Any, headers: list[tuple[str, Any]], body: bytes) -> None:
    _judged(from_binary(headers, body, binding=binding))
    _judged(from_message(headers, body, binding=binding))


# What transports hand over beside a mapping of headers: confluent-kafka's `headers()` is None
# for a message without any, a tombstone's value is None; a framework may give the body as text.
ODD_HEADERS: list[tuple[str, Any]] = [
    ("none", None),
    ("a-string", "ce-id"),
    ("bytes", b"ce-id"),
    ("an-integer", 5),
    ("a-one-item-pair", [("ce-id",)]),
    ("a-three-item-pair", [("ce-id", "1", "2")]),
    ("a-none-item", [None]),
    ("a-string-item", ["ab"]),
]


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
@pytest.mark.parametrize(("name", "headers"), ODD_HEADERS, ids=[n for n, _ in ODD_HEADERS])
def test_headers_of_any_shape(binding: Any, name: str, headers: Any) -> None:
    for read in (from_binary, from_message):
        verdict = read(headers, BQ.to_json(), binding=binding)
        _judged(verdict)
        assert rules.CLOUDEVENTS_ATTRIBUTE_MISSING in verdict.rules()


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
def test_pairs_beside_odd_items_are_read(binding: Any) -> None:
    message = to_binary(BQ, binding)
    headers: Any = [None, ("x",), *message.headers.items(), ("a", "b", "c")]
    verdict = from_binary(headers, message.body, binding=binding, content_type="application/json")
    assert verdict.ok, verdict.violations


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
def test_a_body_given_as_text_is_read_as_its_utf8(binding: Any) -> None:
    message = to_binary(BQ, binding)
    for read in (from_binary, from_message):
        verdict = read(
            message.headers, message.body.decode(), binding=binding, content_type="application/json"
        )
        assert verdict.ok, verdict.violations
    event = to_structured(BQ).decode()
    structured = from_message(
        {}, event, binding=binding, content_type="application/cloudevents+json"
    )
    assert structured.ok, structured.violations


@pytest.mark.parametrize("binding", ["http", "kafka", "amqp"])
@pytest.mark.parametrize("body", [None, 5, 10**12], ids=["none", "int", "huge-int"])
def test_a_body_that_is_no_bytes_is_no_data(binding: Any, body: Any) -> None:
    message = to_binary(BQ, binding)
    verdict = from_binary(message.headers, body, binding=binding)
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.CLOUDEVENTS_DATA_UNSUPPORTED, "")
    ]
    assert from_message(message.headers, body, binding=binding).rules() == verdict.rules()
    assert from_structured(body).rules() == [rules.JSON_INVALID]


@pytest.mark.parametrize("content_type", [5, b"application/cloudevents+json", ["x"]])
def test_a_content_type_that_is_no_text_never_raises(content_type: Any) -> None:
    message = to_binary(BQ, "amqp")
    _judged(from_message(message.headers, message.body, binding="amqp", content_type=content_type))


@pytest.mark.parametrize(
    ("value", "ok"),
    [("/babelqueue", True), ("my-service", True), ("", False), ("a:b[c]", False)],
)
def test_source_is_a_non_empty_uri_reference(value: str, ok: bool) -> None:
    # The grammar itself is tested against the format checkers in tests/test_formats.py.
    assert is_uri_reference(value) is ok
    assert is_uri_reference(value) is (
        value != "" and re.fullmatch(URI_REFERENCE_PATTERN, value) is not None
    )


def test_instants_compare_exactly() -> None:
    assert instant_of("2026-09-11T16:41:00Z") == instant_of("2026-09-11T18:41:00.000+02:00")
    assert instant_of("2026-09-11T16:41:00.1234567Z") == (1789144860, "1234567")
    assert instant_of("2026-09-11T16:41:00.1234567Z") != instant_of("2026-09-11T16:41:00.1234Z")
    assert instant_of("2026-02-30T00:00:00Z") is None
    assert instant_of("2026-09-11T16:41:00Z\n") is None


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_http_values_round_trip(value: str) -> None:
    try:
        encoded = http_encode(value)
    except UnicodeEncodeError:
        return  # a lone surrogate is no String
    assert all(0x21 <= ord(c) <= 0x7E and c not in '"' for c in encoded)
    assert http_decode(encoded) == value
