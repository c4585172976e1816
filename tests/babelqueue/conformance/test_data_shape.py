"""Manifest section ``data_shape``: ``data`` is always a JSON object, on both sides."""

from __future__ import annotations

import re
from typing import Any

import pytest

import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope
from tests.babelqueue.conformance._manifest import fixture_bytes, section

CASES: list[dict[str, Any]] = section("data_shape")["cases"]


def _encoded_data(raw: str) -> str:
    # The emitted text of the top-level "data" value, whitespace removed.
    match = re.search(r'"data":(\{.*?\}|\[.*?\]),"meta"', raw)
    assert match is not None
    return re.sub(r"\s+", "", match.group(1))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_data_shape(case: dict[str, Any]) -> None:
    if case["mode"] == "encode":
        env = BabelEnvelope.create(case["urn"], case["data"], queue=case["queue"])
        assert _encoded_data(env.to_json().decode()) == case["expect_encoded_data_json"]
    else:
        assert case["mode"] == "decode"
        verdict = ek.check(fixture_bytes(case["file"]), spec="babelqueue")
        assert verdict.ok is case["valid"]
        if not case["valid"]:
            assert verdict.violations[0].pointer == "/data"


def test_modes_are_known() -> None:
    assert {c["mode"] for c in CASES} <= {"encode", "decode"}
