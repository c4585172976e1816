"""The data-driven Matrix corpus (tests/data/matrix/cases.json), one test per case.

Every case runs twice: through `ek.check(raw, spec="matrix")` (classification by `op`) and
through the named model's `model_validate_json` + `ek.violations`, and both must give exactly
the listed rule ids, pointers and warnings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse

DATA = Path(__file__).resolve().parent.parent / "data" / "matrix"
CASES: list[dict[str, Any]] = json.loads((DATA / "cases.json").read_text("utf-8"))["cases"]
MODELS: dict[str, type[MxRequest | MxResponse | MxErrorPayload]] = {
    "request": MxRequest,
    "response": MxResponse,
    "error-payload": MxErrorPayload,
}


def raw_of(case: dict[str, Any]) -> bytes:
    if "raw" in case:
        return str(case["raw"]).encode("utf-8", "surrogatepass")
    return json.dumps(case["doc"], ensure_ascii=False).encode("utf-8")


def found(violations: list[ek.Violation]) -> set[tuple[str, str]]:
    return {(v.rule, v.pointer) for v in violations}


def expected(entries: list[dict[str, str]]) -> set[tuple[str, str]]:
    return {(e["rule"], e["pointer"]) for e in entries}


by_id = pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])


def test_corpus_shape() -> None:
    kinds = {c["kind"] for c in CASES}
    assert kinds == set(MODELS)
    for kind in MODELS:
        assert any(c["kind"] == kind and c["valid"] for c in CASES), kind
        assert any(c["kind"] == kind and not c["valid"] for c in CASES), kind
    for case in CASES:
        verdicts = [case, case.get("check", case)]
        for verdict in verdicts:
            # An invalid case names its rules; a valid one names none.
            assert bool(verdict["expect"]) is not verdict["valid"], case["id"]
            for entry in verdict["expect"]:
                assert rules.is_rule(entry["rule"]), entry
            for rule in verdict.get("warnings", []):
                assert rules.is_rule(rule), rule


@by_id
def test_check(case: dict[str, Any]) -> None:
    want = case.get("check", case)
    verdict = ek.check(raw_of(case), spec="matrix")
    assert verdict.ok is want["valid"]
    assert found(verdict.violations) == expected(want["expect"])
    assert {w.rule for w in verdict.warnings} == set(want.get("warnings", []))
    assert (verdict.envelope is None) is not want["valid"]
    for violation in [*verdict.violations, *verdict.warnings]:
        assert violation.source == rules.source_of(violation.rule)
        assert violation.message


@by_id
def test_model(case: dict[str, Any]) -> None:
    _judged(case, lambda: MODELS[case["kind"]].model_validate_json(raw_of(case)))


def _judged(case: dict[str, Any], parse: Callable[[], Any]) -> Any:
    """What ``parse`` made of the case, held to its verdict and warnings; ``None`` if refused."""
    try:
        parsed = parse()
    except ValidationError as exc:
        assert not case["valid"], ek.violations(exc)
        assert found(ek.violations(exc)) == expected(case["expect"])
        return None
    assert case["valid"], f"{case['id']} was accepted"
    assert {w.rule for w in parsed.envelope_warnings()} == set(case["warnings"])
    return parsed


PYTHON_CASES = [c for c in CASES if "doc" in c]


@pytest.mark.parametrize("case", PYTHON_CASES, ids=[c["id"] for c in PYTHON_CASES])
def test_model_from_python(case: dict[str, Any]) -> None:
    # The Python door (`model_validate` of the parsed document, as a web framework hands it
    # over) gives the verdict `model_validate_json` gives, and re-emits the same JSON value.
    document = json.loads(raw_of(case))
    parsed = _judged(case, lambda: MODELS[case["kind"]].model_validate(document))
    if parsed is not None:
        assert json.loads(parsed.to_json()) == document
