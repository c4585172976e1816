"""Manifest section ``asb``: Service Bus fields, DeliveryCount reconciliation, the typed gate."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, asb
from tests.babelqueue.conformance._gate import (
    ABSENT,
    assert_reconciled,
    case_value,
    consume,
    envelope_with_attempts,
    gate_cases,
    gate_ids,
)
from tests.babelqueue.conformance._manifest import fixture_bytes, section

SECTION = section("asb")
PROJECTION = SECTION["property_projection"]
RECONCILE = SECTION["attempts_reconciliation"]["cases"]
GATE = SECTION["schema_version_gate"]
GATE_CASES = gate_cases(GATE)


class Int32(int):
    """An AMQP ``int`` as a width-keeping AMQP stack hands it over (a Python int has no width)."""


class Int64(int):
    """An AMQP ``long``."""


def _float32(value: float) -> float:
    # A value that went through an AMQP float (32-bit); Python holds it as a double.
    rounded: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return rounded


def test_property_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    message = asb.project(envelope)
    properties = message["application_properties"]
    assert {k: v for k, v in message.items() if k != "application_properties"} == PROJECTION[
        "message"
    ]
    assert properties == PROJECTION["application_properties"]
    # Native AMQP-typed: numbers stay numbers, not strings.
    for key, value in PROJECTION["application_properties"].items():
        assert type(properties[key]) is type(value), key


@pytest.mark.parametrize("case", RECONCILE, ids=[c["name"] for c in RECONCILE])
def test_attempts_reconciliation(case: dict[str, Any]) -> None:
    envelope = envelope_with_attempts(PROJECTION["envelope_file"], case["body_attempts"])
    count = case["delivery_count"]
    assert asb.attempts(case["body_attempts"], count) == case["expected_attempts"]
    assert_reconciled(envelope, asb.reconcile(envelope, count), case["expected_attempts"])


def _typed_values(case: dict[str, Any]) -> list[Any]:
    """Every native value a case stands for (JSON numbers carry no width or float-ness)."""
    value = case_value(case)
    if case.get("value_type") == "float":
        return [float(value), _float32(float(value))]
    if type(value) is int:
        return [value, Int32(value), Int64(value)]
    return [value]


@pytest.mark.parametrize("case", GATE_CASES, ids=gate_ids(GATE_CASES))
def test_schema_version_gate(case: dict[str, Any]) -> None:
    for value in _typed_values(case):
        # A JSON null is a present-but-null property: the key is in the map.
        properties = {} if value is ABSENT else {GATE["property"]: value}
        assert consume(asb.gate(properties), GATE["fixture"]) == case["expect"], repr(value)


def test_the_float_case_is_a_real_float() -> None:
    floats = [c for c in GATE_CASES if c.get("value_type") == "float"]
    assert floats
    for case in floats:
        assert all(type(v) is float for v in _typed_values(case))
