"""A message_type with no SOM 1.0 schema: envelope checked, payload passed through untouched."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit.som import KNOWN_MESSAGE_TYPES, SomEnvelope, StoryContext, UnvalidatedPayload
from tests.som._corpus import DATA, wrap

PAYLOAD: dict[str, Any] = {
    "asset_id": "ugc-clip-17",
    "sizes": [1, 2.5, None, True],
    "nested": {"message_type": "anything", "x": {}},
    "text": "é — ü/",
}


def _raw(message_type: str, payload: Any = PAYLOAD) -> bytes:
    return json.dumps(wrap(payload, message_type), ensure_ascii=False).encode()


@pytest.mark.parametrize(
    "message_type", ["asset.ingested", "skill.suggestion.created", "system.health", "a"]
)
def test_unknown_family_is_accepted_with_a_warning(message_type: str) -> None:
    assert message_type not in KNOWN_MESSAGE_TYPES
    verdict = ek.check(_raw(message_type), spec="som")
    assert verdict.ok
    assert [(w.rule, w.pointer, w.source) for w in verdict.warnings] == [
        ("payload.unvalidated", "/payload", "policy")
    ]
    env = verdict.envelope
    assert env is not None
    assert isinstance(env.payload, UnvalidatedPayload)
    assert env.payload.root == PAYLOAD
    assert env.payload["asset_id"] == "ugc-clip-17"
    assert env.family is None and not env.is_validated


def test_unknown_payload_is_reencoded_untouched() -> None:
    raw = _raw("asset.ingested")
    env = SomEnvelope.model_validate_json(raw)
    assert env.to_json() == raw.replace(b", ", b",").replace(b": ", b":")
    assert orjson.loads(env.to_json()) == orjson.loads(raw)


def test_unknown_family_envelope_is_still_checked() -> None:
    document = wrap(PAYLOAD, "asset.ingested")
    document["topic"] = "assets"
    verdict = ek.check(json.dumps(document), spec="som")
    assert [v.rule for v in verdict.violations] == ["envelope.pattern"]


def test_unknown_family_payload_must_be_an_object() -> None:
    verdict = ek.check(_raw("asset.ingested", [1, 2]), spec="som")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [("envelope.type", "/payload")]


def test_the_payload_shape_never_selects_the_family() -> None:
    story = json.loads((DATA / "examples/story-context/tags.json").read_bytes())
    env = SomEnvelope.model_validate_json(_raw("story.context.v2", story))
    assert isinstance(env.payload, UnvalidatedPayload)
    known = SomEnvelope.model_validate_json(_raw("story.context", story))
    assert isinstance(known.payload, StoryContext)


def test_a_known_family_with_the_wrong_payload_is_refused_not_passed_through() -> None:
    verdict = ek.check(_raw("story.context"), spec="som")
    assert not verdict.ok
    assert {v.rule for v in verdict.violations} == {
        "story-context.required",
        "story-context.additionalProperties",
    }


def test_the_refusing_policy_is_available() -> None:
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(
            _raw("asset.ingested"), context={"unknown_message_type": "refuse"}
        )
    found = ek.violations(caught.value)
    assert [(v.rule, v.pointer, v.source) for v in found] == [
        ("message_type.unknown", "/message_type", "policy")
    ]


def test_payload_message_type_mismatch_is_refused() -> None:
    link = json.loads((DATA / "examples/link/committed.json").read_bytes())
    verdict = ek.check(_raw("link.gate_changed", link), spec="som")
    assert [(v.rule, v.pointer, v.source) for v in verdict.violations] == [
        ("payload.message_type_mismatch", "/payload/message_type", "policy")
    ]
    telling = json.loads((DATA / "examples/telling/started.json").read_bytes())
    telling["exposure_end"] = telling["exposure_start"]
    telling["message_type"] = "telling.exposed"
    verdict = ek.check(_raw("telling.ended", telling), spec="som")
    assert [v.rule for v in verdict.violations] == ["payload.message_type_mismatch"]
