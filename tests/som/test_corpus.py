"""The official SOM 1.0 corpus: 18 examples must validate, 20 must be refused with their rule ids.

The expected rule-id sets are som.md §13.2 (the SOM Managed Bus's ids), kept as data in
tests/data/som/expected-rules.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit.som import SomEnvelope, StoryContext, UnvalidatedPayload
from tests.som._corpus import (
    DATA,
    label,
    negative_envelope,
    negative_files,
    positive_envelope,
    positive_files,
)

POSITIVE = positive_files()
NEGATIVE = negative_files()
EXPECTED: dict[str, list[str]] = json.loads((DATA / "expected-rules.json").read_bytes())


def test_corpus_counts() -> None:
    assert len(POSITIVE) == 18
    assert len(NEGATIVE) == 20
    assert sorted(EXPECTED) == [p.name for p in NEGATIVE]


def test_vendored_corpus_matches_sha256sums() -> None:
    lines = (DATA / "SHA256SUMS").read_text().splitlines()
    assert len(lines) == 45
    for line in lines:
        digest, name = line.split(maxsplit=1)
        path = DATA / name.removeprefix("./")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name


def _raw(document: object) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode()


@pytest.mark.parametrize("path", POSITIVE, ids=[label(p) for p in POSITIVE])
def test_positive_example_validates(path: Path) -> None:
    raw = _raw(positive_envelope(path))
    verdict = ek.check(raw, spec="som")
    assert verdict.ok, verdict.violations
    assert verdict.warnings == []
    assert verdict.envelope is not None
    assert not isinstance(verdict.envelope.payload, UnvalidatedPayload)
    env = SomEnvelope.model_validate_json(raw)
    assert env.family is not None
    assert env.payload.__schema_name__ == env.family


def test_envelope_example_validates_byte_for_byte_input() -> None:
    raw = (DATA / "examples/story-context/hurricane-beat6-envelope.json").read_bytes()
    env = SomEnvelope.model_validate_json(raw)
    assert isinstance(env.payload, StoryContext)
    assert env.timestamp == "2026-09-11T16:41:00.000000Z"


@pytest.mark.parametrize("path", NEGATIVE, ids=[label(p) for p in NEGATIVE])
def test_negative_example_is_refused_with_its_rules(path: Path) -> None:
    raw = _raw(negative_envelope(path))
    expected = set(EXPECTED[path.name])

    verdict = ek.check(raw, spec="som")
    assert not verdict.ok
    assert verdict.envelope is None
    assert {v.rule for v in verdict.violations} == expected
    for found in verdict.violations:
        assert found.pointer == "" or found.pointer.startswith("/")
        assert found.source == ek.rules.source_of(found.rule)

    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(raw)
    assert {v.rule for v in ek.violations(caught.value)} == expected


POINTERS = {
    "audit-flat-actor.json": {"/payload/actor", "/payload/actor_id"},
    "delivery-neither-source-nor-locator.json": {"/payload"},
    "envelope-extensions-not-namespaced.json": {"/extensions/vendor_field"},
    "envelope-message-id-not-uuid.json": {"/message_id"},
    "envelope-missing-correlation-id.json": {"/correlation_id"},
    "envelope-signature-not-allowed.json": {"/signature"},
    "envelope-som-version-0-3-2.json": {"/som_version"},
    "envelope-source-not-allowed.json": {"/source"},
    "envelope-system-type-unknown.json": {"/originating_system/system_type"},
    "envelope-timestamp-not-date-time.json": {"/timestamp"},
    "envelope-topic-not-som.json": {"/topic"},
    "envelope-unknown-property.json": {"/unexpected"},
    "link-gate-status-unknown.json": {"/payload/compliance_gate_status"},
    "story-context-ai-enrichments.json": {"/payload/ai_enrichments"},
    "story-context-asset-status-finalizing.json": {"/payload/assets/0/status"},
    "story-context-asset-voice-count.json": {"/payload/assets/0/voice_count"},
    "story-context-lifecycle-phase-live.json": {"/payload/lifecycle/phase"},
    "story-context-missing-story-id.json": {"/payload/story_id"},
    "telling-transform-id.json": {"/payload/transforms/0/transform_id"},
    "telling-transform-missing-type.json": {"/payload/transforms/0/transform_type"},
}


@pytest.mark.parametrize("path", NEGATIVE, ids=[label(p) for p in NEGATIVE])
def test_negative_example_points_into_the_input(path: Path) -> None:
    verdict = ek.check(_raw(negative_envelope(path)), spec="som")
    assert {v.pointer for v in verdict.violations} == POINTERS[path.name]


def test_auto_detection_recognises_som() -> None:
    raw = (DATA / "examples/story-context/hurricane-beat6-envelope.json").read_bytes()
    assert ek.check(raw).spec == "som"
    assert ek.check(raw).ok
