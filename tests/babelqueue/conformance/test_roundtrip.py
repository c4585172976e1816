"""Manifest section ``roundtrip``: decode -> attempts+1 -> encode keeps unknown keys and types."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import at_pointer, fixture_bytes, section, strict_equal

CASES: list[dict[str, Any]] = section("roundtrip")["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_roundtrip(case: dict[str, Any]) -> None:
    env = BabelEnvelope.model_validate_json(fixture_bytes(case["file"]))
    out = orjson.loads(env.retried().to_json())
    assert out["attempts"] == case["expect_attempts"]
    for pointer, value in case["expect_preserved"].items():
        assert strict_equal(at_pointer(out, pointer), value), pointer
