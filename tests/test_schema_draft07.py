"""The Draft-07 schemas: valid Draft-07, shipped current, and judging as the 2020-12 ones do.

Every document ``tests/test_schema.py`` judges (the official SOM corpus and its seeded
mutations, the Matrix cases and mutations, the BabelQueue fixtures and their mutations) is
judged by the Draft-07 schema through ``jsonschema.Draft7Validator`` and by the 2020-12 schema
through ``Draft202012Validator``, both with format checking: the verdicts must be the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

import envelopekit as ek
from envelopekit import _schema
from tests.matrix import test_differential as matrix_diff
from tests.som import test_differential as som_diff
from tests.som._corpus import negative_envelope, negative_files, positive_envelope, positive_files
from tests.som._mutations import mutations
from tests.support.schemas import objects_with
from tests.test_cli import run
from tests.test_schema import DATA, FIXTURES, SHIPPED, TARGETS

DRAFT_07 = SHIPPED / "draft-07"


def _pair(spec: str, name: str) -> tuple[Draft7Validator, Draft202012Validator]:
    old = Draft7Validator(
        ek.json_schema(spec, name, draft="07"), format_checker=Draft7Validator.FORMAT_CHECKER
    )
    new = Draft202012Validator(
        ek.json_schema(spec, name), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    return old, new


@pytest.mark.parametrize(("spec", "name"), TARGETS)
def test_schema_is_valid_draft_07_with_identity(spec: str, name: str) -> None:
    document = ek.json_schema(spec, name, draft="07")
    Draft7Validator.check_schema(document)
    assert document["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert document["$id"] == f"https://envelopekit.dev/schemas/draft-07/{spec}/{name}.schema.json"
    text = json.dumps(document)
    assert "$defs" not in text and "dependentRequired" not in text
    # Draft-07 ignores a $ref's siblings: none is left beside one.
    assert all(set(node) == {"$ref"} for node in objects_with(document, "$ref"))


@pytest.mark.parametrize(("spec", "name"), TARGETS)
def test_shipped_draft_07_schema_is_current(spec: str, name: str) -> None:
    path = DRAFT_07 / spec / f"{name}.schema.json"
    assert path.is_file(), f"{path} is missing: run `make schemas`"
    assert path.read_bytes() == _schema.render(ek.json_schema(spec, name, draft="07")), (
        f"{path} is stale: run `make schemas`"
    )


def test_shipped_draft_07_files_are_exactly_the_registry() -> None:
    shipped = {p.relative_to(DRAFT_07).as_posix() for p in DRAFT_07.rglob("*") if p.is_file()}
    assert shipped == {f"{spec}/{name}.schema.json" for spec, name in TARGETS}


def test_the_cli_writes_the_shipped_bytes(tmp_path: Path) -> None:
    done = run("schema", "--draft", "07", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for spec, name in TARGETS:
        relative = Path(spec) / f"{name}.schema.json"
        assert (tmp_path / relative).read_bytes() == (DRAFT_07 / relative).read_bytes()
    printed = json.loads(run("schema", "--spec", "matrix", "--draft", "07").stdout)
    assert printed["matrix"]["request"] == ek.json_schema("matrix", "request", draft="07")


def test_an_unknown_draft_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown draft"):
        ek.json_schema("som", "envelope", draft="04")  # type: ignore[arg-type]
    done = run("schema", "--draft", "04")
    assert done.returncode == 2
    assert isinstance(done, subprocess.CompletedProcess)


def test_a_keyword_draft_07_cannot_say_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="prefixItems"):
        _schema.to_draft_07({"type": "array", "prefixItems": [{"type": "string"}]})


@pytest.mark.parametrize("keyword", ["default", "examples", "const", "enum"])
def test_a_value_is_copied_not_read_as_a_schema(keyword: str) -> None:
    # Instance data that happens to hold schema keywords: a `dict` field's default, say.
    data = {"prefixItems": [1], "dependentRequired": {"a": ["b"]}, "$ref": "https://x.org/s"}
    value = [data] if keyword in ("examples", "enum") else data
    schema = {"$schema": _schema.DIALECT, "properties": {"shape": {keyword: value}}}
    converted = _schema.to_draft_07(schema)
    assert converted["properties"]["shape"] == {keyword: value}


def test_dependent_required_becomes_dependencies() -> None:
    converted = _schema.to_draft_07(
        {"$schema": _schema.DIALECT, "dependentRequired": {"a": ["b"]}, "$defs": {}}
    )
    assert converted == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "dependencies": {"a": ["b"]},
        "definitions": {},
    }
    validator = Draft7Validator(converted)
    assert not validator.is_valid({"a": 1})
    assert validator.is_valid({"a": 1, "b": 2})


# --- the same verdicts ---------------------------------------------------------------------


class Agreement:
    """Both drafts' verdicts over many documents, counted per outcome."""

    def __init__(self, spec: str, name: str) -> None:
        self.old, self.new = _pair(spec, name)
        self.accepted = self.refused = 0
        self.problems: list[str] = []

    def judge(self, document: Any, where: str) -> None:
        old, new = self.old.is_valid(document), self.new.is_valid(document)
        if old != new:
            self.problems.append(f"{where}: draft-07={old} 2020-12={new}")
        elif new:
            self.accepted += 1
        else:
            self.refused += 1


def test_som_corpus_and_mutations_both_drafts() -> None:
    envelope = Agreement("som", "envelope")
    for path in positive_files():
        envelope.judge(positive_envelope(path), path.name)
    for path in negative_files():
        envelope.judge(negative_envelope(path), path.name)
    for mutation in som_diff.MUTATIONS[::2]:
        envelope.judge(mutation.document, f"{mutation.kind} at {mutation.where}")
    assert envelope.problems == []
    # Both verdicts occur in numbers: agreement is not two schemas that accept everything.
    assert envelope.accepted > 100 and envelope.refused > 1000


def test_som_family_schemas_both_drafts() -> None:
    families = {name: Agreement("som", name) for name in _schema.SCHEMA_NAMES["som"][1:]}
    for mutation in som_diff.MUTATIONS[::6]:
        message_type = mutation.document.get("message_type")
        model = ek.som.PAYLOAD_MODELS.get(message_type) if isinstance(message_type, str) else None
        if model is not None:
            families[model.__schema_name__].judge(mutation.document.get("payload"), mutation.where)
    assert [p for a in families.values() for p in a.problems] == []
    assert all(a.accepted and a.refused for a in families.values())


@pytest.mark.parametrize("kind", ["request", "response", "error-payload"])
def test_matrix_corpus_and_mutations_both_drafts(kind: str) -> None:
    agreement = Agreement("matrix", kind)
    for text, document in matrix_diff.corpus(kind):
        agreement.judge(document, text.decode()[:120])
    cases = json.loads((DATA / "matrix" / "cases.json").read_text("utf-8"))["cases"]
    for case in cases:
        if case["kind"] == kind and "doc" in case:
            agreement.judge(case["doc"], case["id"])
    assert agreement.problems == []
    assert agreement.accepted and agreement.refused


def test_babelqueue_fixtures_and_mutations_both_drafts() -> None:
    envelope = Agreement("babelqueue", "envelope")
    dead_letter = Agreement("babelqueue", "dead-letter")
    for path in FIXTURES:
        document = json.loads(path.read_bytes())
        envelope.judge(document, path.name)
        for mutation in mutations(document):
            envelope.judge(mutation.document, f"{path.name}: {mutation.kind} at {mutation.where}")
            block = mutation.document.get("dead_letter")
            if isinstance(block, dict):
                dead_letter.judge(block, f"{path.name}: {mutation.kind} at {mutation.where}")
    assert envelope.problems == [] and dead_letter.problems == []
    assert envelope.accepted and envelope.refused and dead_letter.accepted and dead_letter.refused
