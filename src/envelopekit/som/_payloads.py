"""Payload dispatch: the envelope's ``message_type`` alone selects the payload model.

``message_type`` is the only parsing discriminator (SOM conformance §2): never the topic, the
publisher, or the payload's shape (a ``story.context`` payload has no ``message_type`` of its
own). A callable discriminator cannot see the envelope, so the envelope's ``payload`` validator
publishes the already-validated ``message_type`` in a context variable for the duration of the
payload's validation; the discriminator reads it there. Outside validation (serialisation) the
discriminator derives the tag from the payload model instance.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Annotated, Any, ClassVar, Final, Literal, TypeAlias, Union

from pydantic import ConfigDict, Discriminator, RootModel, Tag

from .._failfast import passes_absent
from .._text import TextChecked
from ._delivery import DeliveryMediaAvailable
from ._link import LinkEvent
from ._skill_warning import SkillWarning
from ._story_context import StoryContext
from ._system_audit import SystemAudit
from ._telling import TellingEvent
from ._types import JsonObject

__all__ = [
    "FAMILY_BY_MESSAGE_TYPE",
    "KNOWN_MESSAGE_TYPES",
    "PAYLOAD_MODELS",
    "UNVALIDATED",
    "FamilyPayload",
    "KnownMessageType",
    "SomPayload",
    "UnvalidatedPayload",
    "closest_known_type",
    "dispatched",
    "message_type_of",
]


class UnvalidatedPayload(TextChecked, RootModel[JsonObject]):
    """The payload of a `message_type` SOM 1.0 publishes no schema for.

    The JSON object is kept as parsed (`.root`), every member in its order, and re-emitted as
    the Python reference encoder writes it (`1e2` as `100.0`); only NaN and Infinity are refused
    in it (`number.non_finite`). The envelope around it is still fully checked, and the verdict
    carries a `payload.unvalidated` warning. Conformant consumers ignore message types they do
    not handle (SOM conformance §5).
    """

    model_config = ConfigDict(frozen=True)
    # The envelope's payload: what it refuses read alone is the envelope schema's rule.
    __schema_name__: ClassVar[str] = "envelope"

    def __getitem__(self, key: str) -> Any:
        return self.root[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The member ``key`` of the payload, or ``default``."""
        return self.root.get(key, default)


FamilyPayload: TypeAlias = (
    StoryContext | TellingEvent | LinkEvent | DeliveryMediaAvailable | SystemAudit | SkillWarning
)
"""A payload of one of the seven SOM 1.0 schemas' families."""

KnownMessageType: TypeAlias = Literal[
    "story.context",
    "telling.started",
    "telling.ended",
    "telling.exposed",
    "link.committed",
    "link.gate_changed",
    "link.withdrawn",
    "delivery.media_available",
    "system.audit",
    "skill.warning.raised",
]
"""The ten ``message_type`` values with a SOM 1.0 payload schema (what the IDE completes)."""

PAYLOAD_MODELS: Final[dict[str, type[FamilyPayload]]] = {
    "story.context": StoryContext,
    "telling.started": TellingEvent,
    "telling.ended": TellingEvent,
    "telling.exposed": TellingEvent,
    "link.committed": LinkEvent,
    "link.gate_changed": LinkEvent,
    "link.withdrawn": LinkEvent,
    "delivery.media_available": DeliveryMediaAvailable,
    "system.audit": SystemAudit,
    "skill.warning.raised": SkillWarning,
}
"""The ten ``message_type`` values with a SOM 1.0 payload schema, and their models."""

KNOWN_MESSAGE_TYPES: Final = frozenset(PAYLOAD_MODELS)
"""The ``message_type`` values whose payload is validated."""


def closest_known_type(message_type: str, cutoff: float = 0.6) -> str | None:
    """The known ``message_type`` an unknown one is likely a typo of (``story.contxt``), if any.

    Args:
        message_type: the unknown type.
        cutoff: how alike the two must be (``difflib``'s ratio, 0 to 1): the default finds a
            hint for an error; a typo of a character or two is above 0.9, where a family of
            one's own that shares a word with a known one (``telling.paused``) is not.
    """
    close = difflib.get_close_matches(message_type, PAYLOAD_MODELS, n=1, cutoff=cutoff)
    return close[0] if close else None


FAMILY_BY_MESSAGE_TYPE: Final[dict[str, str]] = {
    message_type: model.__schema_name__ for message_type, model in PAYLOAD_MODELS.items()
}
"""``message_type`` -> the schema that validates its payload (``"telling-event"`` ...)."""

UNVALIDATED: Final = "unvalidated"

_SINGLE_TYPE: Final[dict[type, str]] = {
    StoryContext: "story.context",
    DeliveryMediaAvailable: "delivery.media_available",
    SystemAudit: "system.audit",
    SkillWarning: "skill.warning.raised",
}

_FAMILY_MODELS: Final = (*dict.fromkeys(PAYLOAD_MODELS.values()),)

# The envelope's message_type while its payload is being validated; None otherwise.
_validating: ContextVar[str | None] = ContextVar("envelopekit_som_message_type", default=None)


def message_type_of(payload: FamilyPayload) -> str:
    """The ``message_type`` a family payload model travels under.

    Four families have one ``message_type`` each; a telling or link event names its own.
    """
    if isinstance(payload, (TellingEvent, LinkEvent)):
        return payload.message_type
    # isinstance, not the exact type: a subclass of a family model travels as its family.
    return next(tag for kind, tag in _SINGLE_TYPE.items() if isinstance(payload, kind))


@passes_absent
def _payload_tag(value: Any) -> str:
    message_type = _validating.get()
    if message_type is not None:
        return message_type if message_type in PAYLOAD_MODELS else UNVALIDATED
    # Serialising (or a model instance outside an envelope's validation).
    kind = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is TellingEvent or kind is LinkEvent:
        tag: str = value.message_type
        return tag
    found = _SINGLE_TYPE.get(kind)  # pyright: ignore[reportUnknownArgumentType]
    if found is not None or kind is UnvalidatedPayload:
        return found or UNVALIDATED
    # A user's subclass of a family model travels as its family (else pydantic warns that it
    # expected an UnvalidatedPayload, and writes it member by member).
    return message_type_of(value) if isinstance(value, _FAMILY_MODELS) else UNVALIDATED


SomPayload: TypeAlias = Annotated[
    (
        Annotated[StoryContext, Tag("story.context")]
        | Annotated[TellingEvent, Tag("telling.started")]
        | Annotated[TellingEvent, Tag("telling.ended")]
        | Annotated[TellingEvent, Tag("telling.exposed")]
        | Annotated[LinkEvent, Tag("link.committed")]
        | Annotated[LinkEvent, Tag("link.gate_changed")]
        | Annotated[LinkEvent, Tag("link.withdrawn")]
        | Annotated[DeliveryMediaAvailable, Tag("delivery.media_available")]
        | Annotated[SystemAudit, Tag("system.audit")]
        | Annotated[SkillWarning, Tag("skill.warning.raised")]
        | Annotated[UnvalidatedPayload, Tag(UNVALIDATED)]
    ),
    Discriminator(_payload_tag),
]
"""An envelope's payload: the family model its ``message_type`` selects, or
:class:`UnvalidatedPayload` for a ``message_type`` with no SOM 1.0 schema."""


def dispatched(choices: Mapping[str, Any]) -> Any:
    """A payload type chosen as :data:`SomPayload` chooses: ``message_type`` -> its type.

    Its tags are ``message_type`` values and ``"unvalidated"`` for the others; the envelope
    refuses another ``message_type`` before the payload is read (``payload.family_unexpected``).
    """
    members = tuple(Annotated[kind, Tag(tag)] for tag, kind in choices.items())
    return Annotated[Union[members], Discriminator(_payload_tag)]  # noqa: UP007


def validating_as(message_type: str) -> Any:
    """Publish ``message_type`` to the discriminator; returns the token to reset it with."""
    return _validating.set(message_type)


def done_validating(token: Any) -> None:
    """Undo :func:`validating_as`."""
    _validating.reset(token)
