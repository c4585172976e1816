"""Differential test: envelopekit's models against the official schemas, on mutated messages.

Every valid corpus message (bare payloads wrapped) is mutated one change at a time
(tests/som/_mutations.py). Each mutation is judged twice:

* the **official Python toolchain** as SOM's ``tools/validate.py`` runs it: ``jsonschema``
  Draft 2020-12 with format checking and ``rfc3339-validator``, the envelope schema, then the
  payload schema chosen by the envelope's ``message_type``, then ``som_version in {"1.0.0"}``
  (the tools' ``WIRE_VERSIONS``). The official README installs no ``uri`` checker, so ``uri``
  is not asserted here either (our environment has ``rfc3987``; it is removed from the checker
  so the oracle is the official toolchain, and checked separately below);
* ``envelopekit.check(raw, spec="som")``.

They must agree on valid/invalid for every mutation, except the deliberate differences listed
in ``DELIBERATE_DIFFERENCES``: each one is a place where the Python toolchain is looser than the
strict intersection of the reference validators (som.md §1.3) or than the SOM Managed Bus's
policy. For those the toolchain must accept, envelopekit must refuse with the listed rule, and
every listed difference must actually occur (none is dead).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator, FormatChecker

import envelopekit as ek
from envelopekit.som import SomEnvelope
from tests.som._corpus import SCHEMA_BY_MESSAGE_TYPE, positive_envelope, positive_files
from tests.som._maximal import maximal_envelopes
from tests.som._mutations import SCHEMAS, Mutation, mutations

SEED = 20260911
SAMPLE_PER_MESSAGE = 450

# The seven schemas use three formats: `uuid` (checked by jsonschema itself), `date-time`
# (checked with rfc3339-validator) and `uri`, which the official toolchain does not check: its
# README installs jsonschema and rfc3339-validator only, not rfc3987. This environment has
# rfc3987, so the oracle names the two formats the official toolchain asserts.
OFFICIAL_FORMATS = FormatChecker(["uuid", "date-time"])
VALIDATORS = {
    name: Draft202012Validator(schema, format_checker=OFFICIAL_FORMATS)
    for name, schema in SCHEMAS.items()
}
WIRE_VERSIONS = {"1.0.0"}

# kind -> (why envelopekit is stricter, the rule-id keywords it refuses with).
DELIBERATE_DIFFERENCES: dict[str, tuple[str, set[str]]] = {
    "quirk.date_time_trailing_newline": (
        "Python's `$` matches before a final newline; ECMA-262 (ajv) and envelopekit do not.",
        {"format.date-time"},
    ),
    "quirk.pattern_trailing_newline": (
        "Python's `$` matches before a final newline in schema patterns; ECMA-262 does not.",
        {"pattern", "anyOf", "type", "enum"},  # an `anyOf` of an enum or an `x-` pattern
    ),
    "quirk.pattern_unicode_digit": (
        "Python's `\\d` matches any Unicode digit in schema patterns; ECMA-262's only 0-9.",
        {"pattern", "anyOf", "type", "enum"},  # an `anyOf` of an enum or an `x-` pattern
    ),
    "quirk.uuid_trailing_hyphen": (
        "Python's uuid check strips hyphens before parsing; ajv and envelopekit refuse it.",
        {"format.uuid"},
    ),
    "quirk.uuid_unicode_digit": (
        "Python's int() accepts non-ASCII digits in a UUID; ajv and envelopekit do not.",
        {"format.uuid"},
    ),
    "quirk.uri_not_asserted": (
        "The official Python toolchain asserts no `uri` format; envelopekit asserts an "
        "RFC 3986 absolute URI as ajv (the Node reference and the bus) does.",
        {"format.uri"},
    ),
    "policy.payload_message_type_mismatch": (
        "The schemas do not compare the payload's message_type with the envelope's; the "
        "SOM Managed Bus refuses a disagreement, and so does envelopekit.",
        {"payload.message_type_mismatch"},
    ),
}


def official(document: dict[str, Any]) -> bool:
    """The official Python toolchain's verdict on a full envelope."""
    if not VALIDATORS["envelope"].is_valid(document):
        return False
    if document["som_version"] not in WIRE_VERSIONS:
        return False
    family = SCHEMA_BY_MESSAGE_TYPE.get(document["message_type"])
    return family is None or VALIDATORS[family].is_valid(document["payload"])


def _difference(mutation: Mutation) -> str | None:
    if mutation.kind.startswith("quirk."):
        return mutation.kind
    document = mutation.document
    payload = document.get("payload")
    if (
        isinstance(payload, dict)
        and document.get("message_type") in SCHEMA_BY_MESSAGE_TYPE
        and isinstance(payload.get("message_type"), str)
        and payload["message_type"] != document["message_type"]
    ):
        return "policy.payload_message_type_mismatch"
    return None


def _keyword(rule: str) -> str:
    schema, _, keyword = rule.partition(".")
    return keyword if schema in ek.rules.SCHEMAS else rule


def _sample() -> list[Mutation]:
    rng = random.Random(SEED)
    chosen: list[Mutation] = []
    for path in positive_files():
        every = list(mutations(positive_envelope(path)))
        quirks = [m for m in every if m.kind.startswith("quirk.")]
        others = [m for m in every if not m.kind.startswith("quirk.")]
        chosen.extend(quirks)
        chosen.extend(rng.sample(others, min(SAMPLE_PER_MESSAGE, len(others))))
    return chosen


MUTATIONS = _sample()


def test_enough_mutations_of_every_kind() -> None:
    assert len(MUTATIONS) > 5000
    kinds = Counter(m.kind for m in MUTATIONS)
    for kind in (
        "remove",
        "null",
        "wrong_type",
        "unknown_key",
        "enum_changed",
        "enum_unknown",
        "pattern_prefixed",
        "uuid_no_hyphens",
        "date_time_space",
    ):
        assert kinds[kind] >= 10, kind


def _judged(chosen: list[Mutation]) -> tuple[list[str], Counter[str], int, int]:
    """Each mutation judged by both: the disagreements, the deliberate differences seen, and
    how many both called valid (re-emitted as the same JSON values) and invalid."""
    disagreements: list[str] = []
    seen_differences: Counter[str] = Counter()
    agreed_valid = agreed_invalid = 0
    for mutation in chosen:
        raw = json.dumps(mutation.document, ensure_ascii=False).encode()
        expected = official(mutation.document)
        verdict = ek.check(raw, spec="som")
        if verdict.ok == expected:
            if expected:
                agreed_valid += 1
                # Re-encoding a valid message gives back the same JSON values.
                assert verdict.envelope is not None
                assert orjson.loads(verdict.envelope.to_json()) == mutation.document
            else:
                agreed_invalid += 1
            continue
        difference = _difference(mutation)
        if difference is None or not expected or verdict.ok:
            disagreements.append(
                f"{mutation.kind} at {mutation.where}: official={expected} "
                f"envelopekit={verdict.ok} {[v.rule for v in verdict.violations]}"
            )
            continue
        keywords = {_keyword(v.rule) for v in verdict.violations}
        allowed = DELIBERATE_DIFFERENCES[difference][1]
        if not keywords <= allowed:
            disagreements.append(f"{difference} at {mutation.where}: refused with {keywords}")
        seen_differences[difference] += 1
    return disagreements, seen_differences, agreed_valid, agreed_invalid


def test_models_and_official_schemas_agree() -> None:
    disagreements, seen_differences, agreed_valid, agreed_invalid = _judged(MUTATIONS)
    assert disagreements == []
    # Every documented difference is real: it occurs in this run.
    assert set(seen_differences) == set(DELIBERATE_DIFFERENCES)
    assert agreed_valid > 500
    assert agreed_invalid > 3000


MAXIMAL = maximal_envelopes()


@pytest.mark.parametrize("message_type", sorted(MAXIMAL))
def test_every_optional_member_mutated_as_the_official_schemas_judge_it(message_type: str) -> None:
    # Members no corpus message carries, each changed one at a time, every mutation judged.
    envelope = MAXIMAL[message_type]
    assert official(envelope)
    verdict = ek.check(json.dumps(envelope), spec="som")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert orjson.loads(verdict.envelope.to_json()) == envelope
    disagreements, _, agreed_valid, agreed_invalid = _judged(list(mutations(envelope)))
    assert disagreements == []
    assert agreed_valid > 10 and agreed_invalid > 100


URI_VALUES = [
    *("https://wire.ap.org/stories/x.json", "urn:example:1", "not a uri", "/a/b", ""),
    *("http://[::1]:80/x", "http://wire.ap.org:http/", "urn:a[b]", "http://[::1/"),
]


@pytest.mark.parametrize("value", URI_VALUES)
def test_uri_assertion_matches_an_rfc3986_checker(value: str) -> None:
    """With the rfc3987 checker installed, jsonschema asserts `uri` and agrees with us."""
    full = Draft202012Validator(SCHEMAS["story-context"], format_checker=FormatChecker())
    story = json.loads(
        (positive_files()[0].parent.parent / "story-context" / "tags.json").read_bytes()
    )
    story["content_refs"] = [{"uri": value}]
    envelope = positive_envelope(positive_files()[0])
    envelope.update(message_type="story.context", topic="som.story.context", payload=story)
    raw = json.dumps(envelope).encode()
    assert full.is_valid(story) == ek.check(raw, spec="som").ok


def test_integer_accepts_a_whole_float_and_keeps_the_json_value() -> None:
    envelope = positive_envelope(positive_files()[2])
    envelope["payload"]["sequence_number"] = 1.0
    env = SomEnvelope.model_validate_json(json.dumps(envelope))
    assert env.payload.sequence_number == 1  # type: ignore[union-attr]
    assert orjson.loads(env.to_json()) == envelope
    envelope["payload"]["sequence_number"] = 1.5
    assert not ek.check(json.dumps(envelope), spec="som").ok
    envelope["payload"]["sequence_number"] = True
    assert official(envelope) is False
    assert not ek.check(json.dumps(envelope), spec="som").ok
