"""Manifest section ``pulsar``: string properties, RedeliveryCount reconciliation, the gate."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, pulsar
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

SECTION = section("pulsar")
PROJECTION = SECTION["property_projection"]
RECONCILE = SECTION["attempts_reconciliation"]["cases"]
GATE = SECTION["schema_version_gate"]
GATE_CASES = gate_cases(GATE)


def test_property_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    properties = pulsar.project(envelope)
    assert properties == PROJECTION["properties"]
    assert all(type(v) is str for v in properties.values())


@pytest.mark.parametrize("case", RECONCILE, ids=[c["name"] for c in RECONCILE])
def test_attempts_reconciliation(case: dict[str, Any]) -> None:
    envelope = envelope_with_attempts(PROJECTION["envelope_file"], case["body_attempts"])
    count = case["redelivery_count"]
    assert pulsar.attempts(case["body_attempts"], count) == case["expected_attempts"]
    assert_reconciled(envelope, pulsar.reconcile(envelope, count), case["expected_attempts"])


@pytest.mark.parametrize("case", GATE_CASES, ids=gate_ids(GATE_CASES))
def test_schema_version_gate(case: dict[str, Any]) -> None:
    value = case_value(case)
    properties = {} if value is ABSENT else {GATE["property"]: value}
    assert consume(pulsar.gate(properties), GATE["fixture"]) == case["expect"]
