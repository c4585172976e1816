"""Manifest section ``payload_schema``: per-URN ``data`` validation verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit import rules
from envelopekit.babelqueue import InvalidPayloadError, PayloadSchemas, check_payload
from tests.babelqueue.conformance._manifest import section

SECTION = section("payload_schema")
SCHEMA = SECTION["schema"]
CASES = SECTION["cases"]
URN = "urn:babel:orders:created"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    found = check_payload(SCHEMA, case["data"])
    assert (not found) is case["valid"], found
    for v in found:
        assert rules.is_rule(v.rule) and v.rule.startswith("payload-schema.")
        assert v.pointer.startswith("/data")
    schemas = PayloadSchemas({URN: SCHEMA})
    if case["valid"]:
        schemas.validate(URN, case["data"])
    else:
        with pytest.raises(InvalidPayloadError) as raised:
            schemas.validate(URN, case["data"])
        assert raised.value.violations == found
