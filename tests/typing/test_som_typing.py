"""Checked by mypy --strict (it is on mypy's path): SOM payload access is typed per family.

Each `# type: ignore[code]` marks a line that must be a type error; mypy's warn_unused_ignores
fails the type check if one of them stops being an error. pytest also runs the file, so every
statement here is real code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typing_extensions import Unpack, assert_type

import envelopekit as ek
from envelopekit._compat import MISSING
from envelopekit.som import (
    KNOWN_MESSAGE_TYPES,
    DeliveryMediaAvailable,
    FamilyPayload,
    KnownMessageType,
    LifecyclePhase,
    LinkEvent,
    OriginatingSystem,
    ProducingKeywords,
    SkillWarning,
    SomEnvelope,
    StoryContext,
    StoryType,
    SystemAudit,
    TellingEvent,
    TellingMessageType,
    UnvalidatedPayload,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "som" / "examples"
SYSTEM = OriginatingSystem(system_id="ncs-nyc-01", system_type="ncs")


def _story() -> StoryContext:
    return StoryContext(
        story_id="s-1",
        slug="S",
        headline="Headline",
        story_type="PLANNED",
        sequence_number=1,
        updated_at="2026-09-11T16:41:00Z",
    )


def _telling() -> TellingEvent:
    return TellingEvent.model_validate_json((DATA / "telling/started.json").read_bytes())


def _received(env: SomEnvelope) -> SomEnvelope:
    """``env`` as a consumer parses it: typed by nothing but the envelope."""
    return SomEnvelope.model_validate_json(env.to_json())


def _runtime_message_type() -> str:
    return "story.context"


def test_the_payload_is_the_union_of_the_families() -> None:
    env = _received(SomEnvelope.create("story.context", _story(), originating_system=SYSTEM))
    assert_type(env, SomEnvelope)
    assert_type(env.payload, FamilyPayload | UnvalidatedPayload)
    assert_type(env.message_type, str)
    assert_type(env.timestamp, str)
    assert_type(env.originating_system, OriginatingSystem)
    # Family members need narrowing first.
    assert env.payload.headline == "Headline"  # type: ignore[union-attr]


def test_isinstance_narrows_the_payload() -> None:
    env = _received(SomEnvelope.create("story.context", _story(), originating_system=SYSTEM))
    payload = env.payload
    if isinstance(payload, StoryContext):
        assert_type(payload.headline, str)
        assert_type(payload.sequence_number, int)
        assert payload.headline == "Headline"
    else:
        pytest.fail("not narrowed")


def test_match_narrows_every_family() -> None:
    seen: list[str] = []
    envelopes: list[SomEnvelope] = [
        SomEnvelope.create("story.context", _story(), originating_system=SYSTEM),
        SomEnvelope.create("telling.started", _telling(), originating_system=SYSTEM),
        SomEnvelope.create(
            "asset.ingested", {"a": 1}, originating_system=SYSTEM, allow_unknown=True
        ),
    ]
    for env in envelopes:
        match env.payload:
            case StoryContext() as story:
                seen.append(story.story_type)
            case TellingEvent() as telling:
                assert_type(telling.message_type, TellingMessageType)
                seen.append(telling.link_id)
            case LinkEvent() | DeliveryMediaAvailable() | SystemAudit() | SkillWarning():
                seen.append("other family")
            case UnvalidatedPayload() as unknown:
                assert_type(unknown.root, dict[str, Any])
                seen.append(str(unknown.root["a"]))
    assert seen == ["PLANNED", _telling().link_id, "1"]


def test_payload_of_narrows_on_the_message_type_literal() -> None:
    env = _received(SomEnvelope.create("telling.started", _telling(), originating_system=SYSTEM))
    if env.message_type == "telling.started":
        telling = env.payload_of("telling.started")
        assert_type(telling, TellingEvent)
        assert_type(telling.exposure_start, str | MISSING)
    any_type: str = env.message_type
    assert_type(env.payload_of(any_type), FamilyPayload | UnvalidatedPayload)
    with pytest.raises(ValueError, match="carries"):
        env.payload_of("story.context")


def test_payload_as_returns_the_family_asked_for() -> None:
    env = _received(SomEnvelope.create("story.context", _story(), originating_system=SYSTEM))
    story = env.payload_as(StoryContext)
    assert_type(story, StoryContext)
    assert_type(story.assets, list[Any] | MISSING)  # type: ignore[assert-type]
    with pytest.raises(TypeError):
        env.payload_as(TellingEvent)


def test_fields_are_typed_and_construction_is_checked() -> None:
    story = _story()
    assert_type(story.story_type, StoryType)
    phase = story.lifecycle.phase if story.lifecycle is not MISSING else None
    assert_type(phase, LifecyclePhase | None)
    with pytest.raises(ValidationError):
        StoryContext(
            story_id="s-1",
            slug="S",
            headline="H",
            story_type="LIVE",  # type: ignore[arg-type]
            sequence_number=1,
            updated_at="2026-09-11T16:41:00Z",
        )
    with pytest.raises(ValidationError):
        OriginatingSystem(system_id="x", system_type="newsroom")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        StoryContext(  # type: ignore[call-arg]
            slug="S",
            headline="H",
            story_type="PLANNED",
            sequence_number=1,
            updated_at="2026-09-11T16:41:00Z",
        )


def test_check_is_typed_for_som() -> None:
    raw = json.dumps(
        {
            "som_version": "1.0.0",
            "message_id": "01920000-0000-7000-8000-000000000001",
            "correlation_id": "01920000-0000-7000-8000-000000000002",
            "message_type": "story.context",
            "timestamp": "2026-09-11T16:41:00Z",
            "originating_system": {"system_id": "k", "system_type": "custom"},
            "topic": "som.story.context",
            "payload": _story().model_dump(),
        }
    )
    verdict = ek.check(raw, spec="som")
    assert_type(verdict, ek.Verdict[SomEnvelope])
    assert verdict.envelope is not None
    assert_type(verdict.envelope.payload, FamilyPayload | UnvalidatedPayload)


def _warning() -> SkillWarning:
    return SkillWarning.model_validate_json((DATA / "skill-warning/raised.json").read_bytes())


def test_create_from_a_family_model_is_typed_by_it() -> None:
    env = SomEnvelope.create(payload=_story(), originating_system=SYSTEM)
    assert_type(env, SomEnvelope[StoryContext])
    assert_type(env.payload, StoryContext)
    assert_type(env.payload.headline, str)
    assert env.message_type == "story.context"
    telling = SomEnvelope.create(payload=_telling(), originating_system=SYSTEM)
    assert_type(telling, SomEnvelope[TellingEvent])
    assert_type(telling.payload.message_type, TellingMessageType)
    # The literal types a mapping payload as well.
    mapped = SomEnvelope.create("story.context", _story().model_dump(), originating_system=SYSTEM)
    assert_type(mapped, SomEnvelope[StoryContext])
    assert mapped == SomEnvelope.model_validate(mapped.model_dump())
    link = SomEnvelope.create(
        "link.committed",
        LinkEvent.model_validate_json((DATA / "link/committed.json").read_bytes()),
        originating_system=SYSTEM,
    )
    assert_type(link, SomEnvelope[LinkEvent])
    # A typed envelope goes wherever a SomEnvelope does (the payload type is covariant).
    plain: SomEnvelope = env
    assert plain.is_validated
    # A family model under another family's literal is a type error (and a ProducerError).
    with pytest.raises(ek.ProducerError):
        SomEnvelope.create("telling.started", _story(), originating_system=SYSTEM)  # type: ignore[call-overload]


class Stories(SomEnvelope[StoryContext]):
    """A service's own envelope class, typed by one family: `create` returns it."""


class Tellings(SomEnvelope[TellingEvent]):
    """Another service's, typed by another family."""


def test_create_on_a_subclass_is_typed_by_it() -> None:
    # Both returned the subclass at run time; both checkers typed them `SomEnvelope[X]`.
    own = Stories.create(payload=_story(), originating_system=SYSTEM)
    assert_type(own, Stories)
    assert type(own) is Stories
    assert_type(own.payload, StoryContext)
    mapped = Stories.create("story.context", _story().model_dump(), originating_system=SYSTEM)
    assert_type(mapped, Stories)
    assert type(mapped) is Stories
    telling = Tellings.create(payload=_telling(), originating_system=SYSTEM)
    assert_type(telling, Tellings)
    assert type(telling) is Tellings
    # The plain class, parametrised or not, is typed as it was.
    typed = SomEnvelope[StoryContext].create(payload=_story(), originating_system=SYSTEM)
    assert_type(typed, SomEnvelope[StoryContext])
    plain = SomEnvelope.create(payload=_story(), originating_system=SYSTEM)
    assert_type(plain, SomEnvelope[StoryContext])
    assert type(plain) is SomEnvelope


def test_typed_parsing() -> None:
    raw = SomEnvelope.create(payload=_story(), originating_system=SYSTEM).to_json()
    story = SomEnvelope[StoryContext].model_validate_json(raw)
    assert_type(story, SomEnvelope[StoryContext])
    assert_type(story.payload.sequence_number, int)
    with pytest.raises(ValidationError):
        SomEnvelope[TellingEvent].model_validate_json(raw)


def test_message_types_are_a_literal() -> None:
    known: KnownMessageType = "skill.warning.raised"
    assert known in KNOWN_MESSAGE_TYPES
    typo: KnownMessageType = "story.contxt"  # type: ignore[assignment]
    assert typo not in KNOWN_MESSAGE_TYPES


def test_an_unknown_message_type_needs_allow_unknown() -> None:
    with pytest.raises(ek.ProducerError) as refused:
        SomEnvelope.create("story.contxt", _story(), originating_system=SYSTEM)  # type: ignore[call-overload]
    assert refused.value.violations[0].rule == "message_type.unknown"
    unknown = SomEnvelope.create(
        "asset.ingested", {"a": 1}, originating_system=SYSTEM, allow_unknown=True
    )
    assert_type(unknown, SomEnvelope)
    # A message type known only at run time says which way it goes.
    chosen = _runtime_message_type()
    dynamic = SomEnvelope.create(chosen, _story(), originating_system=SYSTEM, allow_unknown=False)
    assert_type(dynamic, SomEnvelope)
    # Without `allow_unknown`, a `str` could be a typo: a type error (run time still checks).
    assert SomEnvelope.create(chosen, _story(), originating_system=SYSTEM)  # type: ignore[call-overload]


def test_follow_up_is_typed_and_its_keywords_checked() -> None:
    env = SomEnvelope.create(payload=_story(), originating_system=SYSTEM)
    reply = env.follow_up(payload=_warning(), originating_system=SYSTEM)
    assert_type(reply, SomEnvelope[SkillWarning])
    assert reply.causation_id == env.message_id
    audit = env.follow_up(
        "skill.warning.raised", _warning().model_dump(), originating_system=SYSTEM
    )
    assert_type(audit, SomEnvelope[SkillWarning])
    with pytest.raises(TypeError):
        env.follow_up(payload=_warning(), originating_sytem=SYSTEM)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        SomEnvelope.create(payload=_story(), correlation=env.correlation_id)  # type: ignore[call-overload]


def _publish(**options: Unpack[ProducingKeywords]) -> SomEnvelope[StoryContext]:
    return SomEnvelope.create(payload=_story(), **options)


def test_producing_keywords_can_be_forwarded_typed() -> None:
    env = _publish(originating_system=SYSTEM, topic="som.story.context.desk")
    assert_type(env, SomEnvelope[StoryContext])
    assert env.topic == "som.story.context.desk"
    with pytest.raises(TypeError):
        _publish(originating_system=SYSTEM, topik="som.x")  # type: ignore[call-arg]


def test_a_som_subscriber_s_family_is_a_payload_model() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import som_subscriber

    def on_story(envelope: SomEnvelope, story: StoryContext) -> None: ...

    def on_number(envelope: SomEnvelope, number: int) -> None: ...

    broker = RedisBroker()
    som_subscriber(broker, "a", on_story, family=StoryContext)
    with pytest.raises(TypeError):
        som_subscriber(broker, "b", on_number, family=int)  # type: ignore[type-var]


def test_a_som_subscriber_of_several_families_types_the_payload_as_either() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import som_subscriber

    def on_either(envelope: SomEnvelope, event: TellingEvent | LinkEvent) -> None: ...

    def on_story(envelope: SomEnvelope, story: StoryContext) -> None: ...

    def on_any(envelope: SomEnvelope, payload: Any) -> None: ...

    broker = RedisBroker()
    som_subscriber(broker, "a", on_either, family=(TellingEvent, LinkEvent))
    som_subscriber(broker, "b", on_either, family=(TellingEvent, LinkEvent, SystemAudit))  # type: ignore[arg-type]
    som_subscriber(broker, "c", on_story, family=(StoryContext, TellingEvent))  # type: ignore[arg-type]
    som_subscriber(broker, "d", on_any, family=TellingEvent | LinkEvent)


class _Desk(SomEnvelope[StoryContext]):
    desk: str = "news"


def test_a_som_subscriber_s_handler_gets_the_user_s_envelope_class() -> None:
    from faststream.redis import RedisBroker

    from envelopekit.faststream import som_subscriber

    def on_desk(envelope: _Desk, story: StoryContext) -> None: ...

    def on_desk_any(envelope: _Desk, payload: Any) -> None: ...

    broker = RedisBroker()
    som_subscriber(broker, "a", on_desk, envelope_model=_Desk, family=StoryContext)
    som_subscriber(broker, "b", on_desk_any, envelope_model=_Desk)
    # A handler of the user's class with no class given would get a plain SomEnvelope.
    som_subscriber(broker, "e", on_desk, family=StoryContext)  # type: ignore[arg-type]
    som_subscriber(broker, "f", on_desk, envelope_model=SomEnvelope, family=StoryContext)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        som_subscriber(broker, "g", lambda e, p: None, envelope_model=StoryContext)  # type: ignore[type-var]
