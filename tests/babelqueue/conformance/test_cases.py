"""Manifest section ``cases``: the consumer's accept/reject verdict and positive assertions."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit._compat import MISSING
from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import fixture_bytes, section

CASES: list[dict[str, Any]] = section("cases")
# What no `accepts()` reason in the manifest names, this SDK names with a rule id.
EXPECTED_RULES = {
    "invalid-unknown-schema-version": rules.SCHEMA_VERSION_UNSUPPORTED,
    "invalid-missing-urn": rules.URN_MISSING,
}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    raw = fixture_bytes(case["file"])
    verdict = ek.check(raw, spec="babelqueue")
    assert verdict.ok is case["valid"], verdict.violations
    if not case["valid"]:
        assert verdict.rules() == [EXPECTED_RULES[case["name"]]]
        with pytest.raises(ValidationError):
            BabelEnvelope.model_validate_json(raw)
        return
    env = verdict.envelope
    assert env is not None
    expect = case["expect"]
    assert env.job == expect["urn"]
    assert env.data == expect["data"]
    assert env.attempts == expect["attempts"]
    assert env.meta.lang == expect["lang"]
    assert env.meta.schema_version == expect["schema_version"]
    assert env.meta.id and env.trace_id and env.meta.created_at
    if "dead_letter" in expect:
        assert env.dead_letter is not MISSING
        wire = env.to_wire()["dead_letter"]
        assert {k: wire[k] for k in expect["dead_letter"]} == expect["dead_letter"]


def test_every_case_has_a_rule_or_an_expectation() -> None:
    invalid = {c["name"] for c in CASES if not c["valid"]}
    assert invalid == set(EXPECTED_RULES)
