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
from typing_extensions import assert_type

import envelopekit as ek
from envelopekit._compat import MISSING
from envelopekit.som import (
    DeliveryMediaAvailable,
    FamilyPayload,
    LifecyclePhase,
    LinkEvent,
    OriginatingSystem,
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


def test_the_payload_is_the_union_of_the_families() -> None:
    env = SomEnvelope.create("story.context", _story(), originating_system=SYSTEM)
    assert_type(env.payload, FamilyPayload | UnvalidatedPayload)
    assert_type(env.message_type, str)
    assert_type(env.timestamp, str)
    assert_type(env.originating_system, OriginatingSystem)
    # Family members need narrowing first.
    assert env.payload.headline == "Headline"  # type: ignore[union-attr]


def test_isinstance_narrows_the_payload() -> None:
    env = SomEnvelope.create("story.context", _story(), originating_system=SYSTEM)
    payload = env.payload
    if isinstance(payload, StoryContext):
        assert_type(payload.headline, str)
        assert_type(payload.sequence_number, int)
        assert payload.headline == "Headline"
    else:
        pytest.fail("not narrowed")


def test_match_narrows_every_family() -> None:
    seen: list[str] = []
    for env in (
        SomEnvelope.create("story.context", _story(), originating_system=SYSTEM),
        SomEnvelope.create("telling.started", _telling(), originating_system=SYSTEM),
        SomEnvelope.create("asset.ingested", {"a": 1}, originating_system=SYSTEM),
    ):
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
    env = SomEnvelope.create("telling.started", _telling(), originating_system=SYSTEM)
    if env.message_type == "telling.started":
        telling = env.payload_of("telling.started")
        assert_type(telling, TellingEvent)
        assert_type(telling.exposure_start, str | MISSING)
    any_type: str = env.message_type
    assert_type(env.payload_of(any_type), FamilyPayload | UnvalidatedPayload)
    with pytest.raises(ValueError, match="carries"):
        env.payload_of("story.context")


def test_payload_as_returns_the_family_asked_for() -> None:
    env = SomEnvelope.create("story.context", _story(), originating_system=SYSTEM)
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
