"""Manifest section ``payload_schema_unicode``: ``minLength`` counts Unicode code points."""

from __future__ import annotations

from typing import Any

import pytest

from envelopekit import rules
from envelopekit.babelqueue import check_payload
from tests.babelqueue.conformance._manifest import section

SECTION = section("payload_schema_unicode")
SCHEMA = SECTION["schema"]
CASES = SECTION["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    found = check_payload(SCHEMA, case["data"])
    assert (not found) is case["valid"], found
    if not case["valid"]:
        (name,) = case["data"]
        assert [(v.rule, v.pointer) for v in found] == [
            (rules.structural("payload-schema", "minLength"), f"/data/{name}")
        ]
