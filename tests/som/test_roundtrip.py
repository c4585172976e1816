"""Re-encoding a parsed SOM message gives back the same JSON, in the schema's key order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from envelopekit._json import dumps
from envelopekit.som import SomEnvelope, StoryContext
from tests.som._corpus import DATA, SCHEMAS, label, positive_envelope, positive_files

POSITIVE = positive_files()
ENVELOPE_ORDER = list(json.loads((SCHEMAS / "envelope.schema.json").read_bytes())["properties"])


@pytest.mark.parametrize("path", POSITIVE, ids=[label(p) for p in POSITIVE])
def test_reencoding_gives_the_same_json(path: Path) -> None:
    document = positive_envelope(path)
    raw = json.dumps(document, ensure_ascii=False).encode()
    env = SomEnvelope.model_validate_json(raw)
    out = env.to_json()
    assert orjson.loads(out) == document
    # Stable: parsing the output and encoding again is byte-identical.
    assert SomEnvelope.model_validate_json(out).to_json() == out
    # Compact UTF-8 with nothing escaped, as the Python reference encoder writes.
    assert out == dumps(orjson.loads(out))


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _schema_order(name: str) -> list[str]:
    return list(json.loads((SCHEMAS / f"{name}.schema.json").read_bytes())["properties"])


def test_the_corpus_envelope_is_reencoded_byte_for_byte_modulo_key_order() -> None:
    raw = (DATA / "examples/story-context/hurricane-beat6-envelope.json").read_bytes()
    env = SomEnvelope.model_validate_json(raw)
    out = env.to_json()
    assert dumps(_sorted(orjson.loads(out))) == dumps(_sorted(orjson.loads(raw)))
    # The corpus payload lists `assertions` before `compliance`; the schema (and the output)
    # lists members in the schema's order.
    payload = orjson.loads(out)["payload"]
    assert list(payload) == [k for k in _schema_order("story-context") if k in payload]
    assert env.timestamp == "2026-09-11T16:41:00.000000Z"
    assert env.message_id == "0199a1c4-7a2e-7b31-8c55-4d2f9e6a1b07"


def test_keys_follow_the_schema_order_whatever_the_input_order() -> None:
    document = positive_envelope(DATA / "examples/story-context/hurricane-beat6-envelope.json")
    shuffled = dict(reversed(list(document.items())))
    shuffled["payload"] = dict(reversed(list(document["payload"].items())))
    first = SomEnvelope.model_validate_json(json.dumps(document)).to_json()
    again = SomEnvelope.model_validate_json(json.dumps(shuffled)).to_json()
    assert first == again
    out = orjson.loads(again)
    assert out == document
    assert list(out) == [k for k in ENVELOPE_ORDER if k in document]
    assert list(out["payload"]) == [
        k for k in _schema_order("story-context") if k in document["payload"]
    ]


def test_values_are_kept_exactly_as_sent() -> None:
    document = positive_envelope(DATA / "examples/hurricane-run/hurricane-01.json")
    document["message_id"] = "0199A1C4-7A2E-7B31-8C55-4D2F9E6A1B07"
    document["timestamp"] = "2026-09-11t16:41:00.123456789+02:00"
    document["payload"]["updated_at"] = "2026-09-11T13:00:00.5z"
    document["payload"]["story_meaning"]["confidence"] = 1
    document["_actors"] = {"p7": {"name": "Producer 7", "n": None}}
    document["@context"] = {"@vocab": "https://storyobjectmodel.com/"}
    document["modification_header"] = {"story_version": 1, "vendor_note": [1, 2.5, None]}
    document["extensions"] = {"com.acme.x": {"deep": [True, None, "é/ü"]}}
    env = SomEnvelope.model_validate_json(json.dumps(document, ensure_ascii=False))
    assert env.message_id == document["message_id"]
    assert env.timestamp == document["timestamp"]
    story = env.payload_as(StoryContext)
    assert story.updated_at == "2026-09-11T13:00:00.5z"
    out = env.to_json()
    assert orjson.loads(out) == document
    assert "é/ü".encode() in out
    assert type(orjson.loads(out)["payload"]["story_meaning"]["confidence"]) is int


def test_absent_members_stay_absent() -> None:
    document = positive_envelope(DATA / "examples/telling/started.json")
    env = SomEnvelope.model_validate_json(json.dumps(document))
    out = orjson.loads(env.to_json())
    assert "causation_id" not in out
    assert "exposure_end" not in out["payload"]
    assert b"null" not in env.to_json()
