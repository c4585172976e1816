"""Manifest section ``kafka``: bq- record headers, the authoritative bq-attempts, the gate."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, kafka
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

SECTION = section("kafka")
PROJECTION = SECTION["property_projection"]
RECONCILE = SECTION["attempts_reconciliation"]["cases"]
GATE = SECTION["schema_version_gate"]
GATE_CASES = gate_cases(GATE)


def test_property_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    record = kafka.project(envelope)
    # Kafka headers are bytes: the expected strings, UTF-8 encoded.
    expected = {k: v.encode("utf-8") for k, v in PROJECTION["headers"].items()}
    assert dict(record["headers"]) == expected
    assert len(record["headers"]) == len(expected)
    assert record["timestamp"] == envelope.meta.created_at


@pytest.mark.parametrize("case", RECONCILE, ids=[c["name"] for c in RECONCILE])
def test_attempts_reconciliation(case: dict[str, Any]) -> None:
    envelope = envelope_with_attempts(PROJECTION["envelope_file"], case["body_attempts"])
    header = case["header_attempts"]
    headers = [] if header is None else [("bq-attempts", str(header).encode("utf-8"))]
    assert kafka.attempts(case["body_attempts"], header) == case["expected_attempts"]
    assert_reconciled(envelope, kafka.reconcile(envelope, headers), case["expected_attempts"])


@pytest.mark.parametrize("case", GATE_CASES, ids=gate_ids(GATE_CASES))
def test_schema_version_gate(case: dict[str, Any]) -> None:
    value = case_value(case)
    headers = [] if value is ABSENT else [(GATE["property"], value.encode("utf-8"))]
    assert consume(kafka.gate(headers), GATE["fixture"]) == case["expect"]
