"""The generated JSON Schemas: valid Draft 2020-12, shipped current, and judging as the models do.

Three verdicts are compared on the official corpora (SOM examples wrapped as ``tests/som``
does, Matrix ``cases.json``, BabelQueue fixtures) and on the seeded mutation corpora of the SOM
and Matrix differential tests (plus single-change mutations of the BabelQueue fixtures):

* the **generated** schema, through ``jsonschema`` with format checking;
* the **model** (``ek.check``, or ``model_validate_json`` for a Matrix document of known kind);
* the **official** schema (for SOM with the tools' wire-version rule, as ``tests/som`` does).

Generated and model must agree except where one of ``GENERATED_DIFFERENCES`` applies: then the
model refuses, the schema accepts, and the difference is one JSON Schema cannot express (or one
of Python's ``re``). What the model accepts must also pass the generated schema under
``jsonschema-rs`` (format checking on). Official and model must agree except for the
differences the spec test suites already document. Every listed difference must occur, so none
is dead.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import _schema
from envelopekit._formats import DATE_TIME_PATTERN, URI_PATTERN, UUID_PATTERN
from envelopekit._violations import Violation, violations
from tests.matrix import test_differential as matrix_diff
from tests.som import test_differential as som_diff
from tests.som._corpus import (
    label,
    negative_envelope,
    negative_files,
    positive_envelope,
    positive_files,
    wrap,
)
from tests.som._mutations import mutations
from tests.support.schemas import objects_with

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "src" / "envelopekit" / "schemas"
DATA = Path(__file__).resolve().parent / "data"
TARGETS = [(spec, name) for spec, names in _schema.SCHEMA_NAMES.items() for name in names]


def _validator(spec: str, name: str) -> Draft202012Validator:
    return Draft202012Validator(
        ek.json_schema(spec, name), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


GENERATED = {target: _validator(*target) for target in TARGETS}

# --- the schemas themselves ------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "name"), TARGETS)
def test_schema_is_valid_draft_2020_12_with_identity(spec: str, name: str) -> None:
    document = ek.json_schema(spec, name)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == f"https://envelopekit.dev/schemas/{spec}/{name}.schema.json"
    assert document["title"] and document["description"]
    # Stable: the same bytes every time (no ordering that depends on sets or hashing).
    assert _schema.render(ek.json_schema(spec, name)) == _schema.render(document)


@pytest.mark.parametrize(("spec", "name"), TARGETS)
def test_shipped_schema_is_current(spec: str, name: str) -> None:
    path = SHIPPED / spec / f"{name}.schema.json"
    assert path.is_file(), f"{path} is missing: run `make schemas`"
    assert path.read_bytes() == _schema.render(ek.json_schema(spec, name)), (
        f"{path.relative_to(ROOT)} is stale: run `make schemas`"
    )


def test_shipped_files_are_exactly_the_registry() -> None:
    shipped = {
        p.relative_to(SHIPPED).as_posix()
        for p in SHIPPED.rglob("*")
        if p.is_file() and "draft-07" not in p.relative_to(SHIPPED).parts
    }
    assert shipped == {f"{spec}/{name}.schema.json" for spec, name in TARGETS}


@pytest.mark.parametrize(("spec", "name"), TARGETS)
def test_each_format_the_model_checks_carries_its_pattern(spec: str, name: str) -> None:
    """A 2020-12 validator reads ``format`` as an annotation unless told otherwise: the pattern
    beside it is what refuses there what the model refuses."""
    patterns = {"uuid": UUID_PATTERN, "date-time": DATE_TIME_PATTERN, "uri": URI_PATTERN}
    schema = ek.json_schema(spec, name)
    found = [node for node in objects_with(schema, "format") if isinstance(node["format"], str)]
    assert all(node.get("pattern") == patterns[node["format"]] for node in found), found
    if spec == "som" and name in ("envelope", "story-context"):
        story = json.loads((DATA / "som" / "examples" / "story-context" / "tags.json").read_bytes())
        story["content_refs"] = [{"uri": "http://wire.ap.org:http/x"}]  # a port of letters
        envelope = wrap(story, "story.context")
        assert not ek.check(json.dumps(envelope), spec="som").ok
        annotating = jsonschema_rs.validator_for(ek.json_schema(spec, name))  # formats not asserted
        assert not annotating.is_valid(envelope if name == "envelope" else story)


def test_unknown_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="known: "):
        ek.json_schema("som", "nope")


def test_som_payload_dispatch_guards_the_unknown_family() -> None:
    document = ek.json_schema("som", "envelope")
    assert "oneOf" not in document["properties"]["payload"]
    unknown = document["allOf"][-1]["if"]["properties"]["message_type"]["not"]["enum"]
    assert set(unknown) == set(ek.som.KNOWN_MESSAGE_TYPES)


# --- the deliberate differences between a generated schema and its model -----------------------


@dataclass
class Case:
    """One document, judged by a generated schema and by a model."""

    spec: str
    name: str
    document: Any
    violations: list[Violation] = field(default_factory=list)


def _at(document: Any, pointer: str) -> Any:
    node = document
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _refused_values(case: Case) -> Iterator[Any]:
    for found in case.violations:
        try:
            yield _at(case.document, found.pointer)
        except (KeyError, IndexError, ValueError, TypeError):
            continue


def _trailing_newline(case: Case) -> bool:
    return any(isinstance(v, str) and v.endswith("\n") for v in _refused_values(case))


def _integral_float(case: Case) -> bool:
    if case.spec == "matrix":
        return matrix_diff.integral_float(case.name, case.document)
    return any(isinstance(v, float) and v.is_integer() for v in _refused_values(case))


# name -> (why JSON Schema, or Python's validator, cannot say what the model enforces; test).
GENERATED_DIFFERENCES: dict[str, tuple[str, Callable[[Case], bool]]] = {
    "python-re-trailing-newline": (
        "Python's `re` (used by `jsonschema` for `pattern`, and by rfc3339-validator) lets `$` "
        "match before a final newline; ECMA-262, which JSON Schema specifies, does not. The "
        "schema is right: jsonschema-rs refuses these as the model does. A lookahead anchor "
        "would fix Python but break RE2-based validators (Go).",
        _trailing_newline,
    ),
    "integral-float": (
        "Strict integers (Matrix `lamport`/`statusCode`, BabelQueue counters) refuse `3.0`; "
        "JSON Schema's data model has one number 3, so `type: integer` accepts it.",
        _integral_float,
    ),
    "non-finite": (
        "NaN and Infinity are not JSON; Python's parser reads them and JSON Schema has no "
        "keyword that refuses a number for not being finite.",
        lambda case: matrix_diff.non_finite(case.document),
    ),
    "int64": (
        "An integer literal beyond signed 64-bit is refused anywhere in free JSON data, but a "
        "float literal of the same size (`1e300`) is not; JSON Schema sees numbers, not their "
        "spelling. (`lamport` carries `maximum: 2^63-1`: it refuses floats anyway.)",
        lambda case: matrix_diff.beyond_int64(case.document),
    ),
    "lone-surrogate": (
        'A string escaping a lone UTF-16 surrogate (`"\\ud800"`) is not Unicode text; JSON '
        "Schema's strings are Unicode, and no portable pattern refuses it.",
        lambda case: matrix_diff.lone_surrogate(case.document),
    ),
}


class Tally:
    """Disagreements between generated schema and model, each explained or reported."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.seen: Counter[str] = Counter()
        self.compared = 0

    def judge(self, case: Case, generated: bool, model: bool, where: str) -> None:
        self.compared += 1
        # What the model accepts passes jsonschema-rs too (its own formats and ECMA patterns).
        if model and not _ecma_validator(case.spec, case.name).is_valid(case.document):
            self.problems.append(f"{where}: jsonschema-rs refuses what the model accepts")
        if generated == model:
            return
        found = [name for name, (_, applies) in GENERATED_DIFFERENCES.items() if applies(case)]
        if not found or model or not generated:
            self.problems.append(f"{where}: generated={generated} model={model} {found}")
            return
        # The schema is right there: an ECMA-262 validator refuses as the model does.
        ecma = _ecma_validator(case.spec, case.name)
        if "python-re-trailing-newline" in found and ecma.is_valid(case.document):
            self.problems.append(f"{where}: jsonschema-rs accepts it too")
        self.seen.update(found)


@functools.cache
def _ecma_validator(spec: str, name: str) -> Any:
    """jsonschema-rs: ECMA-262 regular expressions, as JSON Schema specifies."""
    return jsonschema_rs.validator_for(ek.json_schema(spec, name), validate_formats=True)


def _som_check(document: dict[str, Any]) -> Any:
    return ek.check(json.dumps(document, ensure_ascii=False).encode(), spec="som")


# --- SOM ---------------------------------------------------------------------------------------


def test_som_official_corpus_three_ways() -> None:
    tally = Tally()
    cases = [(p, positive_envelope(p), True) for p in positive_files()]
    cases += [(p, negative_envelope(p), False) for p in negative_files()]
    assert len(cases) == 38
    for path, document, expected in cases:
        verdict = _som_check(document)
        assert verdict.ok is expected, (label(path), verdict.violations)
        assert som_diff.official(document) is expected, label(path)
        generated = GENERATED["som", "envelope"].is_valid(document)
        tally.judge(
            Case("som", "envelope", document, verdict.violations),
            generated,
            verdict.ok,
            label(path),
        )
    assert tally.problems == []
    assert not tally.seen


def test_som_mutations_three_ways() -> None:
    tally = Tally()
    official_differences: Counter[str] = Counter()
    for mutation in som_diff.MUTATIONS:
        document = mutation.document
        verdict = _som_check(document)
        generated = GENERATED["som", "envelope"].is_valid(document)
        where = f"{mutation.kind} at {mutation.where}"
        tally.judge(
            Case("som", "envelope", document, verdict.violations), generated, verdict.ok, where
        )
        official = som_diff.official(document)
        if official != verdict.ok:
            # tests/som/test_differential.py asserts each of these in detail.
            difference = som_diff._difference(mutation)
            assert difference in som_diff.DELIBERATE_DIFFERENCES, where
            official_differences[difference] += 1
    assert tally.problems == []
    assert set(tally.seen) == {"python-re-trailing-newline"}
    assert set(official_differences) == set(som_diff.DELIBERATE_DIFFERENCES)
    assert tally.compared == len(som_diff.MUTATIONS) > 5000


def test_som_family_schemas_agree_with_their_models() -> None:
    """Each family schema alone judges a bare payload as its model alone does."""
    tally = Tally()
    for mutation in som_diff.MUTATIONS[::5]:
        message_type = mutation.document.get("message_type")
        payload = mutation.document.get("payload")
        if not isinstance(message_type, str) or not isinstance(payload, dict):
            continue
        model = ek.som.PAYLOAD_MODELS.get(message_type)
        if model is None:
            continue
        try:
            model.model_validate_json(json.dumps(payload, ensure_ascii=False))
            found: list[Violation] = []
        except ValidationError as exc:
            found = violations(exc, model=model)
        name = model.__schema_name__
        generated = GENERATED["som", name].is_valid(payload)
        case = Case("som", name, payload, found)
        tally.judge(case, generated, not found, f"{mutation.kind} at {mutation.where}")
    assert tally.problems == []
    assert tally.compared > 500


# --- Matrix ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["request", "response", "error-payload"])
def test_matrix_mutations_three_ways(kind: str) -> None:
    tally = Tally()
    for text, document in matrix_diff.corpus(kind):
        model = matrix_diff.model_valid(kind, text)
        generated = GENERATED["matrix", kind].is_valid(document)
        tally.judge(Case("matrix", kind, document), generated, model, text.decode()[:200])
        # Official and model: the Matrix differential test's own rule.
        expected = matrix_diff.schema_valid(kind, document)
        assert model == (expected and not matrix_diff.differences(kind, document)), text
    assert tally.problems == []
    assert tally.compared == matrix_diff.ROUNDS
    assert set(tally.seen) == {"non-finite", "int64", "lone-surrogate", "integral-float"}


def test_matrix_cases_three_ways() -> None:
    cases = json.loads((DATA / "matrix" / "cases.json").read_text("utf-8"))["cases"]
    tally = Tally()
    for case in cases:
        text = case["raw"] if "raw" in case else json.dumps(case["doc"], ensure_ascii=False)
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            continue  # not JSON: no schema applies (both refuse; tests/matrix checks it)
        kind = case["kind"]
        model = matrix_diff.model_valid(kind, text.encode())
        assert model is case["valid"], case["id"]
        generated = GENERATED["matrix", kind].is_valid(document)
        tally.judge(Case("matrix", kind, document), generated, model, case["id"])
    assert tally.problems == []
    assert tally.compared == len([c for c in cases if "doc" in c or _is_json(c["raw"])])


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


# --- BabelQueue --------------------------------------------------------------------------------

BABEL_OFFICIAL = jsonschema.Draft7Validator(
    json.loads((DATA / "babelqueue" / "schema" / "message-envelope.schema.json").read_bytes()),
    format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER,
)
# fixture -> why the consumer model accepts what the official producer schema refuses.
BABEL_OFFICIAL_DIFFERENCES = {
    "urn-alias.json": "consumers accept `urn` as an inbound alias of `job`",
    "unknown-lang.json": "consumers accept any `meta.lang` (a future SDK's tag)",
}
FIXTURES = sorted((DATA / "babelqueue" / "fixtures").glob("*.json"))


def test_babelqueue_fixtures_three_ways() -> None:
    tally = Tally()
    for path in FIXTURES:
        raw = path.read_bytes()
        document = json.loads(raw)
        verdict = ek.check(raw, spec="babelqueue")
        generated = GENERATED["babelqueue", "envelope"].is_valid(document)
        tally.judge(
            Case("babelqueue", "envelope", document, verdict.violations),
            generated,
            verdict.ok,
            path.name,
        )
        official = BABEL_OFFICIAL.is_valid(document)
        assert (official != verdict.ok) == (path.name in BABEL_OFFICIAL_DIFFERENCES), path.name
        if "dead_letter" in document:
            assert GENERATED["babelqueue", "dead-letter"].is_valid(document["dead_letter"])
    assert tally.problems == []
    assert not tally.seen


def test_babelqueue_mutations_generated_and_model() -> None:
    tally = Tally()
    kinds: Counter[str] = Counter()
    for path in FIXTURES:
        for mutation in mutations(json.loads(path.read_bytes())):
            raw = json.dumps(mutation.document, ensure_ascii=False).encode()
            verdict = ek.check(raw, spec="babelqueue")
            document = mutation.document
            generated = GENERATED["babelqueue", "envelope"].is_valid(document)
            case = Case("babelqueue", "envelope", document, verdict.violations)
            tally.judge(
                case, generated, verdict.ok, f"{path.name}: {mutation.kind} at {mutation.where}"
            )
            kinds[mutation.kind] += 1
            block = document.get("dead_letter")
            if isinstance(block, dict) and mutation.path[0] == "dead_letter" and verdict.ok:
                assert GENERATED["babelqueue", "dead-letter"].is_valid(block)
    assert tally.problems == []
    assert set(tally.seen) == {"integral-float"}
    assert {"remove", "null", "wrong_type", "unknown_key", "integer_as_float"} <= set(kinds)


def test_every_generated_difference_is_documented_and_occurs() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.partition("## JSON Schema")[2].partition("\n## ")[0]
    for name in GENERATED_DIFFERENCES:
        assert f"`{name}`" in section, name


def test_a_schema_is_also_found_by_its_spec_file_name() -> None:
    assert ek.json_schema("babelqueue", "message-envelope") == ek.json_schema(
        "babelqueue", "envelope"
    )


def test_a_schema_reports_under_its_models_schema_name() -> None:
    from envelopekit._check import REGISTRY, SPECS

    assert _schema.rule_schema("babelqueue", "envelope") == "message-envelope"
    assert _schema.rule_schema("babelqueue", "message-envelope") == "message-envelope"
    for spec in SPECS:
        for name in _schema.SCHEMA_NAMES[spec]:
            # One of the spec's own schema files, as its rule ids spell them.
            assert _schema.rule_schema(spec, name) in REGISTRY[spec].rule_schemas, (spec, name)
    with pytest.raises(ValueError, match="no schema som/nothing"):
        _schema.rule_schema("som", "nothing")
    with pytest.raises(ValueError, match="no schema asyncapi/envelope"):
        _schema.rule_schema("asyncapi", "envelope")
