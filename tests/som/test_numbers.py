"""NaN and Infinity in SOM messages: refused everywhere a number or free-form JSON may stand.

pydantic's JSON parser accepts the ``NaN`` / ``Infinity`` tokens and reads ``1e400`` as
infinity, and orjson would write them back as ``null``; envelopekit refuses them
(``number.non_finite``) with a pointer to the exact member, in ``check``, in both of
``SomEnvelope``'s validators, and when producing with ``SomEnvelope.create``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import ProducerError, Settings, _json
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._json import needs_scan
from envelopekit._violations import violations
from envelopekit.rules import VIOLATIONS_TRUNCATED
from envelopekit.som import ModificationHeader, SomEnvelope, StoryContext
from tests._calls import python_calls
from tests.som._corpus import DATA, wrap

BAD = "__NON_FINITE__"
TOKENS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]
SETTINGS = Settings(som_system_id="ncs-nyc-01", som_system_type="ncs")

STORY: dict[str, Any] = json.loads((DATA / "examples/story-context/tags.json").read_bytes())
TELLING: dict[str, Any] = json.loads(
    (DATA / "examples/telling/started-with-transforms.json").read_bytes()
)
WARNING: dict[str, Any] = json.loads((DATA / "examples/skill-warning/raised.json").read_bytes())
DELIVERY: dict[str, Any] = json.loads(
    (DATA / "examples/delivery/media-available.json").read_bytes()
)
LINK: dict[str, Any] = json.loads((DATA / "examples/link/committed.json").read_bytes())

ASSERTION: dict[str, Any] = {
    "assertion_id": "as-1",
    "assertion_type": "FACT_CHECK",
    "target": {"kind": "STORY", "id": "story-1"},
    "claim": {"metric": "wind_speed_kph", "value": BAD},
    "asserted_at": "2026-09-11T16:41:00Z",
    "provenance": {"author": "HUMAN"},
}
ASSET: dict[str, Any] = {"asset_id": "a-1", "asset_type": "VIDEO", "status": "READY"}


def _story(**members: Any) -> dict[str, Any]:
    return wrap({**copy.deepcopy(STORY), **members}, "story.context")


def _envelope(**members: Any) -> dict[str, Any]:
    return {**_story(), **members}


def _payload(payload: dict[str, Any], message_type: str) -> dict[str, Any]:
    return wrap(copy.deepcopy(payload), message_type)


def _telling_params() -> dict[str, Any]:
    document = _payload(TELLING, "telling.started")
    document["payload"]["transforms"][0]["params"] = {"x": {"y": [1, BAD]}}
    return document


# (case, the document with BAD where the non-finite number goes, the pointer to it)
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("envelope extensions", _envelope(extensions={"com.x.y": BAD}), "/extensions/com.x.y"),
    (
        "envelope extensions nested",
        _envelope(extensions={"com.x.y": {"a": [0, {"b": BAD}]}}),
        "/extensions/com.x.y/a/1/b",
    ),
    ("@context object", _envelope(**{"@context": {"x": BAD}}), "/@context/x"),
    ("_actors", _envelope(_actors={"editor": {"weight": BAD}}), "/_actors/editor/weight"),
    (
        "modification_header member",
        _envelope(modification_header={"story_version": 3, "x": BAD}),
        "/modification_header/x",
    ),
    (
        "modification_header history",
        _envelope(modification_header={"history": [{"v": BAD}]}),
        "/modification_header/history/0/v",
    ),
    ("unknown family", _payload({"x": BAD}, "asset.ingested"), "/payload/x"),
    (
        "unknown family nested",
        _payload({"x": [{"y": BAD}]}, "asset.ingested"),
        "/payload/x/0/y",
    ),
    (
        "story extensions",
        _story(extensions={"com.acme.story": {"score": BAD}}),
        "/payload/extensions/com.acme.story/score",
    ),
    ("story_owner object", _story(story_owner={"id": "u1", "n": BAD}), "/payload/story_owner/n"),
    ("assertion claim", _story(assertions=[ASSERTION]), "/payload/assertions/0/claim/value"),
    (
        "delivery_spec member",
        _story(assets=[{**ASSET, "delivery_spec": {"bitrate": BAD}}]),
        "/payload/assets/0/delivery_spec/bitrate",
    ),
    (
        "delivery_spec frame_rate",
        _story(assets=[{**ASSET, "delivery_spec": {"frame_rate": BAD}}]),
        "/payload/assets/0/delivery_spec/frame_rate",
    ),
    (
        "relation member",
        _story(relations=[{"relation_type": "follows", "weight": BAD}]),
        "/payload/relations/0/weight",
    ),
    (
        "relation _history",
        _story(relations=[{"relation_type": "follows", "_history": [BAD]}]),
        "/payload/relations/0/_history/0",
    ),
    (
        "collaboration member",
        _story(collaboration={"lock_status": "open", "x": {"y": BAD}}),
        "/payload/collaboration/x/y",
    ),
    (
        "collaboration active_editors",
        _story(collaboration={"active_editors": ["u1", {"load": BAD}]}),
        "/payload/collaboration/active_editors/1/load",
    ),
    (
        "story_meaning confidence",
        _story(story_meaning={"confidence": BAD}),
        "/payload/story_meaning/confidence",
    ),
    ("sequence_number", _story(sequence_number=BAD), "/payload/sequence_number"),
    ("transform params", _telling_params(), "/payload/transforms/0/params/x/y/1"),
    (
        "telling extensions",
        _payload({**TELLING, "extensions": {"com.x.y": BAD}}, "telling.started"),
        "/payload/extensions/com.x.y",
    ),
    (
        "link extensions",
        _payload({**LINK, "extensions": {"com.x.y": BAD}}, "link.committed"),
        "/payload/extensions/com.x.y",
    ),
    (
        "delivery extensions",
        _payload({**DELIVERY, "extensions": {"com.x.y": BAD}}, "delivery.media_available"),
        "/payload/extensions/com.x.y",
    ),
    (
        "skill warning extensions",
        _payload({**WARNING, "extensions": {"com.x.y": BAD}}, "skill.warning.raised"),
        "/payload/extensions/com.x.y",
    ),
]
IDS = [case for case, _, _ in CASES]


def _raw(document: dict[str, Any], token: str) -> str:
    text = json.dumps(document, ensure_ascii=False)
    assert text.count(f'"{BAD}"') == 1
    return text.replace(f'"{BAD}"', token)


def _finite(document: dict[str, Any]) -> dict[str, Any]:
    finite: dict[str, Any] = json.loads(json.dumps(document).replace(f'"{BAD}"', "1"))
    return finite


@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_the_document_is_valid_with_a_finite_number(
    case: str, document: dict[str, Any], where: str
) -> None:
    """The cases differ from a valid message only by the non-finite number."""
    del case, where
    finite = _finite(document)
    verdict = ek.check(json.dumps(finite), spec="som")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert orjson.loads(verdict.envelope.to_json()) == finite


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_check_refuses_non_finite_with_its_pointer(
    case: str, document: dict[str, Any], where: str, token: str
) -> None:
    del case
    verdict = ek.check(_raw(document, token), spec="som")
    assert not verdict.ok
    assert verdict.envelope is None
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (ek.rules.NUMBER_NON_FINITE, where)
    ]


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_both_validators_refuse_non_finite(
    case: str, document: dict[str, Any], where: str, token: str
) -> None:
    del case
    raw = _raw(document, token)
    with pytest.raises(ValidationError) as fast:
        SomEnvelope.model_validate_json(raw)
    with pytest.raises(ValidationError) as own:
        SomEnvelope.__pydantic_validator__.validate_json(raw)
    # NaN is not equal to itself: compare without the inputs.
    assert fast.value.errors(include_url=False, include_input=False) == own.value.errors(
        include_url=False, include_input=False
    )
    found = violations(own.value, model=SomEnvelope)
    assert [(v.rule, v.pointer) for v in found] == [(ek.rules.NUMBER_NON_FINITE, where)]


@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_python_validation_refuses_non_finite(
    case: str, document: dict[str, Any], where: str
) -> None:
    del case
    # Python's json.loads reads the tokens as floats: what a producer may well hold.
    for token in ("NaN", "Infinity", "1e400"):
        with pytest.raises(ValidationError) as caught:
            SomEnvelope.model_validate(json.loads(_raw(document, token)))
        found = violations(caught.value, model=SomEnvelope)
        assert [(v.rule, v.pointer) for v in found] == [(ek.rules.NUMBER_NON_FINITE, where)]


# The members create() takes: the payload and the extensions.
CREATE_CASES = [
    case for case in CASES if not {"@context", "_actors", "modification_header"} & set(case[1])
]


@pytest.mark.parametrize(
    ("case", "document", "where"), CREATE_CASES, ids=[case for case, _, _ in CREATE_CASES]
)
def test_create_refuses_non_finite(case: str, document: dict[str, Any], where: str) -> None:
    del case
    for token in ("NaN", "Infinity", "1e400"):
        data = json.loads(_raw(document, token))
        with pytest.raises(ProducerError, match=rf"number\.non_finite at {re.escape(where)}"):
            SomEnvelope.create(
                data["message_type"],
                data["payload"],
                extensions=data.get("extensions"),
                settings=SETTINGS,
                allow_unknown=True,  # the cases include an unknown family
            )


def test_create_refuses_non_finite_in_a_model_instance() -> None:
    story = StoryContext.model_validate(_finite(_story(assertions=[ASSERTION]))["payload"])
    story.assertions[0].claim["value"] = float("nan")  # type: ignore[index]
    with pytest.raises(ProducerError, match=r"number\.non_finite at /payload/assertions/0/claim"):
        SomEnvelope.create("story.context", story, settings=SETTINGS)


@pytest.mark.parametrize("value", [0.0, -0.0, 1e308, -1e-308, 2.5e-7, 2**53 - 1])
def test_finite_numbers_are_kept(value: float) -> None:
    document = _envelope(extensions={"com.x.y": [value]})
    verdict = ek.check(json.dumps(document), spec="som")
    assert verdict.ok, verdict.violations
    assert verdict.envelope is not None
    assert orjson.loads(verdict.envelope.to_json()) == document


@pytest.mark.parametrize("value", [2**53, 2**63 - 1, 2**63, -(2**70)])
def test_big_integers_are_not_non_finite(value: int) -> None:
    """Only NaN and Infinity are number.non_finite; integers are never infinite."""
    verdict = ek.check(json.dumps(_envelope(extensions={"com.x.y": {"n": value}})), spec="som")
    assert ek.rules.NUMBER_NON_FINITE not in {v.rule for v in verdict.violations}


WHOLE_FLOATS = [
    ("7.0", 7),
    ("1e2", 100),
    ("9007199254740992.0", 2**53),
    ("1e26", 10**26),  # int(1e26) is 100000000000000004764729344
    ("1.5e300", 15 * 10**299),
    ("123456789012345678901234567890.0", 123456789012345680000000000000),
    ("-1e26", -(10**26)),
]


def _whole_float_message(where: str, text: str) -> bytes:
    document = _envelope()
    if where == "story_version":
        document["modification_header"] = {"story_version": BAD}
    else:
        document["payload"]["sequence_number"] = BAD
    return json.dumps(document).replace(f'"{BAD}"', text).encode()


@pytest.mark.parametrize(
    ("where", "text", "expected"),
    [
        pytest.param(where, text, expected, id=f"{where}={text}")
        for where in ("story_version", "sequence_number")
        for text, expected in WHOLE_FLOATS
        if expected >= 0 or where == "story_version"  # sequence_number has minimum 0
    ],
)
def test_a_whole_float_in_an_integer_field_is_the_integer_it_writes(
    where: str, text: str, expected: int
) -> None:
    """An integer written as a float is the integer of its shortest decimal, not of the double.

    Every door reads it so, and re-emits it as that integer, which reads back as the same model.
    """
    raw = _whole_float_message(where, text)
    verdict = ek.check(raw, spec="som")
    assert verdict.ok, verdict.violations
    read = [
        verdict.envelope,
        SomEnvelope.model_validate_json(raw),
        SomEnvelope.model_validate(json.loads(raw)),
    ]
    for envelope in read:
        assert envelope is not None
        if where == "story_version":
            assert isinstance(envelope.modification_header, ModificationHeader)
            held = envelope.modification_header.story_version
        else:
            assert isinstance(envelope.payload, StoryContext)
            held = envelope.payload.sequence_number
        assert (type(held), held) == (int, expected)
        wire = envelope.to_json()
        assert (
            f'"{where}":{expected},'.encode() in wire or f'"{where}":{expected}}}'.encode() in wire
        )
        assert SomEnvelope.model_validate_json(wire) == envelope


def test_a_non_finite_string_field_is_a_type_error() -> None:
    """Where the schema wants a string, NaN is refused as the wrong type it is."""
    raw = _raw(_story(headline=BAD), "NaN")
    verdict = ek.check(raw, spec="som")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        ("story-context.type", "/payload/headline")
    ]


def test_an_escaped_lone_surrogate_is_invalid_json() -> None:
    raw = json.dumps(_story(headline=BAD)).replace(f'"{BAD}"', '"\\ud800"')
    assert json.loads(raw)["payload"]["headline"] == "\ud800"  # Python accepts it
    verdict = ek.check(raw, spec="som")
    assert [v.rule for v in verdict.violations] == [ek.rules.JSON_INVALID]


# About 100 KB of plain numbers in 6,000 arrays (a walk is a call an array): a message
# carrying them is large (over FULL_REPORT_BYTES).
_GROUPS = 6_000
_PAD = [[-1, 12, 0.5, -0.0]] * _GROUPS


def _large(document: dict[str, Any]) -> dict[str, Any]:
    padded = copy.deepcopy(document)
    padded["extensions"] = {**padded.get("extensions", {}), "com.pad.numbers": _PAD}
    return padded


@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_a_large_messages_plain_numbers_are_not_walked(
    case: str, document: dict[str, Any], where: str
) -> None:
    """A large message's free-form JSON is walked for NaN (a Python step a value, about 5x
    ``orjson.loads`` on 240 KB of small integers) only within a budget; past it C passes prove
    the text's numbers plain, by ``check`` and the JSON door."""
    del case, where
    raw = _raw(_large(document), "1")
    assert len(raw) > FULL_REPORT_BYTES
    found: list[Any] = []
    checked = python_calls(lambda: found.append(ek.check(raw, "som")))
    read = python_calls(lambda: found.append(SomEnvelope.model_validate_json(raw)))
    for entered in (checked, read):
        assert entered.count(needs_scan.__code__) <= _GROUPS // 10
    verdict, envelope = found
    assert verdict.ok, verdict.violations
    assert verdict.envelope == envelope == SomEnvelope.__pydantic_validator__.validate_json(raw)


@pytest.mark.parametrize("token", ["NaN", "-Infinity", "1e400"])
@pytest.mark.parametrize(("case", "document", "where"), CASES, ids=IDS)
def test_a_large_messages_non_finite_number_is_still_refused(
    case: str, document: dict[str, Any], where: str, token: str
) -> None:
    """The proof fails on one non-finite number: the walk finds it, at its pointer (with the
    notice that a large message's arrays stop at their first failing item, when in one)."""
    del case
    raw = _raw(_large(document), token)
    assert len(raw) > FULL_REPORT_BYTES
    verdict = ek.check(raw, spec="som")
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(raw)
    door = violations(caught.value, model=SomEnvelope, partial=True)
    for found in (verdict.violations, door):
        assert [(v.rule, v.pointer) for v in found if v.rule != VIOLATIONS_TRUNCATED] == [
            (ek.rules.NUMBER_NON_FINITE, where)
        ]


def test_integers_of_free_form_json_are_read_past_in_c() -> None:
    """SOM notes no integer of free-form JSON (only NaN and Infinity): 12,000 integers beyond
    2^53 in an extension value are read past by C passes, no Python step an item (each went
    through the scan's loop: 15.5x ``orjson.loads``)."""
    document = _story()
    document["extensions"] = {"com.pad.numbers": [2**53 + 1] * 12_000}
    raw = json.dumps(document).encode()
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    found: list[Any] = []
    entered = python_calls(lambda: found.append(ek.check(raw, "som")))
    assert found[0].ok, found[0].violations
    assert (
        entered.count(_json._notable_items.__code__) <= 4
    )  # the walk and the scan, not an item each
    assert entered.count(_json.scan_numbers.__code__) <= 1


@pytest.mark.parametrize(
    "last",
    [2**53 + 1, 0.1234567890123456, 10**60],
    ids=["beyond-2^53", "sixteen-digit-fraction", "sixty-digits"],
)
def test_numbers_harmless_to_som_do_not_fail_its_proof(last: float) -> None:
    """SOM notes only NaN and Infinity, so its reading proves the text's numbers finite
    (``_json.finite_numbers``), not within 2^53: one long integer or fraction after 6,000
    arrays failed the proof, and the whole value was scanned (a Python step an array: 13x–15x
    ``orjson.loads`` at 240 KB)."""
    document = _story()
    document["extensions"] = {"com.pad.numbers": [*_PAD, last]}
    raw = json.dumps(document).encode()
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    found: list[Any] = []
    checked = python_calls(lambda: found.append(ek.check(raw, "som")))
    read = python_calls(lambda: found.append(SomEnvelope.model_validate_json(raw)))
    for entered in (checked, read):
        assert entered.count(_json.scan_numbers.__code__) == 0
        assert entered.count(needs_scan.__code__) <= _GROUPS // 10
    verdict, envelope = found
    assert verdict.ok, verdict.violations
    assert verdict.envelope == envelope
