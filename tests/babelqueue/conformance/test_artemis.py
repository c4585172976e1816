"""Manifest section ``artemis``: AMQP 1.0 / JMS projection, delivery-count reconciliation, gate."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, artemis
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

SECTION = section("artemis")
PROJECTION = SECTION["property_projection"]
RECONCILE = SECTION["attempts_reconciliation"]["cases"]
GATE = SECTION["schema_version_gate"]
GATE_CASES = gate_cases(GATE)


def test_property_projection() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(PROJECTION["envelope_file"]))
    message = artemis.project(envelope)
    annotation = PROJECTION["jms_type_annotation"]
    assert message["message_annotations"] == {annotation: PROJECTION["jms_type"]}
    assert message["correlation_id"] == PROJECTION["correlation_id"]
    assert message["creation_time"] == envelope.meta.created_at  # JMSTimestamp, Unix ms
    assert message["application_properties"] == PROJECTION["properties"]
    # URN and trace id ride the JMS-native slots, never a bq_ property.
    assert not {"bq_job", "bq_trace_id"} & set(message["application_properties"])


@pytest.mark.parametrize("case", RECONCILE, ids=[c["name"] for c in RECONCILE])
def test_attempts_reconciliation(case: dict[str, Any]) -> None:
    envelope = envelope_with_attempts(PROJECTION["envelope_file"], case["body_attempts"])
    count = case["delivery_count"]
    assert artemis.attempts(case["body_attempts"], count) == case["expected_attempts"]
    assert_reconciled(envelope, artemis.reconcile(envelope, count), case["expected_attempts"])


@pytest.mark.parametrize("case", GATE_CASES, ids=gate_ids(GATE_CASES))
def test_schema_version_gate(case: dict[str, Any]) -> None:
    assert GATE["property"] == artemis.SCHEMA_VERSION_PROPERTY  # underscores, not hyphens
    value = case_value(case)
    properties = {} if value is ABSENT else {GATE["property"]: value}
    assert consume(artemis.gate(properties), GATE["fixture"]) == case["expect"]
