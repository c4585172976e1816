"""A SOM envelope instance given to another envelope class is read as the message it is.

``SomEnvelope[StoryContext].model_validate(envelope)`` of a plain ``SomEnvelope`` refused it
with ``envelope.additionalProperties`` at ``/actors`` and ``/context``: pydantic read the
instance of the generic class by its attribute names, where the wire names are ``_actors``
and ``@context``. A user's subclass refused it whole (``envelope.type``), except through
``from_attributes`` (FastAPI's ``response_model``), which dropped ``_actors`` and ``@context``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ConfigDict, ValidationError

import envelopekit as ek
from envelopekit.som import SomEnvelope, StoryContext, TellingEvent
from tests._instances import disagreements, doors, part_disagreements
from tests.som._corpus import EXAMPLES, positive_envelope

STORY: dict[str, Any] = {
    **positive_envelope(EXAMPLES / "story-context/tags.json"),
    # The members whose wire names are no Python names: read back by those, never by the
    # attributes' names.
    "_actors": {"p1": {"name": "Ada", "role": "producer"}},
    "@context": "https://schema.org",
}
TELLING: dict[str, Any] = positive_envelope(EXAMPLES / "telling/started.json")


class Stories(SomEnvelope[StoryContext]):
    """A user's subclass of the typed envelope."""


class Tellings(SomEnvelope[TellingEvent]):
    """A user's subclass of another family's envelope."""


class Revalidated(SomEnvelope[StoryContext]):
    """A user's subclass that revalidates even its own instances."""

    model_config = ConfigDict(revalidate_instances="always")


def test_an_envelope_instance_is_read_as_its_message_by_every_door() -> None:
    story = SomEnvelope.model_validate(STORY)
    telling = SomEnvelope.model_validate(TELLING)
    instances = [
        story,
        telling,
        SomEnvelope[StoryContext].model_validate(STORY),
        SomEnvelope[TellingEvent].model_validate(TELLING),
        Stories.model_validate(STORY),
        Tellings.model_validate(TELLING),
    ]
    targets = [SomEnvelope, SomEnvelope[StoryContext], SomEnvelope[TellingEvent]]
    targets += [Stories, Tellings, Revalidated]
    pairs = [(target, instance) for target in targets for instance in instances]
    assert disagreements(pairs) == []


@pytest.mark.parametrize("target", [SomEnvelope[TellingEvent], Tellings])
@pytest.mark.parametrize("door", ["model_validate", "type_adapter", "from_attributes", "held"])
def test_a_story_given_to_a_telling_envelope_is_refused_by_its_family_alone(
    target: Any, door: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        doors(target)[door](SomEnvelope.model_validate(STORY))
    found = ek.violations(caught.value, model=target)
    assert [(v.rule, v.pointer) for v in found] == [("payload.family_unexpected", "/payload")]


def test_a_class_that_revalidates_instances_reads_its_own_from_their_wire_names() -> None:
    own = Revalidated.model_validate(STORY)
    again = Revalidated.model_validate(own)
    assert again is not own
    assert again.to_json() == own.to_json()
    assert (again.actors, again.context) == (STORY["_actors"], STORY["@context"])


def test_an_instance_no_json_text_holds_is_refused_as_json_invalid() -> None:
    # `model_construct` validates nothing: a value no dump can write has no message to read.
    broken = SomEnvelope.model_construct(**SomEnvelope.model_validate(STORY).__dict__)
    object.__setattr__(broken, "topic", object())
    with pytest.raises(ValidationError) as caught:
        SomEnvelope[StoryContext].model_validate(broken)
    found = ek.violations(caught.value)
    assert [(v.rule, v.pointer) for v in found] == [("json.invalid", "")]
    # One it can write is read as that message: each value refused where it is.
    wrong = SomEnvelope.model_construct(**SomEnvelope.model_validate(STORY).__dict__)
    object.__setattr__(wrong, "topic", 7)
    with pytest.raises(ValidationError) as caught:
        Stories.model_validate(wrong)
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [
        ("envelope.type", "/topic")
    ]


class MyStory(StoryContext):
    """A user's subclass of a payload family."""


class MyStories(SomEnvelope[MyStory]):
    """A user's subclass of the envelope typed by it."""


TARGETS = [SomEnvelope[MyStory], MyStories, SomEnvelope, SomEnvelope[StoryContext]]


def _created(payload: object) -> SomEnvelope[StoryContext]:
    assert isinstance(payload, StoryContext)
    origin = SomEnvelope.model_validate(STORY).originating_system
    return SomEnvelope.create("story.context", payload, originating_system=origin)


def test_a_family_instance_in_a_dict_is_read_as_its_payload_by_every_door() -> None:
    # `SomEnvelope[MyStory]` given a dict whose payload is a `StoryContext` (a user building
    # the message by hand from a parsed one) refused it as `envelope.type` at /payload, though
    # `MyStory.model_validate(story)` alone reads it.
    story = SomEnvelope.model_validate(STORY)
    created = _created(story.payload)
    parts: list[Any] = [story.payload, created.payload, MyStory.model_validate(story.payload)]
    found: list[str] = []
    for target in TARGETS:
        for part in parts:
            found += part_disagreements(target, STORY, "payload", part)
    # Read as its wire data by a class that does not keep it: refused where its JSON is (the
    # family's own class keeps an instance as it is, as pydantic does).
    wrong = story.payload.model_copy(update={"headline": 7})
    for target in (SomEnvelope[MyStory], MyStories):
        found += part_disagreements(target, STORY, "payload", wrong)
    assert found == []
    with pytest.raises(ValidationError) as caught:
        MyStories.model_validate({**STORY, "payload": wrong})
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [
        ("story-context.type", "/payload/headline")
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("door", ["model_validate", "type_adapter", "held"])
def test_another_family_s_instance_in_a_dict_is_refused_as_by_the_family_s_own_class(
    target: Any, door: str
) -> None:
    # An instance of another schema is no payload of this one: refused by every class alike.
    members = {**STORY, "payload": SomEnvelope.model_validate(TELLING).payload}
    with pytest.raises(ValidationError) as caught:
        doors(target)[door](members)
    found = ek.violations(caught.value, model=target)
    assert [(v.rule, v.pointer) for v in found] == [("envelope.type", "/payload")]


@pytest.mark.parametrize("door", ["model_validate", "type_adapter", "from_attributes", "held"])
def test_an_envelope_instance_holding_a_family_instance_is_read_by_a_subclass_typed_class(
    door: str,
) -> None:
    made = _created(SomEnvelope.model_validate(STORY).payload)
    read = doors(MyStories)[door](made)
    assert isinstance(read, MyStories)
    assert type(read.payload) is MyStory
    assert read.to_json() == made.to_json()
