"""Manifest section ``sqs``: MessageAttributes projection, attempts reconciliation, the gate."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, sqs
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

SECTION = section("sqs")
PROJECTION = SECTION["attribute_projection"]
RECONCILE = SECTION["attempts_reconciliation"]["cases"]
GATE = SECTION["schema_version_gate"]
GATE_CASES = gate_cases(GATE)


def test_attribute_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    assert sqs.project(envelope) == PROJECTION["message_attributes"]


@pytest.mark.parametrize("case", RECONCILE, ids=[c["name"] for c in RECONCILE])
def test_attempts_reconciliation(case: dict[str, Any]) -> None:
    fixture = PROJECTION["envelope_file"]
    envelope = envelope_with_attempts(fixture, case["body_attempts"])
    count = case["approximate_receive_count"]
    assert sqs.attempts(case["body_attempts"], count) == case["expected_attempts"]
    assert_reconciled(envelope, sqs.reconcile(envelope, count), case["expected_attempts"])


@pytest.mark.parametrize("case", GATE_CASES, ids=gate_ids(GATE_CASES))
def test_schema_version_gate(case: dict[str, Any]) -> None:
    value = case_value(case)
    attributes: dict[str, Any] = {}
    if value is not ABSENT:
        attributes[GATE["property"]] = {"DataType": "String", "StringValue": value}
    assert consume(sqs.gate(attributes), GATE["fixture"]) == case["expect"]
