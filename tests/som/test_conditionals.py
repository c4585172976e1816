"""SOM conditionals reported whatever else fails, as the official validator does.

The oracle is the official Python toolchain (``jsonschema`` Draft 2020-12 on the vendored
schemas, ``uuid`` and ``date-time`` asserted): a message that breaks one of the schema's
``if``/``then`` rules *and* another member gets both reported, and so does envelopekit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from pydantic import ValidationError as ValidationError_

import envelopekit as ek
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._json import json_identity
from envelopekit._violations import raised_again
from envelopekit.som import SomEnvelope, StoryContext
from envelopekit.som._types import conditional
from tests._calls import python_calls
from tests.som._corpus import wrap
from tests.som._mutations import SCHEMAS

ID = "01920000-0000-7000-8000-0000000000a1"
AT = "2026-09-11T16:41:00Z"
WITHDRAWN = {"withdrawn_by": "editor-1", "withdrawn_at": AT}


def _official(schema: str, payload: dict[str, Any]) -> set[tuple[str, str]]:
    """(keyword, pointer) of every error the oracle reports, ``anyOf`` branches included."""
    formats = FormatChecker(["uuid", "date-time"])
    oracle = Draft202012Validator(SCHEMAS[schema], format_checker=formats)
    found: set[tuple[str, str]] = set()

    def collect(errors: Iterable[ValidationError]) -> None:
        for error in errors:
            where = "".join(f"/{segment}" for segment in error.absolute_path)
            keyword = str(error.validator)
            if keyword == "format":
                keyword += "." + str(error.validator_value)
            found.add((keyword, "/payload" + where))
            collect(error.context or ())

    collect(oracle.iter_errors(payload))
    return found


def _link(message_type: str, **members: Any) -> dict[str, Any]:
    payload = {
        "message_type": message_type,
        "link_id": ID,
        "asset_id": "asset-1",
        "destination_id": "dest-1",
        "compliance_gate_status": "PENDING",
        **members,
    }
    return wrap(payload, message_type)


def _telling(message_type: str, **members: Any) -> dict[str, Any]:
    payload = {"message_type": message_type, "telling_id": ID, "link_id": ID, **members}
    return wrap(payload, message_type)


def _delivery(**members: Any) -> dict[str, Any]:
    payload = {
        "message_type": "delivery.media_available",
        "delivery_id": ID,
        "asset_id": "asset-1",
        "arrived_in": "mam-1",
        "arrived_at": AT,
        **members,
    }
    return wrap(payload, "delivery.media_available")


def _compliance(**media_range: Any) -> list[dict[str, Any]]:
    flag = {
        "flag_id": "f-1",
        "type": "LEGAL_REVIEW",
        "severity": "HIGH",
        "detail": "d",
        "raised_by": "editor-1",
        "raised_at": AT,
        "status": "ACTIVE",
        "media_range": media_range,
    }
    return [flag]


def _story(
    asset: dict[str, Any] | None = None,
    assertion: dict[str, Any] | None = None,
    **members: Any,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "story_id": "story-1",
        "slug": "STORY",
        "headline": "Headline",
        "story_type": "PLANNED",
        "sequence_number": 1,
        "updated_at": AT,
        **members,
    }
    if asset is not None:
        payload["assets"] = [{"asset_id": "a-1", "asset_type": "VIDEO", "status": "READY", **asset}]
    if assertion is not None:
        payload["assertions"] = [
            {
                "assertion_id": "as-1",
                "assertion_type": "FACT_CHECK",
                "target": {"kind": "STORY", "id": "story-1"},
                "claim": {"metric": "m", "value": 1},
                "asserted_at": AT,
                "provenance": {"author": "MODEL"},
                **assertion,
            }
        ]
    return wrap(payload, "story.context")


# (schema, envelope, what envelopekit reports: (rule keyword, pointer)).
CASES: dict[str, tuple[str, dict[str, Any], set[tuple[str, str]]]] = {
    "link-committed-without-committer-and-bad-link-id": (
        "link-event",
        _link("link.committed", link_id="x", committed_at=AT),
        {("format.uuid", "/payload/link_id"), ("required", "/payload/committed_by")},
    ),
    "link-committed-without-time-and-bad-asset-id": (
        "link-event",
        _link("link.committed", asset_id=1, committed_by="editor-1"),
        {("type", "/payload/asset_id"), ("required", "/payload/committed_at")},
    ),
    "link-committed-with-withdrawn-and-bad-status": (
        "link-event",
        _link(
            "link.committed",
            committed_by="e",
            committed_at=AT,
            withdrawn=WITHDRAWN,
            compliance_gate_status="APPROVED",
        ),
        {("enum", "/payload/compliance_gate_status"), ("not", "/payload/withdrawn")},
    ),
    "link-gate-changed-with-withdrawn-and-bad-link-id": (
        "link-event",
        _link("link.gate_changed", link_id="x", withdrawn=WITHDRAWN),
        {("format.uuid", "/payload/link_id"), ("not", "/payload/withdrawn")},
    ),
    "link-withdrawn-without-withdrawn-and-bad-destination": (
        "link-event",
        _link("link.withdrawn", destination_id=[]),
        {("type", "/payload/destination_id"), ("required", "/payload/withdrawn")},
    ),
    "telling-started-with-end-and-bad-telling-id": (
        "telling-event",
        _telling("telling.started", telling_id="x", exposure_start=AT, exposure_end=AT),
        {("format.uuid", "/payload/telling_id"), ("not", "/payload/exposure_end")},
    ),
    "telling-started-without-start-and-bad-schedule": (
        "telling-event",
        _telling("telling.started", scheduled_start="soon"),
        {("format.date-time", "/payload/scheduled_start"), ("required", "/payload/exposure_start")},
    ),
    "telling-ended-without-end-and-bad-link-id": (
        "telling-event",
        _telling("telling.ended", link_id="l1", exposure_start=AT),
        {("format.uuid", "/payload/link_id"), ("required", "/payload/exposure_end")},
    ),
    "telling-exposed-without-start-and-bad-transforms": (
        "telling-event",
        _telling("telling.exposed", exposure_end=AT, transforms={}),
        {("type", "/payload/transforms"), ("required", "/payload/exposure_start")},
    ),
    "provenance-human-with-model-and-bad-confidence": (
        "story-context",
        _story(asset={"provenance": {"author": "HUMAN", "model": "m", "confidence": 2}}),
        {
            ("maximum", "/payload/assets/0/provenance/confidence"),
            ("not", "/payload/assets/0/provenance/model"),
        },
    ),
    "provenance-human-with-model-version-and-bad-review": (
        "story-context",
        _story(asset={"provenance": {"author": "HUMAN", "model_version": "1", "review": {}}}),
        {
            ("required", "/payload/assets/0/provenance/review/state"),
            ("not", "/payload/assets/0/provenance/model_version"),
        },
    ),
    "fact-check-claim-without-value-and-bad-time": (
        "story-context",
        _story(assertion={"claim": {"metric": "m"}, "asserted_at": "soon"}),
        {
            ("format.date-time", "/payload/assertions/0/asserted_at"),
            ("required", "/payload/assertions/0/claim/value"),
        },
    ),
    "match-claim-without-story-and-bad-target": (
        "story-context",
        _story(assertion={"assertion_type": "MATCH", "claim": {}, "target": {"kind": "GATE"}}),
        {
            ("enum", "/payload/assertions/0/target/kind"),
            ("required", "/payload/assertions/0/target/id"),
            ("required", "/payload/assertions/0/claim/story_id"),
        },
    ),
    "delivery-without-source-or-locator-and-bad-delivery-id": (
        "delivery-media-available",
        _delivery(delivery_id="x"),
        {("format.uuid", "/payload/delivery_id"), ("anyOf", "/payload"), ("required", "/payload")},
    ),
    "delivery-without-source-or-locator-and-bad-time-range": (
        "delivery-media-available",
        _delivery(time_range=7, arrived_at="soon"),
        {
            ("anyOf", "/payload/time_range"),
            ("type", "/payload/time_range"),
            ("format.date-time", "/payload/arrived_at"),
            ("anyOf", "/payload"),
            ("required", "/payload"),
        },
    ),
    "media-ref-without-source-or-locator-and-bad-time-range": (
        "story-context",
        _story(asset={"media_refs": [{"time_range": 7}]}),
        {
            ("anyOf", "/payload/assets/0/media_refs/0/time_range"),
            ("type", "/payload/assets/0/media_refs/0/time_range"),
            ("anyOf", "/payload/assets/0/media_refs/0"),
            ("required", "/payload/assets/0/media_refs/0"),
        },
    ),
    "media-range-without-time-range-and-bad-locator": (
        "story-context",
        _story(compliance=_compliance(locator={"store": "s"})),
        {
            ("required", "/payload/compliance/0/media_range/locator/ref"),
            ("anyOf", "/payload/compliance/0/media_range"),
            ("required", "/payload/compliance/0/media_range"),
        },
    ),
    "media-range-without-source-or-locator-and-bad-time-range": (
        "story-context",
        _story(compliance=_compliance(time_range=[1])),
        {
            ("anyOf", "/payload/compliance/0/media_range/time_range"),
            ("type", "/payload/compliance/0/media_range/time_range"),
            ("anyOf", "/payload/compliance/0/media_range"),
            ("required", "/payload/compliance/0/media_range"),
        },
    ),
    "planned-story-with-an-invalid-lifecycle": (
        "story-context",
        _story(lifecycle={}),
        {
            ("required", "/payload/lifecycle/phase"),
            ("required", "/payload/lifecycle/phase_entered_at"),
            ("not", "/payload/lifecycle"),
        },
    ),
    "link-gate-changed-with-an-invalid-withdrawn": (
        "link-event",
        _link("link.gate_changed", withdrawn={}),
        {
            ("required", "/payload/withdrawn/withdrawn_by"),
            ("required", "/payload/withdrawn/withdrawn_at"),
            ("not", "/payload/withdrawn"),
        },
    ),
    "telling-started-with-an-invalid-end": (
        "telling-event",
        _telling("telling.started", exposure_start=AT, exposure_end="soon"),
        {("format.date-time", "/payload/exposure_end"), ("not", "/payload/exposure_end")},
    ),
    "provenance-human-with-an-invalid-model": (
        "story-context",
        _story(asset={"provenance": {"author": "HUMAN", "model": 1}}),
        {
            ("type", "/payload/assets/0/provenance/model"),
            ("not", "/payload/assets/0/provenance/model"),
        },
    ),
    "repeated-tags-and-an-invalid-tag": (
        "story-context",
        _story(
            tags=[
                {"scheme": "newsroom", "value": "v"},
                {"scheme": "newsroom", "value": "v"},
                {"scheme": 1},
            ]
        ),
        {
            ("type", "/payload/tags/2/scheme"),
            ("required", "/payload/tags/2/value"),
            ("uniqueItems", "/payload/tags"),
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_conditional_is_reported_with_the_other_failures(case: str) -> None:
    schema, envelope, expected = CASES[case]
    verdict = ek.check(json.dumps(envelope), spec="som")
    ours = {(v.rule.removeprefix(schema + "."), v.pointer) for v in verdict.violations}
    assert ours == expected
    # The same keywords as the official toolchain (which points a conditional at the object).
    assert {k for k, _ in ours} == {k for k, _ in _official(schema, envelope["payload"])}


def _by_check(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    return {(v.rule, v.pointer) for v in ek.check(json.dumps(envelope), spec="som").violations}


def _by_check_large(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    # Past FULL_REPORT_BYTES, check takes the large-message (fail-fast) reading, which says
    # when it stopped an array at its first failing item (not a finding of the schema's).
    raw = json.dumps(envelope) + " " * (FULL_REPORT_BYTES + 1)
    found = ek.check(raw, spec="som").violations
    return {(v.rule, v.pointer) for v in found if v.rule != ek.rules.VIOLATIONS_TRUNCATED}


def _by_json(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    with pytest.raises(ValidationError_) as refused:
        SomEnvelope.model_validate_json(json.dumps(envelope))
    return {(v.rule, v.pointer) for v in ek.violations(refused.value)}


def _by_dict(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    with pytest.raises(ValidationError_) as refused:
        SomEnvelope.model_validate(envelope)
    return {(v.rule, v.pointer) for v in ek.violations(refused.value)}


DOORS = {
    "check": _by_check,
    "check-large": _by_check_large,
    "model-validate-json": _by_json,
    "model-validate-dict": _by_dict,
}


@pytest.mark.parametrize("door", list(DOORS), ids=list(DOORS))
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_every_door_reports_the_same_rules(case: str, door: str) -> None:
    schema, envelope, expected = CASES[case]
    assert DOORS[door](envelope) == {(f"{schema}.{k}", p) for k, p in expected}


# Unhashable values no JSON document holds, in repeated tags beside an invalid one (model_validate
# of a dict).
NOT_JSON = {"set": {1, 2}, "bytearray": bytearray(b"v")}


@pytest.mark.parametrize("value", list(NOT_JSON.values()), ids=list(NOT_JSON))
def test_repeated_tags_holding_values_no_json_holds_are_refused_not_crashed(value: Any) -> None:
    tag = {"scheme": "newsroom", "value": "v", "label": value}
    envelope = _story(tags=[tag, tag, {"scheme": 1}])
    found = _by_dict(envelope)
    assert ("story-context.type", "/payload/tags/0/label") in found
    assert ("story-context.uniqueItems", "/payload/tags") in found


# Tags beside an invalid one, searched for a repeat as sent (a message within FULL_REPORT_BYTES):
# values of many scalars (a list of 1,500 numbers, an object of 40 members), equal or not as
# JSON Schema judges them.
_MANY = 1_500
_WIDE = {f"k{i}": i for i in range(40)}
SCALAR_TAGS: dict[str, tuple[list[Any], bool]] = {
    "one-list-of-numbers": ([[-1] * _MANY], False),
    "equal-lists-of-numbers": ([[-1] * _MANY, [-1] * _MANY], True),
    "lists-equal-as-numbers": ([[1] * _MANY, [1.0] * _MANY], True),
    "lists-differing-at-the-end": ([[1] * _MANY, [*[1] * (_MANY - 1), 2]], False),
    "a-boolean-is-no-number": ([[1] * _MANY, [*[1] * (_MANY - 1), True]], False),
    "equal-lists-with-booleans": ([[1, True] * 600, [1.0, True] * 600], True),
    "lists-of-strings": ([[f"s{i}" for i in range(500)]] * 2, True),
    "objects-in-another-order": ([_WIDE, dict(reversed(_WIDE.items()))], True),
    "objects-equal-as-numbers": ([_WIDE, {k: float(v) for k, v in _WIDE.items()}], True),
    "objects-differing-by-a-boolean": ([{"a": 1, **_WIDE}, {"a": True, **_WIDE}], False),
}
SMALL_DOORS = {
    door: DOORS[door] for door in ("check", "model-validate-json", "model-validate-dict")
}


@pytest.mark.parametrize("door", list(SMALL_DOORS), ids=list(SMALL_DOORS))
@pytest.mark.parametrize("case", list(SCALAR_TAGS), ids=list(SCALAR_TAGS))
def test_the_repeat_search_reads_scalars_at_c_speed(case: str, door: str) -> None:
    # Each number was a Python call of json_identity (tags = [[-1] * 4,000] in a 16 KB story:
    # check 26x orjson.loads, 8x before the search): scalars are compared by Python's
    # equality, which is JSON Schema's, and by whether each is a boolean.
    tags, repeated = SCALAR_TAGS[case]
    envelope = _story(tags=[{"scheme": 1}, *tags])
    assert len(json.dumps(envelope)) <= FULL_REPORT_BYTES
    found = python_calls(lambda: SMALL_DOORS[door](envelope))
    assert sum(code is json_identity.__code__ for code in found) <= 3
    verdict = SMALL_DOORS[door](envelope)
    assert (("story-context.uniqueItems", "/payload/tags") in verdict) is repeated
    oracle = {k for k, _ in _official("story-context", envelope["payload"])}
    assert ("uniqueItems" in oracle) is repeated


def _tag(i: int) -> dict[str, str]:
    return {"scheme": "newsroom", "value": f"v{i}"}


# Large messages (past FULL_REPORT_BYTES): (tags before the first invalid one, whether one
# repeats), the invalid tag, then 20,000 tags never read.
_UNREAD = [[i] for i in range(20_000)]
TAGS_BEFORE: dict[str, tuple[list[Any], bool]] = {
    "none": ([], False),
    "distinct": ([_tag(i) for i in range(100)], False),
    "a-repeat": ([*(_tag(i) for i in range(100)), _tag(7)], True),
    "a-repeat-in-another-order": ([_tag(1), {"value": "v1", "scheme": "newsroom"}], True),
}


def _by_payload_json(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    # The payload's own model read alone, its pointers given under the envelope's /payload.
    with pytest.raises(ValidationError_) as refused:
        StoryContext.model_validate_json(json.dumps(envelope["payload"]))
    return {(v.rule, "/payload" + v.pointer) for v in ek.violations(refused.value)}


def _by_payload_dict(envelope: dict[str, Any]) -> set[tuple[str, str]]:
    with pytest.raises(ValidationError_) as refused:
        StoryContext.model_validate(envelope["payload"])
    return {(v.rule, "/payload" + v.pointer) for v in ek.violations(refused.value)}


# Every door, and the payload model's own read alone: over 16 KiB they read as the envelope's.
LARGE_DOORS = {
    **DOORS,
    "payload-model-validate-json": _by_payload_json,
    "payload-model-validate-dict": _by_payload_dict,
}


@pytest.mark.parametrize("door", list(LARGE_DOORS), ids=list(LARGE_DOORS))
@pytest.mark.parametrize("case", list(TAGS_BEFORE), ids=list(TAGS_BEFORE))
def test_a_large_message_searches_the_tags_before_the_first_invalid_one(
    case: str, door: str
) -> None:
    # Its list stops at the first invalid tag, which repeats no valid one: the 20,000 tags
    # after it were each read for a repeat (beside an invalid tag, 78,000 numbers in the tags
    # at SOM's limit: check 19x orjson.loads, 2.9x before the search). The valid tags before
    # it, objects of strings, are compared by C passes.
    before, repeated = TAGS_BEFORE[case]
    envelope = _story(tags=[*before, {"scheme": 1}, *_UNREAD])
    assert json_identity.__code__ not in python_calls(lambda: LARGE_DOORS[door](envelope))
    verdict = LARGE_DOORS[door](envelope)
    assert (("story-context.uniqueItems", "/payload/tags") in verdict) is repeated
    assert ("story-context.type", f"/payload/tags/{len(before)}/scheme") in verdict


@pytest.mark.parametrize("door", list(LARGE_DOORS), ids=list(LARGE_DOORS))
def test_a_large_message_reads_no_repeat_after_the_first_invalid_tag(door: str) -> None:
    # The payload's model read alone reported the repeat after it, which the envelope's doors
    # and check never read.
    envelope = _story(tags=[_tag(1), {"scheme": 1}, _tag(1), _tag(1), *_UNREAD])
    verdict = LARGE_DOORS[door](envelope)
    assert ("story-context.uniqueItems", "/payload/tags") not in verdict
    assert ("story-context.type", "/payload/tags/1/scheme") in verdict


# A refused member holding many errors of its own, in a large message (past FULL_REPORT_BYTES):
# (message type, other members).
_REFUSED_WITH_ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "link-committed": ("link.committed", {"committed_by": "e", "committed_at": AT}),
    "link-committed-and-bad-link-id": (
        "link.committed",
        {"committed_by": "e", "committed_at": AT, "link_id": 1},
    ),
    "link-gate-changed": ("link.gate_changed", {}),
}
_LARGE_DOORS = {
    "model-validate-json": lambda envelope: SomEnvelope.model_validate_json(json.dumps(envelope)),
    "model-validate-dict": SomEnvelope.model_validate,
}


@pytest.mark.parametrize("door", list(_LARGE_DOORS), ids=list(_LARGE_DOORS))
@pytest.mark.parametrize("case", list(_REFUSED_WITH_ERRORS), ids=list(_REFUSED_WITH_ERRORS))
def test_a_large_refused_member_is_reported_with_its_errors_never_copied(
    case: str, door: str
) -> None:
    # The refusal was joined to the member's own errors by a copy of each (22,772 unknown
    # keys in `withdrawn`: model_validate_json 46x orjson.loads); the large reading's is a
    # field of its own, whose error pydantic-core adds after them. The same errors as the
    # model's own validator's, in its order.
    message_type, members = _REFUSED_WITH_ERRORS[case]
    unknown = {f"k{i}": i for i in range(2_000)}
    envelope = _link(message_type, withdrawn={**WITHDRAWN, **unknown}, **members)
    assert len(json.dumps(envelope)) > FULL_REPORT_BYTES
    refused: list[ValidationError_] = []

    def validate() -> None:
        try:
            _LARGE_DOORS[door](envelope)
        except ValidationError_ as exc:
            refused.append(exc)

    entered = python_calls(validate)
    assert raised_again.__code__ not in entered
    with pytest.raises(ValidationError_) as own:
        SomEnvelope.__pydantic_validator__.validate_json(json.dumps(envelope))
    assert refused[0].errors() == own.value.errors()
    assert refused[0].errors()[-1]["type"] == "not"
    assert refused[0].error_count() == 2_000 + 1 + ("link_id" in members)


@pytest.mark.parametrize("door", list(_LARGE_DOORS), ids=list(_LARGE_DOORS))
@pytest.mark.parametrize("case", list(_REFUSED_WITH_ERRORS), ids=list(_REFUSED_WITH_ERRORS))
def test_a_large_refused_member_s_errors_pass_no_python_validator(case: str, door: str) -> None:
    # A wrap validator's errors cross Python: pydantic-core makes a `ValidationError` of them
    # and reads it back (22,772 unknown keys in `withdrawn`: a quarter of the large reading).
    # The large reading reads the member with the conditional's after-validator, which its
    # failure never calls: of the conditionals' functions, only the other members' run.
    message_type, members = _REFUSED_WITH_ERRORS[case]
    envelope = _link(message_type, withdrawn={f"k{i}": i for i in range(2_000)}, **members)
    conditionals = conditional.__code__.co_filename

    def validate() -> None:
        with pytest.raises(ValidationError_):
            _LARGE_DOORS[door](envelope)

    entered = [
        code.co_name
        for code in python_calls(validate)
        if code.co_filename == conditionals and code.co_name.startswith("_conditional")
    ]
    # committed_by's and committed_at's (their conditional's, an after-validator), in each
    # reading (the JSON door reads a message lacking members among 1,000 errors twice).
    assert set(entered) == {"_conditional_after"}


@pytest.mark.parametrize("case", list(_REFUSED_WITH_ERRORS), ids=list(_REFUSED_WITH_ERRORS))
def test_a_large_refused_member_read_by_name_is_refused_as_the_model_refuses_it(
    case: str,
) -> None:
    # Fields found by name alone (by_alias=False) never find a refusal's own field, found by
    # the member's alias: that reading joins the refusal to the member's errors, as before.
    message_type, members = _REFUSED_WITH_ERRORS[case]
    envelope = _link(message_type, withdrawn={f"k{i}": i for i in range(2_000)}, **members)
    raw = json.dumps(envelope)
    assert len(raw) > FULL_REPORT_BYTES
    with pytest.raises(ValidationError_) as door:
        SomEnvelope.model_validate_json(raw, by_alias=False, by_name=True)
    with pytest.raises(ValidationError_) as own:
        SomEnvelope.__pydantic_validator__.validate_json(raw, by_alias=False, by_name=True)
    assert door.value.errors() == own.value.errors()
    assert door.value.errors()[-1]["type"] == "not"
