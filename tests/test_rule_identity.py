"""Rule identity at the raise site: every error maps to a catalogued rule, none to a guess.

A validator names its rule through ``rule_error`` (typed by ``rules.Keyword`` and
``rules.NamedId``; ``tests/typing/test_rules_typing.py`` holds both checkers to refusing any
other text). pydantic-core's own errors map through tables. What maps to nothing becomes
``<schema>.invalid`` (``rules.FALLBACK_KEYWORD``), which no input may ever produce: this file
drives the conformance corpora of the three specs and mutations of every valid document through
``check`` and the models, and fails on the first violation that fell back.
"""

from __future__ import annotations

import ast
import json
import typing
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import StringConstraints, ValidationError, field_validator

import envelopekit as ek
from envelopekit import rules
from envelopekit._check import SpecName
from envelopekit._compat import MISSING
from envelopekit._formats import UUID_PATTERN, UuidStr
from envelopekit._model import WireModel
from envelopekit._violations import rule_error, violations
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse
from envelopekit.som import SomEnvelope
from tests.som._corpus import positive_envelope, positive_files
from tests.som._mutations import mutations as som_mutations

DATA = Path(__file__).resolve().parent / "data"


def test_the_literals_are_the_catalogue() -> None:
    assert set(typing.get_args(rules.NamedId)) == set(rules.NAMED)
    assert set(typing.get_args(rules.Keyword)) | {rules.FALLBACK_KEYWORD} == rules.KEYWORDS
    assert rules.FALLBACK_KEYWORD not in typing.get_args(rules.Keyword)


def test_rule_error_refuses_an_uncatalogued_rule_at_run_time_too() -> None:
    with pytest.raises(ValueError, match="not in the rule catalogue"):
        rule_error("requierd", "x")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="not in the rule catalogue"):
        rule_error(rules.FALLBACK_KEYWORD, "x")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    with pytest.raises(ValueError, match="not in the rule catalogue"):
        rule_error("anyOf", "x", also=("requierd",))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def test_only_the_helper_constructs_a_pydantic_error() -> None:
    """Every raise site goes through `rule_error` (or `as_pydantic_error` for a scan's finding).

    The third is `raised_again`, which raises an error already reported, not a new one.
    """
    package = Path(ek.__file__).parent
    constructing = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "PydanticCustomError"
    )
    assert constructing == ["_violations.py", "_violations.py", "_violations.py"]


class _Probe(WireModel):
    __schema_name__: ClassVar[str] = "request"

    value: int

    @field_validator("value")
    @classmethod
    def _check(cls, value: int) -> int:
        if value == 1:
            raise rule_error("anyOf", "one", pointer="/deeper", also=("required", "type"))
        if value == 2:
            raise rule_error(rules.NUMBER_OUT_OF_RANGE, "two")
        if value == 3:
            raise ValueError("a validator that names no rule")
        return value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            1,
            [
                ("request.anyOf", "/value/deeper"),
                ("request.required", "/value/deeper"),
                ("request.type", "/value/deeper"),
            ],
        ),
        (2, [("number.out_of_range", "/value")]),
        # The detector below is not vacuous: an error naming no rule is the fallback.
        (3, [("request.invalid", "/value")]),
    ],
)
def test_the_raise_site_names_rule_pointer_and_peers(
    value: int, expected: list[tuple[str, str]]
) -> None:
    with pytest.raises(ValidationError) as caught:
        _Probe.model_validate({"value": value})
    found = violations(caught.value, model=_Probe)
    assert [(v.rule, v.pointer) for v in found] == expected
    assert _fell_back(found) == (value == 3)


def _fell_back(found: list[ek.Violation]) -> bool:
    return any(v.rule.partition(".")[2] == rules.FALLBACK_KEYWORD for v in found)


class _Typed(WireModel):
    __schema_name__: ClassVar[str] = "response"

    plain: Annotated[str, StringConstraints(strict=True, pattern=UUID_PATTERN)]
    uuid: UuidStr | MISSING = MISSING
    one: Literal["a"] | MISSING = MISSING
    several: Literal["a", "b"] | MISSING = MISSING


def test_builtin_errors_take_their_keyword_from_the_type_not_the_text() -> None:
    # The same pattern text: a format only where the type carries the `Format` marker.
    raw = b'{"plain":"x","uuid":"x","one":"b","several":1}'
    with pytest.raises(ValidationError) as caught:
        _Typed.model_validate_json(raw)
    assert [(v.rule, v.pointer) for v in violations(caught.value, model=_Typed)] == [
        ("response.pattern", "/plain"),
        ("response.format.uuid", "/uuid"),
        ("response.const", "/one"),
        ("response.enum", "/several"),
        # An `enum` of strings sits beside `type: string`: a number fails both.
        ("response.type", "/several"),
    ]


# --- the corpora and their mutations ------------------------------------------------------------

_ALIENS: tuple[Any, ...] = (None, True, -1, 1.5, float("nan"), 2**64, "", "x\n", [1], {"k": 1})


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _replaced(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    parent = copy
    for segment in path[:-1]:
        parent = parent[segment]
    if value is _REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


_REMOVE = object()


def _mutated(document: Any) -> Iterator[Any]:
    """Each value replaced by each alien, each member removed, an unknown key in each object."""
    for path in _paths(document):
        for alien in _ALIENS:
            yield _replaced(document, path, alien)
        if path:
            yield _replaced(document, path, _REMOVE)
        here = document
        for segment in path:
            here = here[segment]
        if isinstance(here, dict):
            yield _replaced(document, path, {**here, "zz_unknown": 1})


def _babelqueue_documents() -> list[Any]:
    manifest = json.loads((DATA / "babelqueue" / "manifest.json").read_text("utf-8"))
    return [
        json.loads((DATA / "babelqueue" / case["file"]).read_text("utf-8"))
        for case in manifest["cases"]
    ]


def _matrix_documents() -> list[Any]:
    cases = json.loads((DATA / "matrix" / "cases.json").read_text("utf-8"))["cases"]
    return [case["doc"] for case in cases if "doc" in case]


_MODELS: dict[str, tuple[Any, ...]] = {
    "babelqueue": (BabelEnvelope,),
    "matrix": (MxRequest, MxResponse, MxErrorPayload),
    "som": (SomEnvelope,),
}


def _judge(spec: SpecName, document: Any, seen: Counter[str]) -> None:
    raw = json.dumps(document, ensure_ascii=False).encode("utf-8")
    verdict = ek.check(raw, spec=spec)
    found = list(verdict.violations)
    if isinstance(document, dict):
        # The dict door too: pydantic reports some errors differently from the JSON one.
        for model in _MODELS[spec]:
            try:
                model.model_validate(document)
            except ValidationError as exc:
                found += violations(exc, model=model)
    seen.update(v.rule for v in found)
    assert not _fell_back(found), (spec, document, [(v.rule, v.pointer) for v in found])


def test_no_corpus_message_or_mutation_maps_to_no_rule() -> None:
    seen: Counter[str] = Counter()
    judged = 0
    for document in _babelqueue_documents():
        for mutated in _mutated(document):
            _judge("babelqueue", mutated, seen)
            judged += 1
    for document in _matrix_documents():
        for mutated in _mutated(document):
            _judge("matrix", mutated, seen)
            judged += 1
    for path in positive_files():
        for mutation in som_mutations(positive_envelope(path)):
            _judge("som", mutation.document, seen)
            judged += 1
    # The run reaches the breadth of the catalogue, so a quiet pass is not an empty one.
    assert judged > 5_000, judged
    structural = {rule for rule in seen if rule.partition(".")[0] in rules.SCHEMAS}
    named = set(seen) & set(rules.NAMED)
    assert len(structural) >= 60 and len(named) >= 5, (sorted(structural), sorted(named))
