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
from tests._instances import disagreements, doors
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
