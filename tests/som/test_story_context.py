"""story.context refusals the official validator reports together, compared keyword by keyword.

The oracle is the official Python toolchain (``jsonschema`` Draft 2020-12 on the vendored
``story-context.schema.json``); an ``anyOf`` or a conditional reports its own keyword together with
what its branches failed, and envelopekit reports the same keywords.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker, ValidationError

import envelopekit as ek
from envelopekit.som import EditorialGate, GateBlock, StoryContext
from tests.som._corpus import DATA
from tests.som._mutations import SCHEMAS

BEAT6: dict[str, Any] = json.loads(
    (DATA / "examples/story-context/hurricane-beat6-envelope.json").read_bytes()
)
ORACLE = Draft202012Validator(
    SCHEMAS["story-context"], format_checker=FormatChecker(["uuid", "date-time"])
)
BLOCK = "/payload/editorial_gates/0/blocks/0"


def _official(payload: dict[str, Any]) -> set[tuple[str, str]]:
    """(keyword, pointer) of every error the oracle reports, ``anyOf`` branches included."""
    found: set[tuple[str, str]] = set()

    def collect(errors: Iterable[ValidationError]) -> None:
        for error in errors:
            where = "".join(f"/{segment}" for segment in error.absolute_path)
            found.add((str(error.validator), "/payload" + where))
            collect(error.context or ())

    collect(ORACLE.iter_errors(payload))
    return found


def _ours(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    verdict = ek.check(json.dumps(envelope), spec="som")
    return {(v.rule.removeprefix("story-context."), v.pointer) for v in verdict.violations}


def _with_blocks(blocks: list[Any]) -> dict[str, Any]:
    envelope = copy.deepcopy(BEAT6)
    envelope["payload"]["editorial_gates"][0]["blocks"] = blocks
    return envelope


@pytest.mark.parametrize(
    "block",
    [
        {"kind": "LINK", "ref": "x"},
        1,
        None,
        [],
        {},
        {"kind": "ASSET", "ref": 1},
        {"kind": "PHASE", "ref": "BREAKING", "note": "x"},
    ],
    ids=["kind-link", "number", "null", "array", "empty", "ref-number", "unknown-member"],
)
def test_a_bad_gate_block_reports_any_of_with_its_branch_keywords(block: Any) -> None:
    envelope = _with_blocks(["asset-1", block])
    official = _official(envelope["payload"])
    ours = _ours(envelope)
    item = "/payload/editorial_gates/0/blocks/1"
    assert ("anyOf", item) in official
    assert ("anyOf", item) in ours
    # The oracle's keywords; envelopekit points `required` and `additionalProperties` at the
    # member concerned, inside the item.
    assert {keyword for keyword, _ in ours} == {keyword for keyword, _ in official}
    assert all(pointer.startswith(item) for _, pointer in ours)


def test_the_two_reported_gate_blocks_give_exactly_the_oracles_rules() -> None:
    linked = ek.check(json.dumps(_with_blocks([{"kind": "LINK", "ref": "x"}])), spec="som")
    assert sorted(linked.rules()) == [
        "story-context.anyOf",
        "story-context.enum",
        "story-context.type",
    ]
    assert {(v.rule, v.pointer) for v in linked.violations} == {
        ("story-context.anyOf", BLOCK),
        ("story-context.enum", BLOCK + "/kind"),
        ("story-context.type", BLOCK),
    }
    number = ek.check(json.dumps(_with_blocks([1])), spec="som")
    assert {(v.rule, v.pointer) for v in number.violations} == {
        ("story-context.anyOf", BLOCK),
        ("story-context.type", BLOCK),
    }


def test_valid_gate_blocks_keep_their_types() -> None:
    envelope = _with_blocks([{"kind": "ASSET", "ref": "asset-1"}, "legacy-asset"])
    verdict = ek.check(json.dumps(envelope), spec="som")
    assert verdict.ok and verdict.envelope is not None
    gate = verdict.envelope.payload_as(StoryContext).editorial_gates[0]  # type: ignore[index]
    assert gate.blocks == [GateBlock(kind="ASSET", ref="asset-1"), "legacy-asset"]
    assert json.loads(verdict.envelope.to_json()) == envelope
    built = EditorialGate(
        gate_id="g", gate_type="t", status="PENDING", blocks=[GateBlock(kind="PHASE", ref="x")]
    )
    assert built.blocks == [GateBlock(kind="PHASE", ref="x")]


@pytest.mark.parametrize("story_type", ["LIVE", 5, None, "active"])
def test_an_invalid_story_type_with_a_lifecycle_also_fails_the_conditional(
    story_type: Any,
) -> None:
    envelope = copy.deepcopy(BEAT6)
    envelope["payload"]["story_type"] = story_type
    official = _official(envelope["payload"])
    ours = _ours(envelope)
    assert ("not", "/payload") in official
    assert ("enum", "/payload/story_type") in official
    # The conditional's `not` is pointed at the member it forbids, as for a valid story_type.
    assert ("not", "/payload/lifecycle") in ours
    assert ("enum", "/payload/story_type") in ours
    # A non-string story_type is `type` as well as `enum`, to the oracle and to us.
    assert {keyword for keyword, _ in ours} == {keyword for keyword, _ in official}


def test_a_missing_story_type_with_a_lifecycle_also_fails_the_conditional() -> None:
    envelope = copy.deepcopy(BEAT6)
    del envelope["payload"]["story_type"]
    assert {k for k, _ in _official(envelope["payload"])} == {"required", "not"}
    assert _ours(envelope) == {("required", "/payload/story_type"), ("not", "/payload/lifecycle")}


def test_a_non_active_story_with_other_errors_still_fails_the_conditional() -> None:
    envelope = copy.deepcopy(BEAT6)
    envelope["payload"]["story_type"] = "PLANNED"
    del envelope["payload"]["slug"]
    envelope["payload"]["sequence_number"] = -1
    assert {k for k, _ in _official(envelope["payload"])} == {"required", "not", "minimum"}
    assert _ours(envelope) == {
        ("required", "/payload/slug"),
        ("not", "/payload/lifecycle"),
        ("minimum", "/payload/sequence_number"),
    }


def test_an_active_story_with_other_errors_still_requires_a_lifecycle() -> None:
    envelope = copy.deepcopy(BEAT6)
    del envelope["payload"]["lifecycle"]
    envelope["payload"]["sequence_number"] = -1
    assert {k for k, _ in _official(envelope["payload"])} == {"required", "minimum"}
    assert _ours(envelope) == {
        ("required", "/payload/lifecycle"),
        ("minimum", "/payload/sequence_number"),
    }


def test_an_invalid_story_type_without_a_lifecycle_is_only_the_enum() -> None:
    envelope = copy.deepcopy(BEAT6)
    envelope["payload"]["story_type"] = "LIVE"
    del envelope["payload"]["lifecycle"]
    assert {k for k, _ in _official(envelope["payload"])} == {"enum"}
    assert _ours(envelope) == {("enum", "/payload/story_type")}


def test_the_lifecycle_conditional_is_unchanged_for_valid_story_types() -> None:
    active = copy.deepcopy(BEAT6)
    assert _ours(active) == set()
    del active["payload"]["lifecycle"]
    assert _ours(active) == {("required", "/payload/lifecycle")}
    planned = copy.deepcopy(BEAT6)
    planned["payload"]["story_type"] = "PLANNED"
    assert _ours(planned) == {("not", "/payload/lifecycle")}
    del planned["payload"]["lifecycle"]
    assert _ours(planned) == set()
