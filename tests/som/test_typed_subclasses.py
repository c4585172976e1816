"""Users' subclasses and parametrisations of SomEnvelope: each reads as the envelope it names."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import Settings
from envelopekit.som import (
    PAYLOAD_MODELS,
    FamilyPayload,
    SkillWarning,
    SomEnvelope,
    StoryContext,
    TellingEvent,
    UnvalidatedPayload,
)
from tests.som._corpus import DATA

SETTINGS = Settings(som_system_id="ncs-nyc-01", som_system_type="ncs")
STORY: dict[str, Any] = json.loads((DATA / "examples/story-context/tags.json").read_bytes())
TELLING: dict[str, Any] = json.loads((DATA / "examples/telling/started.json").read_bytes())
WARNING: dict[str, Any] = json.loads((DATA / "examples/skill-warning/raised.json").read_bytes())

SENT: dict[str, bytes] = {
    "story": SomEnvelope.create("story.context", STORY, settings=SETTINGS).to_json(),
    "telling": SomEnvelope.create("telling.started", TELLING, settings=SETTINGS).to_json(),
    "unknown": SomEnvelope.create(
        "asset.ingested", {"a": 1}, settings=SETTINGS, allow_unknown=True
    ).to_json(),
}

X = TypeVar("X")
Bounded = TypeVar("Bounded", bound="StoryContext | TellingEvent")


# The type checkers want the payload's bound (a user who wrote none still gets every family).
class _Generic(SomEnvelope[X], Generic[X]):  # type: ignore[type-var]
    """A user's subclass generic in a type variable of its own, with no bound."""


class _Bounded(SomEnvelope[Bounded], Generic[Bounded]):
    """A user's subclass generic in a bounded type variable of its own."""


class _Stories(SomEnvelope[StoryContext]):
    """A user's subclass of a typed envelope, no longer generic."""


DOORS: dict[str, Callable[[type[SomEnvelope[Any]], bytes], SomEnvelope[Any]]] = {
    "json": lambda model, raw: model.model_validate_json(raw),
    "dict": lambda model, raw: model.model_validate(json.loads(raw)),
    "init": lambda model, raw: model(**json.loads(raw)),
}


def _rules(exc: ValidationError, model: Any) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in ek.violations(exc, model=model)]


@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize("name", list(SENT))
def test_a_subclass_generic_in_its_own_type_variable_reads_every_family(
    name: str, door: str
) -> None:
    # Its payload was read as `Any`: a dict, and then AttributeError ('dict' object has no
    # attribute '__dict__') from the agreement check, for every message.
    raw = SENT[name]
    read = DOORS[door](_Generic, raw)
    assert type(read) is _Generic
    assert type(read.payload) is type(SomEnvelope.model_validate_json(raw).payload)
    assert read.to_json() == raw


def test_a_generic_subclass_of_any_payload_is_itself() -> None:
    # `_Generic[Any]` refused every message ("this envelope takes Any").
    assert _Generic[Any] is _Generic
    assert type(_Generic[Any].model_validate_json(SENT["story"]).payload) is StoryContext


def test_a_generic_subclass_refuses_a_bad_payload_by_its_message_type() -> None:
    bad = {**json.loads(SENT["story"]), "payload": {**STORY, "headline": 5}}
    with pytest.raises(ValidationError) as refused:
        _Generic.model_validate(bad)
    assert _rules(refused.value, _Generic) == [("story-context.type", "/payload/headline")]


@pytest.mark.parametrize("door", list(DOORS))
def test_a_generic_subclass_parametrised_reads_as_the_typed_envelope(door: str) -> None:
    typed = _Generic[StoryContext]
    assert type(DOORS[door](typed, SENT["story"]).payload) is StoryContext
    for other in ("telling", "unknown"):
        with pytest.raises(ValidationError) as refused:
            DOORS[door](typed, SENT[other])
        assert _rules(refused.value, typed) == [("payload.family_unexpected", "/payload")]


def test_a_bounded_type_variable_reads_as_its_bound() -> None:
    assert type(_Bounded.model_validate_json(SENT["telling"]).payload) is TellingEvent
    with pytest.raises(ValidationError) as refused:
        _Bounded.model_validate_json(SENT["unknown"])
    # It was eleven `envelope.required` at /payload/StoryContext/... (the union's members).
    assert _rules(refused.value, _Bounded) == [("payload.family_unexpected", "/payload")]


def test_a_subclass_of_a_typed_envelope_takes_that_family_only() -> None:
    assert type(_Stories.model_validate_json(SENT["story"]).payload) is StoryContext
    with pytest.raises(ValidationError) as refused:
        _Stories.model_validate_json(SENT["telling"])
    # It was eleven `story-context.required`: every message type was read as a story.
    assert _rules(refused.value, _Stories) == [("payload.family_unexpected", "/payload")]


def test_following_up_a_typed_subclass_produces_any_family() -> None:
    # It produced through the subclass itself, which refused every other family.
    story = _Stories.create("story.context", STORY, settings=SETTINGS)
    assert type(story) is _Stories
    reply = story.follow_up("skill.warning.raised", WARNING, settings=SETTINGS)
    assert type(reply) is SomEnvelope
    assert isinstance(reply.payload, SkillWarning)
    typed = _Generic[StoryContext].create("story.context", STORY, settings=SETTINGS)
    assert type(typed.follow_up("skill.warning.raised", WARNING, settings=SETTINGS)) is _Generic


@pytest.mark.parametrize(
    "payload",
    [FamilyPayload | UnvalidatedPayload, StoryContext | TellingEvent, FamilyPayload],
    ids=["every-family", "two-families", "the-known-families"],
)
def test_a_union_of_families_is_read_by_message_type(payload: Any) -> None:
    # A union of families was pydantic's smart union: a story with a bad headline was taken as an
    # UnvalidatedPayload by the first, and the others reported every member's errors.
    typed: type[SomEnvelope[Any]] = SomEnvelope[payload]
    bad_story = {**json.loads(SENT["story"]), "payload": {**STORY, "headline": 5}}
    bad_telling = {**json.loads(SENT["telling"]), "payload": {**TELLING, "telling_id": "x"}}
    for bad, rule in (
        (bad_story, ("story-context.type", "/payload/headline")),
        (bad_telling, ("telling-event.format.uuid", "/payload/telling_id")),
    ):
        with pytest.raises(ValidationError) as refused:
            typed.model_validate(bad)
        assert _rules(refused.value, typed) == [rule]
    for name in ("story", "telling"):
        read = typed.model_validate_json(SENT[name])
        assert type(read.payload) is type(SomEnvelope.model_validate_json(SENT[name]).payload)


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        (_Generic, [*PAYLOAD_MODELS, "asset.ingested"]),
        (SomEnvelope[StoryContext | TellingEvent], ["story.context", "telling.started"]),
    ],
    ids=["generic-subclass", "two-families"],
)
def test_the_json_schema_chooses_the_payload_by_message_type(model: Any, takes: list[str]) -> None:
    # The generic subclass's payload was any object, a bad story's too.
    validator = Draft202012Validator(model.model_json_schema())
    for raw in SENT.values():
        taken = json.loads(raw)["message_type"] in takes
        assert validator.is_valid(json.loads(raw)) is taken
    bad_story = {**json.loads(SENT["story"]), "payload": {**STORY, "headline": 5}}
    assert not validator.is_valid(bad_story)


class _MyStory(StoryContext):
    """A user's subclass of a family model."""


@pytest.mark.parametrize(
    "model",
    [SomEnvelope, SomEnvelope[_MyStory | TellingEvent], _Generic[_MyStory | TellingEvent]],
    ids=["SomEnvelope", "union", "generic-subclass"],
)
def test_a_payload_of_a_subclass_of_a_family_model_is_written_as_its_family(model: Any) -> None:
    # Its tag was "unvalidated": pydantic warned (an error under -W error) that it expected an
    # UnvalidatedPayload, then wrote it member by member.
    given = {**json.loads(SENT["story"]), "payload": _MyStory.model_validate(STORY)}
    read = model.model_validate(given)
    assert type(read.payload) is _MyStory
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read.to_json() == SENT["story"]
        assert read.model_dump_json().encode() == SENT["story"]


@pytest.mark.parametrize(
    "model",
    [SomEnvelope[StoryContext], _Generic[StoryContext], _Generic[StoryContext | TellingEvent]],
    ids=["typed", "generic-subclass", "union"],
)
def test_violations_find_a_parametrised_envelope_by_its_error_s_title(model: Any) -> None:
    # `ek.violations(exc)` read the title "SomEnvelope[StoryContext]" as SomEnvelope's (its
    # generic origin's): `envelope.type` for a story's bad headline, `envelope.invalid` for a
    # generic subclass's.
    bad = {**json.loads(SENT["story"]), "payload": {**STORY, "headline": 5}}
    with pytest.raises(ValidationError) as refused:
        model.model_validate(bad)
    assert [(v.rule, v.pointer) for v in ek.violations(refused.value)] == [
        ("story-context.type", "/payload/headline")
    ]
