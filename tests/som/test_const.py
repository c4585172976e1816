"""A ``const`` that sits beside ``type: string`` reports both keywords for a non-string value.

The official schemas write ``{"type": "string", "const": ...}`` for ``assets[].usage[].state``
and the ``message_type`` of delivery-media-available and skill-warning, but a bare
``{"const": "system.audit"}`` for system-audit's: a number there fails ``type`` and ``const``
in the first three and ``const`` alone in the last, to the official validator and to
envelopekit alike.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

import envelopekit as ek
from tests.som._corpus import EXAMPLES, wrap
from tests.som._mutations import SCHEMAS

BEAT6: dict[str, Any] = json.loads((EXAMPLES / "story-context/hurricane-beat6.json").read_bytes())
DELIVERY: dict[str, Any] = json.loads((EXAMPLES / "delivery/locator.json").read_bytes())
WARNING: dict[str, Any] = json.loads((EXAMPLES / "skill-warning/raised.json").read_bytes())
AUDIT: dict[str, Any] = json.loads((EXAMPLES / "system-audit/suppressed.json").read_bytes())


def _usage_state(value: Any) -> dict[str, Any]:
    payload = copy.deepcopy(BEAT6)
    asset = next(a for a in payload["assets"] if "usage" in a)
    asset["usage"][0]["state"] = value
    return payload


def _set(payload: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    return {**payload, key: value}


# (schema, message type, payload, the rules envelopekit reports).
CASES: dict[str, tuple[str, str, dict[str, Any], set[str]]] = {
    "usage-state-number": (
        "story-context",
        "story.context",
        _usage_state(5),
        {"story-context.type", "story-context.const"},
    ),
    "usage-state-null": (
        "story-context",
        "story.context",
        _usage_state(None),
        {"story-context.type", "story-context.const"},
    ),
    "usage-state-other-string": (
        "story-context",
        "story.context",
        _usage_state("COMMITTED"),
        {"story-context.const"},
    ),
    "delivery-message-type-number": (
        "delivery-media-available",
        "delivery.media_available",
        _set(DELIVERY, "message_type", 5),
        {"delivery-media-available.type", "delivery-media-available.const"},
    ),
    "delivery-message-type-null": (
        "delivery-media-available",
        "delivery.media_available",
        _set(DELIVERY, "message_type", None),
        {"delivery-media-available.type", "delivery-media-available.const"},
    ),
    "warning-message-type-array": (
        "skill-warning",
        "skill.warning.raised",
        _set(WARNING, "message_type", []),
        {"skill-warning.type", "skill-warning.const"},
    ),
    "warning-message-type-boolean": (
        "skill-warning",
        "skill.warning.raised",
        _set(WARNING, "message_type", True),
        {"skill-warning.type", "skill-warning.const"},
    ),
    "audit-message-type-number": (
        "system-audit",
        "system.audit",
        _set(AUDIT, "message_type", 5),
        {"system-audit.const"},
    ),
    "audit-message-type-null": (
        "system-audit",
        "system.audit",
        _set(AUDIT, "message_type", None),
        {"system-audit.const"},
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_const_reports_type_where_the_schema_writes_it(case: str) -> None:
    schema, message_type, payload, expected = CASES[case]
    verdict = ek.check(json.dumps(wrap(payload, message_type)), spec="som")
    assert set(verdict.rules()) == expected
    oracle = Draft202012Validator(SCHEMAS[schema], format_checker=FormatChecker())
    official = {f"{schema}.{error.validator}" for error in oracle.iter_errors(payload)}
    assert official == expected
