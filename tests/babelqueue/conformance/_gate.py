"""What the broker sections share: the schema_version_gate cases and the consumer flow they test."""

from __future__ import annotations

from typing import Any

from envelopekit import rules
from envelopekit._violations import Violation
from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import fixture_bytes

ABSENT = object()
"""A case with ``"absent": true``: the property is not there at all."""


def gate_cases(block: dict[str, Any]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = block["cases"]
    assert cases, "an empty schema_version_gate block would test nothing"
    return cases


def gate_id(case: dict[str, Any]) -> str:
    # Values differ only in invisible characters (NBSP, U+0085, BOM ...): ascii() spells them out.
    shown = "absent" if case.get("absent") else ascii(case["value"])
    if "value_type" in case:
        shown += f"-as-{case['value_type']}"
    return f"{case['expect']}-{shown}"


def gate_ids(cases: list[dict[str, Any]]) -> list[str]:
    ids = [gate_id(c) for c in cases]
    assert len(set(ids)) == len(ids), "gate case ids must be unique"
    return ids


def case_value(case: dict[str, Any]) -> Any:
    return ABSENT if case.get("absent") else case["value"]


def consume(refused: Violation | None, fixture: str) -> str:
    """The consumer flow of every gate: refused before decoding, else the body is decoded."""
    if refused is not None:
        assert refused.rule == rules.TRANSPORT_SCHEMA_VERSION_UNSUPPORTED
        assert rules.is_rule(refused.rule)
        return "reject"
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(fixture))
    assert envelope.meta.schema_version == 1  # the body check still applies after the gate
    return "decode"


def assert_reconciled(envelope: BabelEnvelope, reconciled: BabelEnvelope, expected: int) -> None:
    """Only the transport counter moves; the message is otherwise the one received."""
    assert reconciled.attempts == expected
    assert reconciled.to_wire() == {**envelope.to_wire(), "attempts": expected}


def envelope_with_attempts(fixture: str, attempts: int) -> BabelEnvelope:
    """The manifest's fixture as a consumer decodes it, carrying ``attempts`` in its body."""
    base = BabelEnvelope.model_validate_json(fixture_bytes(fixture))
    return BabelEnvelope.model_validate({**base.to_wire(), "attempts": attempts})
