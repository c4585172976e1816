"""Manifest section ``forbidden_keys``: decode warns and drops; re-encode never emits them."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest

import envelopekit as ek
from envelopekit import rules
from tests.babelqueue.conformance._manifest import fixture_bytes, has_pointer, section

CASES: list[dict[str, Any]] = section("forbidden_keys")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_forbidden_key(case: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    assert case["expect"] == "warn"
    with caplog.at_level(logging.WARNING, logger="envelopekit.babelqueue"):
        verdict = ek.check(fixture_bytes(case["file"]), spec="babelqueue")
    assert verdict.ok, verdict.violations
    assert (rules.FORBIDDEN_KEY, case["forbidden_key"]) in [
        (w.rule, w.pointer) for w in verdict.warnings
    ]
    assert case["forbidden_key"] in caplog.text
    assert verdict.envelope is not None
    out = orjson.loads(verdict.envelope.to_json())
    for pointer in case["expect_absent_after_reencode"]:
        assert not has_pointer(out, pointer)
    assert not has_pointer(
        orjson.loads(verdict.envelope.retried().to_json()), case["forbidden_key"]
    )
