"""Producing SOM messages: SomEnvelope.create and follow_up."""

from __future__ import annotations

import inspect
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, get_args
from uuid import UUID

import orjson
import pytest
import typing_extensions
from pydantic import ValidationError

import envelopekit as ek
from envelopekit import ProducerError, Settings
from envelopekit.som import (
    KNOWN_MESSAGE_TYPES,
    PAYLOAD_MODELS,
    DeliveryMediaAvailable,
    FamilyPayload,
    KnownMessageType,
    LinkEvent,
    OriginatingSystem,
    SkillWarning,
    SomEnvelope,
    StoryContext,
    SystemAudit,
    TellingEvent,
    UnvalidatedPayload,
    message_type_of,
)
from tests.som._corpus import DATA

SETTINGS = Settings(som_system_id="ncs-nyc-01", som_system_type="ncs", som_system_name="NCS")
STORY: dict[str, Any] = json.loads((DATA / "examples/story-context/tags.json").read_bytes())
TELLING: dict[str, Any] = json.loads((DATA / "examples/telling/started.json").read_bytes())
WARNING: dict[str, Any] = json.loads((DATA / "examples/skill-warning/raised.json").read_bytes())
RFC3339_UTC = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")


def test_create_fills_ids_time_topic_and_system() -> None:
    env = SomEnvelope.create("story.context", STORY, settings=SETTINGS)
    assert env.som_version == "1.0.0"
    assert UUID(env.message_id).version == 7
    assert UUID(env.correlation_id).version == 7
    assert env.message_id != env.correlation_id
    assert RFC3339_UTC.match(env.timestamp)
    assert abs(env.timestamp_dt - datetime.now(timezone.utc)) < timedelta(seconds=5)
    assert env.topic == "som.story.context"
    assert env.originating_system == OriginatingSystem(
        system_id="ncs-nyc-01", system_type="ncs", system_name="NCS"
    )
    assert isinstance(env.payload, StoryContext)
    assert ek.check(env.to_json(), spec="som").ok
    assert orjson.loads(env.to_json())["payload"] == STORY


def test_create_takes_the_system_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_SOM_SYSTEM_ID", "skill-worker-3")
    monkeypatch.setenv("ENVELOPEKIT_SOM_SYSTEM_TYPE", "skill_worker")
    ek.get_settings.cache_clear()
    env = SomEnvelope.create("skill.warning.raised", WARNING)
    assert env.originating_system.system_id == "skill-worker-3"
    assert env.originating_system.system_type == "skill_worker"


def test_create_without_any_system_is_refused() -> None:
    with pytest.raises(ProducerError, match="originating_system"):
        SomEnvelope.create("story.context", STORY)


def test_create_accepts_explicit_values_and_keeps_them() -> None:
    moment = datetime(2026, 9, 11, 18, 41, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    env = SomEnvelope.create(
        "telling.started",
        TellingEvent.model_validate(TELLING),
        originating_system={"system_id": "automation-01", "system_type": "automation"},
        correlation_id=UUID("0199a1c4-0000-7000-8000-000000000911"),
        causation_id="0199A1C4-7A2E-7B31-8C55-4D2F9E6A1B06",
        topic="som.telling.started.studio-b",
        timestamp=moment,
        message_id="0199a1c4-7a2e-7b31-8c55-4d2f9e6a1b07",
        extensions={"com.acme.studio": {"camera": 3}},
    )
    assert env.correlation_id == "0199a1c4-0000-7000-8000-000000000911"
    assert env.causation_id == "0199A1C4-7A2E-7B31-8C55-4D2F9E6A1B06"
    assert env.timestamp == "2026-09-11T16:41:00.123456Z"
    assert env.topic == "som.telling.started.studio-b"
    assert env.extensions == {"com.acme.studio": {"camera": 3}}
    assert ek.check(env.to_json(), spec="som").ok


def test_a_timestamp_string_is_kept_as_given() -> None:
    env = SomEnvelope.create(
        "story.context", STORY, settings=SETTINGS, timestamp="2026-09-11T16:41:00.000000Z"
    )
    assert env.timestamp == "2026-09-11T16:41:00.000000Z"


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(999, 1, 1, tzinfo=timezone.utc), "0999-01-01T00:00:00.000000Z"),
        (datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))), "0001-01-01T00:00:00.000000Z"),
        (
            datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
            "9999-12-31T23:59:59.999999Z",
        ),
    ],
)
def test_a_timestamp_in_any_four_digit_year_is_written_zero_padded(
    moment: datetime, text: str
) -> None:
    env = SomEnvelope.create("story.context", STORY, settings=SETTINGS, timestamp=moment)
    assert env.timestamp == text
    assert env.timestamp_dt == moment


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1))),
    ],
    ids=["before-year-1", "after-year-9999"],
)
def test_a_timestamp_outside_the_utc_years_is_a_producer_error(moment: datetime) -> None:
    with pytest.raises(ProducerError, match="timestamp"):
        SomEnvelope.create("story.context", STORY, settings=SETTINGS, timestamp=moment)


def test_a_family_payload_mapping_gets_its_message_type() -> None:
    body = {k: v for k, v in TELLING.items() if k != "message_type"}
    env = SomEnvelope.create("telling.started", body, settings=SETTINGS)
    assert env.payload_as(TellingEvent).message_type == "telling.started"


@pytest.mark.parametrize(
    ("keywords", "match"),
    [
        ({"topic": "story.context"}, "topic"),
        ({"topic": "SOM.story"}, "topic"),
        ({"extensions": {"vendor_field": 1}}, "extension"),
        ({"extensions": {"com.acme": 1}}, "extension"),
        ({"timestamp": "11 September 2026, 16:41"}, "timestamp"),
        ({"timestamp": "2026-09-11T16:41:00"}, "timestamp"),
        ({"timestamp": datetime(2026, 9, 11, 16, 41)}, "timestamp"),
        ({"message_id": "not-a-uuid"}, "message_id"),
        ({"correlation_id": "{0199a1c4-0000-7000-8000-000000000911}"}, "correlation_id"),
        ({"originating_system": {"system_id": "x", "system_type": "newsroom"}}, "envelope.enum"),
    ],
)
def test_bad_producer_input_is_refused_before_sending(keywords: dict[str, Any], match: str) -> None:
    with pytest.raises(ProducerError, match=match):
        SomEnvelope.create("story.context", STORY, settings=SETTINGS, **keywords)


@pytest.mark.parametrize("message_type", ["Story.Context", "1a", "a-b", "", "story context"])
def test_a_bad_message_type_is_refused(message_type: str) -> None:
    for allow_unknown in (False, True):
        with pytest.raises(ProducerError, match="message_type") as refused:
            SomEnvelope.create(message_type, STORY, settings=SETTINGS, allow_unknown=allow_unknown)
        assert ("envelope.pattern", "/message_type") in {
            (v.rule, v.pointer) for v in refused.value.violations
        }


def test_an_invalid_payload_is_refused_with_its_rules() -> None:
    bad = {**STORY, "story_type": "LIVE"}
    with pytest.raises(ProducerError, match=r"story-context\.enum at /payload/story_type"):
        SomEnvelope.create("story.context", bad, settings=SETTINGS)


def test_a_payload_model_of_another_family_is_refused() -> None:
    telling = TellingEvent.model_validate(TELLING)
    with pytest.raises(ProducerError, match="StoryContext"):
        SomEnvelope.create("story.context", telling, settings=SETTINGS)  # type: ignore[call-overload]
    with pytest.raises(ProducerError, match="mismatch"):
        SomEnvelope.create("telling.ended", telling, settings=SETTINGS)


def test_an_unknown_family_takes_a_mapping_or_unvalidated_payload() -> None:
    env = SomEnvelope.create(
        "asset.ingested", {"asset_id": "a1"}, settings=SETTINGS, allow_unknown=True
    )
    assert isinstance(env.payload, UnvalidatedPayload)
    again = SomEnvelope.create("asset.ingested", env.payload, settings=SETTINGS, allow_unknown=True)
    assert again.payload.root == {"asset_id": "a1"}  # type: ignore[union-attr]
    with pytest.raises(ProducerError):
        SomEnvelope.create(
            "asset.ingested",
            StoryContext.model_validate(STORY),
            settings=SETTINGS,
            allow_unknown=True,
        )


def test_follow_up_continues_the_lifecycle() -> None:
    story = SomEnvelope.create("story.context", STORY, settings=SETTINGS)
    warning = story.follow_up("skill.warning.raised", WARNING, settings=SETTINGS)
    assert warning.correlation_id == story.correlation_id
    assert warning.causation_id == story.message_id
    assert warning.message_id not in (story.message_id, story.correlation_id)
    assert UUID(warning.message_id).version == 7
    assert warning.topic == "som.skill.warning.raised"
    assert isinstance(warning.payload, SkillWarning)
    with pytest.raises(ProducerError, match="topic"):
        story.follow_up("skill.warning.raised", WARNING, settings=SETTINGS, topic="x")


def test_new_message_ids_sort_by_time() -> None:
    ids = [
        SomEnvelope.create("story.context", STORY, settings=SETTINGS).message_id for _ in range(50)
    ]
    assert ids == sorted(ids)
    assert len(set(ids)) == 50


# --- instances changed after construction, and values no JSON text holds ------------------------


def test_som_models_are_immutable() -> None:
    story = StoryContext.model_validate(STORY)
    env = SomEnvelope.create("story.context", story, settings=SETTINGS)
    for model, name, value in [
        (env, "topic", "not-som"),
        (env, "payload", {}),
        (env.originating_system, "system_type", "bogus"),
        (story, "sequence_number", -5),
    ]:
        with pytest.raises(ValidationError, match="frozen"):
            setattr(model, name, value)
    assert ek.check(env.to_json(), spec="som").ok


def test_a_payload_model_copied_with_an_update_is_checked_again() -> None:
    # `model_copy(update=...)` is pydantic's unvalidated derivation; producing validates it.
    story = StoryContext.model_validate(STORY).model_copy(update={"sequence_number": -5})
    with pytest.raises(ProducerError, match=r"story-context\.minimum at /payload/sequence_number"):
        SomEnvelope.create("story.context", story, settings=SETTINGS)
    story = story.model_copy(update={"sequence_number": 3, "headline": 5})
    with pytest.raises(ProducerError, match=r"story-context\.type at /payload/headline"):
        SomEnvelope.create("story.context", story, settings=SETTINGS)


def test_a_nested_model_copied_with_an_update_is_checked_again() -> None:
    story = StoryContext.model_validate(STORY)
    assert isinstance(story.tags, list)
    bogus = story.tags[0].model_copy(update={"scheme": "Bogus"})
    story = story.model_copy(update={"tags": [bogus, *story.tags[1:]]})
    with pytest.raises(ProducerError, match=r"story-context\.pattern at /payload/tags/0/scheme"):
        SomEnvelope.create("story.context", story, settings=SETTINGS)
    # Also a model held in a mapping payload.
    fresh = StoryContext.model_validate(STORY)
    assert isinstance(fresh.tags, list)
    tag = fresh.tags[0].model_copy(update={"value": ""})
    with pytest.raises(ProducerError, match=r"story-context\.minLength at /payload/tags/0/value"):
        SomEnvelope.create("story.context", {**STORY, "tags": [tag]}, settings=SETTINGS)


def test_a_telling_model_copied_with_an_update_is_checked_again() -> None:
    telling = TellingEvent.model_validate(TELLING).model_copy(
        update={"message_type": "telling.ended"}
    )
    with pytest.raises(ProducerError, match="telling-event"):
        SomEnvelope.create("telling.started", telling, settings=SETTINGS)


def test_an_originating_system_copied_with_an_update_is_checked_again() -> None:
    system = OriginatingSystem(system_id="cms-1", system_type="ncs").model_copy(
        update={"system_type": "bogus"}
    )
    with pytest.raises(ProducerError, match=r"envelope\.enum at /originating_system/system_type"):
        SomEnvelope.create("story.context", STORY, originating_system=system)


def test_follow_up_checks_changed_models_too() -> None:
    story = SomEnvelope.create("story.context", STORY, settings=SETTINGS)
    snapshot = StoryContext.model_validate(STORY).model_copy(update={"story_type": "LIVE"})
    with pytest.raises(ProducerError, match=r"story-context\.enum at /payload/story_type"):
        story.follow_up("story.context", snapshot, settings=SETTINGS)


def test_an_unchanged_model_gives_the_same_message_as_its_mapping() -> None:
    from_model = SomEnvelope.create(
        "story.context", StoryContext.model_validate(STORY), settings=SETTINGS
    )
    assert from_model.payload == StoryContext.model_validate(STORY)
    assert orjson.loads(from_model.to_json())["payload"] == STORY
    assert ek.check(from_model.to_json(), spec="som").ok


@pytest.mark.parametrize("key", [1, None, ("com", "acme"), b"com.acme.x"])
def test_an_extension_key_that_is_not_a_string_is_refused(key: Any) -> None:
    with pytest.raises(ProducerError, match="is not a string") as refused:
        SomEnvelope.create("story.context", STORY, settings=SETTINGS, extensions={key: 1})
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("json.invalid", "/extensions")
    ]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (object(), "/extensions/com.acme.x"),
        ({"when": datetime(2026, 9, 11, tzinfo=timezone.utc)}, "/extensions/com.acme.x/when"),
        ([UUID(int=1)], "/extensions/com.acme.x/0"),
        ({1: "one"}, "/extensions/com.acme.x"),
        ({"a": {"b", "c"}}, "/extensions/com.acme.x/a"),
        ("\ud800", "/extensions/com.acme.x"),
        ({"\udfff": 1}, "/extensions/com.acme.x"),
    ],
)
def test_an_extension_value_that_is_not_json_is_refused_at_create(value: Any, where: str) -> None:
    with pytest.raises(ProducerError, match=f"^{re.escape(where)}: "):
        SomEnvelope.create(
            "story.context", STORY, settings=SETTINGS, extensions={"com.acme.x": value}
        )


def test_a_payload_value_that_is_not_json_is_refused_at_create() -> None:
    with pytest.raises(
        ProducerError, match=r"^/payload/when: a value of type datetime is not JSON"
    ):
        SomEnvelope.create(
            "asset.ingested", {"when": datetime.now()}, settings=SETTINGS, allow_unknown=True
        )
    with pytest.raises(ProducerError, match=r"^/payload/slug: "):
        SomEnvelope.create("story.context", {**STORY, "slug": "caf\udce9"}, settings=SETTINGS)
    story = StoryContext.model_validate(STORY).model_copy(update={"headline": object()})
    with pytest.raises(
        ProducerError, match=r"^/payload/headline: a value of type object is not JSON"
    ):
        SomEnvelope.create("story.context", story, settings=SETTINGS)


def test_tuples_and_mappings_are_json_arrays_and_objects() -> None:
    from types import MappingProxyType

    env = SomEnvelope.create(
        "story.context",
        STORY,
        settings=SETTINGS,
        extensions=MappingProxyType({"com.acme.x": (1, MappingProxyType({"a": [2.5, None]}))}),
    )
    assert env.extensions == {"com.acme.x": [1, {"a": [2.5, None]}]}
    assert ek.check(env.to_json(), spec="som").ok


# --- typed producing ---------------------------------------------------------------------------

FAMILY_EXAMPLES: dict[str, tuple[str, type[FamilyPayload]]] = {
    "story.context": ("story-context/tags.json", StoryContext),
    "telling.started": ("telling/started.json", TellingEvent),
    "link.committed": ("link/committed.json", LinkEvent),
    "delivery.media_available": ("delivery/media-available.json", DeliveryMediaAvailable),
    "system.audit": ("system-audit/suppressed.json", SystemAudit),
    "skill.warning.raised": ("skill-warning/raised.json", SkillWarning),
}


@pytest.mark.parametrize("message_type", FAMILY_EXAMPLES)
def test_a_family_model_gives_its_message_type(message_type: str) -> None:
    path, model = FAMILY_EXAMPLES[message_type]
    payload = model.model_validate_json((DATA / "examples" / path).read_bytes())
    assert message_type_of(payload) == message_type
    env = SomEnvelope.create(payload=payload, settings=SETTINGS)
    assert env.message_type == message_type
    assert env.topic == f"som.{message_type}"
    assert env.payload == payload
    assert ek.check(env.to_json(), spec="som").ok
    # The typed parser of that family takes the message back.
    typed: type[SomEnvelope[Any]] = SomEnvelope[model]  # type: ignore[valid-type]
    assert typed.model_validate_json(env.to_json()) == env


def test_known_message_types_are_the_literal() -> None:
    assert frozenset(get_args(KnownMessageType)) == KNOWN_MESSAGE_TYPES
    assert set(PAYLOAD_MODELS) == KNOWN_MESSAGE_TYPES


def test_an_unknown_message_type_is_refused_unless_allowed() -> None:
    with pytest.raises(ProducerError, match=r"did you mean 'story\.context'") as refused:
        SomEnvelope.create("story.contxt", STORY, settings=SETTINGS)  # type: ignore[call-overload]
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("message_type.unknown", "/message_type")
    ]
    with pytest.raises(ProducerError, match=r"message_type\.unknown"):
        SomEnvelope.create("asset.ingested", {"a": 1}, settings=SETTINGS, allow_unknown=False)
    env = SomEnvelope.create("asset.ingested", {"a": 1}, settings=SETTINGS, allow_unknown=True)
    assert env.payload == UnvalidatedPayload({"a": 1})
    verdict = ek.check(env.to_json(), spec="som")
    assert verdict.ok
    assert [w.rule for w in verdict.warnings] == ["payload.unvalidated"]
    # Allowing unknown families does not change a known one: still validated.
    with pytest.raises(ProducerError, match="story-context"):
        SomEnvelope.create("story.context", {"a": 1}, settings=SETTINGS, allow_unknown=True)


def test_a_refusal_carries_its_violations() -> None:
    bad = {**STORY, "headline": 5, "slug": 3}
    with pytest.raises(ProducerError) as refused:
        SomEnvelope.create("story.context", bad, settings=SETTINGS, message_id="nope")
    found = {(v.rule, v.pointer) for v in refused.value.violations}
    assert found == {
        ("envelope.format.uuid", "/message_id"),
        ("story-context.type", "/payload/headline"),
        ("story-context.type", "/payload/slug"),
    }
    assert isinstance(refused.value.__cause__, ValidationError)
    # The same rules and pointers check reports for the message a consumer would receive.
    with pytest.raises(ProducerError) as without_system:
        SomEnvelope.create("story.context", STORY)
    assert [(v.rule, v.pointer) for v in without_system.value.violations] == [
        ("envelope.required", "/originating_system")
    ]


@pytest.mark.parametrize(
    ("keywords", "rule", "pointer"),
    [
        ({"topic": "story.context"}, "envelope.pattern", "/topic"),
        (
            {"extensions": {"vendor_field": 1}},
            "envelope.additionalProperties",
            "/extensions/vendor_field",
        ),
        ({"timestamp": "2026-09-11T16:41:00"}, "envelope.format.date-time", "/timestamp"),
        ({"timestamp": datetime(2026, 9, 11, 16, 41)}, "envelope.format.date-time", "/timestamp"),
        ({"correlation_id": "c-1"}, "envelope.format.uuid", "/correlation_id"),
        ({"causation_id": "c-1"}, "envelope.format.uuid", "/causation_id"),
    ],
)
def test_every_content_refusal_names_its_rule(
    keywords: dict[str, Any], rule: str, pointer: str
) -> None:
    with pytest.raises(ProducerError) as refused:
        SomEnvelope.create("story.context", STORY, settings=SETTINGS, **keywords)
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [(rule, pointer)]


def test_without_a_message_type_the_payload_must_be_a_family_model() -> None:
    for payload in ({"a": 1}, UnvalidatedPayload({"a": 1}), None):
        with pytest.raises(ProducerError, match="message_type") as refused:
            SomEnvelope.create(payload=payload, settings=SETTINGS)  # type: ignore[call-overload]
        assert [(v.rule, v.pointer) for v in refused.value.violations] == [
            ("envelope.required", "/message_type")
        ]
    with pytest.raises(ProducerError) as no_payload:
        SomEnvelope.create("story.context", settings=SETTINGS)  # type: ignore[call-overload]
    assert [(v.rule, v.pointer) for v in no_payload.value.violations] == [
        ("envelope.required", "/payload")
    ]


def test_follow_up_takes_explicit_keywords() -> None:
    parameters = inspect.signature(SomEnvelope.follow_up).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    created = inspect.signature(SomEnvelope.create).parameters
    keywords = {name for name, p in created.items() if p.kind is p.KEYWORD_ONLY}
    assert keywords == {name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    story = SomEnvelope.create(payload=StoryContext.model_validate(STORY), settings=SETTINGS)
    with pytest.raises(TypeError, match="topik"):
        story.follow_up("skill.warning.raised", WARNING, topik="som.x")  # type: ignore[call-overload]
    # Given explicitly, the lifecycle ids are kept; otherwise they continue this message.
    other = "0199a1c4-0000-7000-8000-000000000911"
    moved = story.follow_up(
        payload=SkillWarning.model_validate(WARNING), settings=SETTINGS, correlation_id=other
    )
    assert (moved.correlation_id, moved.causation_id) == (other, story.message_id)


class _UsersEnvelope(SomEnvelope):
    """A user's subclass, still generic in its payload."""


@pytest.mark.parametrize("any_", [Any, typing_extensions.Any], ids=["typing", "typing_extensions"])
@pytest.mark.parametrize("envelope", [SomEnvelope, _UsersEnvelope], ids=["SomEnvelope", "subclass"])
def test_an_envelope_of_any_payload_is_the_plain_envelope(envelope: Any, any_: Any) -> None:
    # It refused every message ("this envelope takes Any"), and on Python 3.10, where `Any` is
    # no class, took the payload as a dict and failed with AttributeError; a subclass's and
    # typing_extensions' `Any` (its own class on 3.10) did so after SomEnvelope's was fixed.
    assert envelope[any_] is envelope
    story = SomEnvelope.create(payload=StoryContext.model_validate(STORY), settings=SETTINGS)
    unknown = SomEnvelope.create("asset.ingested", {"a": 1}, settings=SETTINGS, allow_unknown=True)
    for sent in (story, unknown):
        raw = sent.to_json()
        for read in (
            envelope[any_].model_validate_json(raw),
            envelope[any_].model_validate(json.loads(raw)),
        ):
            assert type(read.payload) is type(sent.payload)
            assert read.to_json() == raw
    with pytest.raises(ValidationError) as refused:
        envelope[any_].model_validate({**json.loads(story.to_json()), "payload": {"a": 1}})
    assert ("story-context.required", "/payload/story_id") in {
        (v.rule, v.pointer) for v in ek.violations(refused.value, model=envelope)
    }


def test_a_typed_envelope_refuses_another_family() -> None:
    story = SomEnvelope.create(payload=StoryContext.model_validate(STORY), settings=SETTINGS)
    unknown = SomEnvelope.create("asset.ingested", {"a": 1}, settings=SETTINGS, allow_unknown=True)
    for typed, raw in (
        (SomEnvelope[TellingEvent], story.to_json()),
        (SomEnvelope[StoryContext], unknown.to_json()),
        (SomEnvelope[UnvalidatedPayload], story.to_json()),
    ):
        with pytest.raises(ValidationError) as refused:
            typed.model_validate_json(raw)
        assert [(v.rule, v.pointer) for v in ek.violations(refused.value, model=typed)] == [
            ("payload.family_unexpected", "/payload")
        ]
    assert SomEnvelope[UnvalidatedPayload].model_validate_json(unknown.to_json()) == unknown
    either = SomEnvelope[StoryContext | TellingEvent]
    assert either.model_validate_json(story.to_json()) == story
    # Producing through a typed class refuses the same way; following up from one does not.
    with pytest.raises(ProducerError, match=r"payload\.family_unexpected"):
        SomEnvelope[TellingEvent].create("story.context", STORY, settings=SETTINGS)
    typed_story = SomEnvelope[StoryContext].create("story.context", STORY, settings=SETTINGS)
    reply = typed_story.follow_up("skill.warning.raised", WARNING, settings=SETTINGS)
    assert type(reply) is SomEnvelope
    assert isinstance(reply.payload, SkillWarning)
