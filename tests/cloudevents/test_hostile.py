"""Bad input never raises: any bytes, any headers, any JSON event; and the type-system pieces."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envelopekit import rules
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.cloudevents import from_binary, from_message, from_structured, to_structured
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


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("/babelqueue", True),
        ("https://example.com/a?b=c#d", True),
        ("urn:babel:orders:created", True),
        ("my-service", True),
        ("a/b:c", True),
        ("", False),
        ("a b", False),
        ("1abc:x", False),
        ("a:b#c#d", False),
        ("%zz", False),
        ("é", False),
    ],
)
def test_uri_reference(value: str, ok: bool) -> None:
    assert is_uri_reference(value) is ok


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
