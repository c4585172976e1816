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

import envelopekit as ek
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


def _story(
    asset: dict[str, Any] | None = None, assertion: dict[str, Any] | None = None
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "story_id": "story-1",
        "slug": "STORY",
        "headline": "Headline",
        "story_type": "PLANNED",
        "sequence_number": 1,
        "updated_at": AT,
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
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_conditional_is_reported_with_the_other_failures(case: str) -> None:
    schema, envelope, expected = CASES[case]
    verdict = ek.check(json.dumps(envelope), spec="som")
    ours = {(v.rule.removeprefix(schema + "."), v.pointer) for v in verdict.violations}
    assert ours == expected
    # The same keywords as the official toolchain (which points a conditional at the object).
    assert {k for k, _ in ours} == {k for k, _ in _official(schema, envelope["payload"])}
